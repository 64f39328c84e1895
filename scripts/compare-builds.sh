#!/usr/bin/env bash
# Two builds of bwscope on the same single-thread cells, side by side with
# likwid-bench as the common yardstick: did a change cost any speed?
# A benchmark, not a test. Every cell alternates OLD, NEW and likwid-bench
# ROUNDS times (so slow moments hit all three alike) and compares best with
# best.
#
#   scripts/compare-builds.sh OLD_BINARY NEW_BINARY
#   ROUNDS=5 SIZES="16384 1073741824" scripts/compare-builds.sh old new
#
# Columns: the best GB/s of each, new/old, new/likwid, old/likwid; then the
# geometric means. Cells: load/store/copy × sse/avx/avx512 and the
# non-temporal stores and copies, where both this CPU and likwid-bench have
# them; sizes 16 KiB, half of L2, a quarter of L3 and 1 GiB (from NEW's
# `info --json`, measured sizes where it has them) unless SIZES is given.
set -euo pipefail
OLD=${1:?usage: compare-builds.sh OLD_BINARY NEW_BINARY}
NEW=${2:?usage: compare-builds.sh OLD_BINARY NEW_BINARY}
ROUNDS=${ROUNDS:-3}
# Both builds and likwid-bench on the same pages: likwid-bench's buffers get
# transparent huge pages only under THP `always` (MEM= keeps bwscope's default).
if [ -z "${MEM+x}" ]; then
  case $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null) in
    *"[always]"*) MEM=thp ;; *) MEM=nohuge ;;
  esac
fi
echo "pages: bwscope --memory ${MEM:-<default>}; THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
CPU=${CPU:-$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')}
command -v likwid-bench >/dev/null || { echo "needs likwid-bench: apt-get install likwid" >&2; exit 2; }
LIKWID_TESTS=$(likwid-bench -a 2>/dev/null || true)
KERNELS_HERE=$("$NEW" kernels)

if [ -z "${SIZES:-}" ]; then
  SIZES=$("$NEW" info --no-clock --json - | python3 -c '
import json, sys
h = json.load(sys.stdin)
size = {c["level"]: (c.get("effective_size_bytes") or c["size_bytes"])
        for c in h["caches"] if c["type"] != "instruction"}
l2, l3 = size.get(2, 1 << 20), size.get(3, 32 << 20)
print(16384, l2 // 2 // 4096 * 4096, max(l3 // 4, 2 * l2) // 4096 * 4096, 1 << 30)')
fi

# likwid test -> bwscope kernel
kernel_of() {
  local t=$1 op isa w nt=""
  case $t in
    load_*) op=read ;; store_*) op=write ;; copy_*) op=copy ;;
  esac
  case $t in *_mem_*) nt="_nt" ;; esac
  case $t in
    *_sse) w=128; isa=sse2 ;; *_avx) w=256; isa=avx2 ;; *_avx512) w=512; isa=avx512f ;;
  esac
  echo "seq_${op}_${w}${nt}_${isa}"
}

bw_best() { # binary kernel size -> best GB/s
  "$1" cache --kernel "$2" --sizes "${3}B" --cpus "$CPU" ${MEM:+--memory "$MEM"} --json - 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["records"][0]["gbps"]["best"])'
}

likwid_best() { # test size -> GB/s (iterations sized to ~2 GB of traffic)
  local it=$(( 2000000000 / $2 )); [ "$it" -lt 2 ] && it=2
  taskset -c "$CPU" likwid-bench -t "$1" -w "S0:${2}B:1" -i "$it" 2>/dev/null |
    awk '/^MByte\/s:/ {printf "%.3f\n", $2/1000}'
}

max() { python3 -c 'import sys; print(max(float(x) for x in sys.argv[1:]))' "$@"; }

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') (cpu $CPU), $ROUNDS alternating rounds, best of each"
echo "old: $OLD"
echo "new: $NEW"
printf "%-18s %11s %8s %8s %8s %8s %9s %9s\n" cell size old new likwid new/old new/likwid old/likwid
ratios=()
for size in $SIZES; do
  for t in load_sse load_avx load_avx512 store_sse store_avx store_avx512 copy_sse copy_avx copy_avx512 \
           store_mem_sse store_mem_avx store_mem_avx512 copy_mem_sse copy_mem_avx copy_mem_avx512; do
    k=$(kernel_of "$t")
    grep -q "^$k .* yes\$" <<<"$KERNELS_HERE" || continue
    grep -q "^$t " <<<"$LIKWID_TESTS" || continue
    o=(); n=(); l=()
    for _ in $(seq "$ROUNDS"); do
      o+=("$(bw_best "$OLD" "$k" "$size")")
      n+=("$(bw_best "$NEW" "$k" "$size")")
      l+=("$(likwid_best "$t" "$size")")
    done
    ob=$(max "${o[@]}"); nb=$(max "${n[@]}"); lb=$(max "${l[@]}")
    line=$(python3 -c "
o,n,l=$ob,$nb,$lb
print(f'{\"$t\":18s} {$size:11d} {o:8.1f} {n:8.1f} {l:8.1f} {n/o:8.2f} {n/l:9.2f} {o/l:9.2f}')")
    echo "$line"
    ratios+=("$(python3 -c "print($nb/$ob, $nb/$lb, $ob/$lb)")")
  done
done
printf '%s\n' "${ratios[@]}" | python3 -c '
import math, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
if rows:
    g = [math.exp(sum(math.log(r[i]) for r in rows) / len(rows)) for i in range(3)]
    lo = [min(r[i] for r in rows) for i in range(3)]
    print(f"geometric mean over {len(rows)} cells: new/old {g[0]:.2f}, new/likwid {g[1]:.2f}, old/likwid {g[2]:.2f}")
    print(f"lowest cell:                     new/old {lo[0]:.2f}, new/likwid {lo[1]:.2f}, old/likwid {lo[2]:.2f}")'
