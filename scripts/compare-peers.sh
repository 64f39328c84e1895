#!/usr/bin/env bash
# Run bwscope and peer tools on the same work, one after the other in the
# same run, and print ratios (bwscope / peer; >= 1.00 means bwscope is at
# least as fast). A benchmark, not a test: numbers depend on the machine
# and on what else it is doing, so every cell alternates the two tools
# ROUNDS times and compares best with best and median with median.
#
#   scripts/compare-peers.sh            # every section below
#   ROUNDS=5 scripts/compare-peers.sh
#   SECTIONS="cache ceilings" scripts/compare-peers.sh
#
# Sections: ceilings (L1 limits reached), cache (vs likwid-bench), times
# (suite wall times), threads (2 threads vs likwid-bench), latency (L1
# cycles, DRAM 4k vs 2M pages, random vs seq), memtype (thp vs regular,
# first-use cost, break-even), net (vs iperf3 on loopback), transfer (vs
# clpeak on an OpenCL device), reports (memcpy vs mbw). Each topic has its
# own script, scripts/compare-peers-<topic>.sh, callable alone.
#
# Needs the Debian packages of the peers: likwid, iperf3, clpeak (+ an
# OpenCL ICD such as pocl-opencl-icd), mbw; python3, jq. Builds bwscope
# --release.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
CPU=${CPU:-1}
SECTIONS=${SECTIONS:-"ceilings cache times threads latency memtype net transfer reports"}
cargo build --release -q
BW=target/release/bwscope
# Captured once: `cmd | grep -q` under pipefail fails when grep stops
# reading early (SIGPIPE), which would silently drop cells.
KERNELS_HERE=$("$BW" kernels)
LIKWID_TESTS=$(likwid-bench -a 2>/dev/null || true)
runs_here() { grep -q "^$1 .* yes\$" <<<"$KERNELS_HERE"; }

stats() { # values... -> "best median"
  python3 -c 'import sys,statistics as s; v=[float(x) for x in sys.argv[1:]]; print(max(v), s.median(v))' "$@"
}

bw_cell() { # kernel size -> "best median" GB/s
  "$BW" cache --kernel "$1" --sizes "$2" --cpus "$CPU" --json - 2>/dev/null |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["records"][0]; print(r["gbps"]["best"], r["gbps"]["median"])'
}

likwid_cell() { # test size -> GB/s (one likwid run, its ~1 s average)
  taskset -c "$CPU" likwid-bench -t "$1" -w "S0:${2}B:1" 2>/dev/null |
    awk '/^MByte\/s:/ {printf "%.3f\n", $2/1000}'
}

section_ceilings() {
  echo "== L1 ceilings: single thread, L1-resident (16 KiB), vs loads/stores per cycle x measured clock"
  local hz
  hz=$("$BW" info --json - | python3 -c 'import json,sys; print(json.load(sys.stdin)["clock_hz"])')
  printf "measured core clock: %.3f GHz\n" "$(python3 -c "print($hz/1e9)")"
  for kb in "seq_read_256_avx2 64" "seq_copy_256_avx2 64" "seq_write_256_avx2 32" "seq_read_512_avx512f 64" "seq_write_512_avx512f 32"; do
    set -- $kb
    runs_here "$1" || { echo "$1: not supported here"; continue; }
    read -r best med < <(bw_cell "$1" 16KiB)
    python3 -c "
hz=$hz; bpc=$2; best=$best; med=$med; lim=bpc*hz/1e9
print(f'{\"$1\":24s} best {best:7.1f} GB/s = {best/lim*100:5.1f} % of {bpc} B/cycle ({lim:.1f} GB/s); median {med/lim*100:5.1f} %')"
  done
}

section_cache() {
  echo "== cache/DRAM cells vs likwid-bench (taskset -c $CPU, -w S0:<size>B:1), $ROUNDS alternating rounds"
  echo "   columns: bwscope best/median | likwid best/median | ratio best, ratio median"
  local pairs="load:seq_read_64_scalar load_sse:seq_read_128_sse2 load_avx:seq_read_256_avx2 load_avx512:seq_read_512_avx512f
    store:seq_write_64_scalar store_sse:seq_write_128_sse2 store_avx:seq_write_256_avx2 store_avx512:seq_write_512_avx512f
    store_mem_avx:seq_write_256_nt_avx2 store_mem_avx512:seq_write_512_nt_avx512f
    copy:seq_copy_64_scalar copy_sse:seq_copy_128_sse2 copy_avx:seq_copy_256_avx2 copy_avx512:seq_copy_512_avx512f
    copy_mem_avx:seq_copy_256_nt_avx2 copy_mem_avx512:seq_copy_512_nt_avx512f"
  local sizes=${SIZES:-"16384 262144 8388608 1073741824"}
  printf "%-30s %10s %15s %15s %7s %7s\n" "likwid test / bwscope kernel" size bwscope likwid best med
  for size in $sizes; do
    for p in $pairs; do
      local t=${p%%:*} k=${p##*:}
      runs_here "$k" || continue
      grep -q "^$t " <<<"$LIKWID_TESTS" || continue
      local bb=() bm=() lk=()
      for _ in $(seq "$ROUNDS"); do
        read -r b m < <(bw_cell "$k" "${size}B")
        bb+=("$b"); bm+=("$m")
        lk+=("$(likwid_cell "$t" "$size")")
      done
      read -r bwb _ < <(stats "${bb[@]}")
      read -r _ bwm < <(stats "${bm[@]}")
      read -r lkb lkm < <(stats "${lk[@]}")
      python3 -c "
print(f'{\"$t / $k\":30s} {$size:>10d} {$bwb:7.1f}/{$bwm:<7.1f} {$lkb:7.1f}/{$lkm:<7.1f} {$bwb/$lkb:7.2f} {$bwm/$lkm:7.2f}')"
    done
  done
}

section_times() {
  echo "== suite wall times"
  local t0 t1
  t0=$(date +%s.%N); "$BW" cache --quick >/dev/null 2>&1; t1=$(date +%s.%N)
  python3 -c "print(f'bwscope cache --quick: {$t1-$t0:.1f} s (target <= 10 s)')"
  t0=$(date +%s.%N); "$BW" cache >/dev/null 2>&1; t1=$(date +%s.%N)
  python3 -c "print(f'bwscope cache (full default sweep): {$t1-$t0:.1f} s (target <= 120 s)')"
}

section_threads() { BWSCOPE=$BW scripts/compare-peers-threads.sh "$BW"; }
section_latency() { BWSCOPE=$BW scripts/compare-peers-latency.sh; }
section_memtype() { BWSCOPE=$BW scripts/compare-peers-memtype.sh; }
section_net() { BWSCOPE=$BW scripts/compare-peers-net.sh; }
section_transfer() { BWSCOPE=$BW scripts/compare-peers-transfer.sh; }
section_reports() { scripts/compare-peers-reports.sh "$BW"; }

for s in $SECTIONS; do
  "section_$s"
  echo
done
