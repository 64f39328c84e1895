#!/bin/bash
# aarch64 peers beside bwscope: tinymembench's NEON/ARM copies and fills
# (the tool bwscope's seed grew up with on ARM boards) and STREAM, where
# they are installed (neither is packaged by Debian: build them from
# source, put them on PATH or point TINYMEMBENCH= / STREAM= at them).
# A benchmark, not a test: run it on the ARM machine itself, quiet.
#
# tinymembench (github.com/ssvb/tinymembench, main.c): 32 MiB buffers,
# MB/s = 10^6 bytes copied or filled per second, best of up to 10 runs of
# >= 0.5 s. bwscope is run on the same work: a fill of 32 MiB
# (`gbps`), a copy of 32 MiB into 32 MiB (a 64 MiB working set,
# `payload_gbps` = bytes copied), best of its samples.
#
# STREAM (McCalpin): counts bytes read + written like bwscope (Copy = 16 B
# per element); compared with `bwscope threads` at the same thread count
# and total working set (two arrays of its "Array size" doubles).
#
# Usage: scripts/compare-peers-arm.sh [BWSCOPE=target/release/bwscope]
# Env: CPU (cpu for the single-thread runs), TINYMEMBENCH, STREAM.
set -euo pipefail
bw=${1:-${BWSCOPE:-target/release/bwscope}}
tmb=${TINYMEMBENCH:-$(command -v tinymembench || true)}
stream=${STREAM:-$(command -v stream || command -v stream_c.exe || true)}
cpu_args=()
[ -n "${CPU:-}" ] && cpu_args=(--cpus "$CPU")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# best GB/s of kernel K at SIZE from a fresh cache run; FIELD gbps or payload_gbps.
bw_best() {
  "$bw" cache --kernel "$1" --sizes "$2" "${cpu_args[@]}" --json "$work/c.json" >/dev/null 2>&1 || true
  python3 - "$work/c.json" "$1" "$3" <<'EOF'
import json, sys
try:
    rs = [r for r in json.load(open(sys.argv[1]))["records"] if r["kernel"] == sys.argv[2] and r["status"] == "ok"]
except (OSError, ValueError):
    rs = []
print(f'{rs[0][sys.argv[3]]["best"]:.2f}' if rs else "-")
EOF
}

tinymembench_section() {
  if [ -z "$tmb" ]; then
    echo "tinymembench: not installed (build github.com/ssvb/tinymembench; TINYMEMBENCH=path)"
    return 0
  fi
  local out="$work/tmb.txt"
  if [ -n "${CPU:-}" ]; then taskset -c "$CPU" "$tmb" >"$out" 2>&1; else "$tmb" >"$out" 2>&1; fi
  # tinymembench line -> bwscope kernel, size, field
  local pairs=(
    "NEON LDP/STP copy|seq_copy_256_neon|64MiB|payload_gbps"
    "NEON LD1/ST1 copy|seq_copy_128_neon|64MiB|payload_gbps"
    "NEON STP fill|seq_write_256_neon|32MiB|gbps"
    "NEON STNP fill|seq_write_256_nt_neon|32MiB|gbps"
    "ARM LDP/STP copy|seq_copy_128_scalar|64MiB|payload_gbps"
    "ARM STP fill|seq_write_128_scalar|32MiB|gbps"
    "ARM STNP fill|seq_write_128_nt_scalar|32MiB|gbps"
    "NEON LDP load|seq_read_256_neon|32MiB|gbps"
    "NEON LDNP load|seq_read_256_nt_neon|32MiB|gbps"
    "standard memcpy|libc_memcpy|64MiB|payload_gbps"
    "standard memset|libc_memset|32MiB|gbps"
  )
  printf '%-20s %-24s %9s %16s %12s %6s\n' tinymembench bwscope size "tinymembench GB/s" "bwscope GB/s" ratio
  for p in "${pairs[@]}"; do
    IFS='|' read -r name kernel size field <<<"$p"
    # "NEON STP fill      :   8478.0 MB/s (0.5%)" (exact name, not a prefetch variant)
    local t
    t=$(awk -F: -v n="$name" '{k=$1; gsub(/^ +| +$/, "", k)} k == n {split($2, a, " "); print a[1]/1000; exit}' "$out")
    [ -n "$t" ] || continue
    local b r=-
    b=$(bw_best "$kernel" "$size" "$field")
    [ "$b" != - ] && r=$(python3 -c "print(f'{$b/$t:.2f}')")
    printf '%-20s %-24s %9s %16.2f %12s %6s\n' "$name" "$kernel" "$size" "$t" "$b" "$r"
  done
  echo "(tinymembench's full output:)"
  sed -n '/^ C copy backwards/,/^=====/p' "$out" | head -40
}

stream_section() {
  if [ -z "$stream" ]; then
    echo "STREAM: not installed (build stream.c with -fopenmp; STREAM=path)"
    return 0
  fi
  local out="$work/stream.txt"
  "$stream" >"$out" 2>&1 || { echo "STREAM failed:"; tail -5 "$out"; return 0; }
  local n threads copy
  n=$(awk '/Array size =/ {print $4; exit}' "$out")
  threads=$(awk '/Number of Threads counted =/ {print $NF; exit}' "$out")
  threads=${threads:-$(awk '/Number of Threads requested =/ {print $NF; exit}' "$out")}
  threads=${threads:-1}
  copy=$(awk '/^Copy:/ {print $2/1000; exit}' "$out")
  echo "STREAM: array size $n doubles, $threads threads, Copy best $copy GB/s (bytes read + written)"
  [ -n "$n" ] && [ -n "$copy" ] || return 0
  local ws=$((16 * n))
  "$bw" threads --counts "$threads" --threads "$threads" --sizes "${ws}B" \
    --kernel seq_copy_256_neon,seq_copy_256_nt_neon,libc_memcpy --json "$work/t.json" >/dev/null 2>&1 || true
  python3 - "$work/t.json" "$copy" "$threads" <<'EOF'
import json, sys
try:
    rs = json.load(open(sys.argv[1]))["records"]
except (OSError, ValueError):
    rs = []
copy, t = float(sys.argv[2]), int(sys.argv[3])
for r in rs:
    if r["status"] == "ok" and r["threads"] == t:
        b = r["gbps"]["best"]
        print(f'  bwscope {r["kernel"]:<22} {b:8.2f} GB/s  ratio to STREAM Copy {b / copy:.2f}')
EOF
  grep -E '^(Copy|Scale|Add|Triad):' "$out"
}

echo "tinymembench:"
tinymembench_section
echo
stream_section
