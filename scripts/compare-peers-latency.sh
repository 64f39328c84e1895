#!/usr/bin/env bash
# Latency and random-order checks for bwscope (section for compare-peers.sh).
#
#   1. L1 load-to-use latency in core cycles (Zen: 4, accept 4-5).
#   2. DRAM latency at >= 4x L3. No lat_mem_rd-style tool is installable
#      from Debian 12 (lmbench, tinymembench, pmbw and multichase are not in
#      its archive: `apt-cache search lat_mem_rd tinymembench pmbw` is
#      empty), so the figure is checked against bwscope's own page-size
#      runs: random chase with 4 KiB pages vs 2 MiB pages (THP and hugetlb,
#      the latter when vm.nr_hugepages allows). With the page size matched
#      (THP vs hugetlb, both 2 MiB) the two must agree within +-10 %; the
#      4k - 2M difference is the page-walk cost per load, which is what a
#      tool run without huge pages adds. The 4 KiB-window view is printed
#      for information: on Zen the L2 region prefetcher learns a page's
#      lines, so it is lower than a TLB-only correction would predict.
#   3. Random vs sequential read bandwidth at L1, per width (expect within
#      15 %: the working set is cache-resident).
#
# Usage: scripts/compare-peers-latency.sh [path/to/bwscope]
# Env:   SAMPLES (default 15), MIN_MS (default 2), DRAM_SIZE (default 4x L3
#        rounded up to a power of two, at least 256MiB),
#        RESERVE_HUGEPAGES=1 to reserve vm.nr_hugepages for the hugetlb run
#        (root only; restored afterwards).
set -euo pipefail

BW=${1:-${BWSCOPE:-target/release/bwscope}}
SAMPLES=${SAMPLES:-15}
MIN_MS=${MIN_MS:-2}
S=(--samples "$SAMPLES" --min-sample-ms "$MIN_MS")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

need() { command -v "$1" >/dev/null || { echo "needs $1" >&2; exit 2; }; }
need jq
need awk

# Best (lowest) ns and cycles of one record, selected by view and size.
lat() { # file view size -> "ns cycles"
  jq -r --arg v "$2" --argjson s "$3" '.records[] | select(.status=="ok" and .extra.case_view==$v and .size_bytes==$s)
     | "\(.extra.latency_ns.best) \(.extra.cycles_per_load.best // "null")"' "$1"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "nan" }'; }
within() { awk -v r="$1" -v lo="$2" -v hi="$3" 'BEGIN { print (r >= lo && r <= hi) ? "PASS" : "FAIL" }'; }

l3=$("$BW" info --json - --no-clock | jq '[.caches[] | select(.kind!="instruction") | .size_bytes] | max')
if [[ -z "${DRAM_SIZE:-}" ]]; then
  DRAM_SIZE=$(awk -v l="$l3" 'BEGIN { s = 1; while (s < 4 * l) s *= 2; if (s < 268435456) s = 268435456; print s }')
fi
echo "== latency: L3 = $l3 B, DRAM size = $DRAM_SIZE B"

# 1. L1 latency.
"$BW" latency --sizes 16KiB --view random "${S[@]}" --json "$tmp/l1.json" >/dev/null
read -r l1ns l1cyc < <(lat "$tmp/l1.json" random 16384)
echo "L1 16KiB random chase: ${l1ns} ns = ${l1cyc} cycles  (expect 4-5)  $(within "$l1cyc" 3.5 5.5)"

# 2. DRAM latency, 4 KiB vs 2 MiB pages.
"$BW" latency --sizes "$DRAM_SIZE" --pages 4k --view random,window "${S[@]}" --json "$tmp/d4k.json" >/dev/null
"$BW" latency --sizes "$DRAM_SIZE" --pages thp --view random,window "${S[@]}" --json "$tmp/dthp.json" >/dev/null
read -r r4k _ < <(lat "$tmp/d4k.json" random "$DRAM_SIZE")
read -r w4k _ < <(lat "$tmp/d4k.json" window "$DRAM_SIZE")
read -r rthp _ < <(lat "$tmp/dthp.json" random "$DRAM_SIZE")
read -r wthp _ < <(lat "$tmp/dthp.json" window "$DRAM_SIZE")
thp_pg=$(jq -r '.records[0].extra.page_bytes' "$tmp/dthp.json")
echo "DRAM $DRAM_SIZE B random chase: 4k pages ${r4k} ns, THP (page ${thp_pg} B) ${rthp} ns, 4k/THP $(ratio "$r4k" "$rthp")"
echo "  page-walk cost per load with 4 KiB pages: $(awk -v a="$r4k" -v b="$rthp" 'BEGIN{printf "%.1f", a-b}') ns"
echo "  4 KiB-window view (info): 4k ${w4k} ns, THP ${wthp} ns"

reserved=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)
restore=""
if [[ "${RESERVE_HUGEPAGES:-0}" == 1 && "$reserved" == 0 && -w /proc/sys/vm/nr_hugepages ]]; then
  pages=$(( DRAM_SIZE / 2097152 + 8 ))
  echo "$pages" > /proc/sys/vm/nr_hugepages
  restore=0
fi
free_huge=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
if [[ "${free_huge:-0}" -gt 0 ]]; then
  # The largest power of two the free huge pages hold; compare at that size
  # if it is still >= 4x L3 (the kernel may grant fewer pages than asked).
  hsize=$(awk -v f="$free_huge" -v d="$DRAM_SIZE" 'BEGIN { s = 2097152; while (s * 2 <= f * 2097152 && s * 2 <= d) s *= 2; print s }')
  if (( hsize >= 4 * l3 )); then
    "$BW" latency --sizes "$hsize" --pages hugetlb --view random "${S[@]}" --json "$tmp/dhuge.json" >/dev/null
    "$BW" latency --sizes "$hsize" --pages thp --view random "${S[@]}" --json "$tmp/dthp2.json" >/dev/null
    read -r rh _ < <(lat "$tmp/dhuge.json" random "$hsize")
    read -r rt _ < <(lat "$tmp/dthp2.json" random "$hsize")
    echo "  page size matched at $hsize B: hugetlb 2M ${rh} ns, THP ${rt} ns; hugetlb/THP $(ratio "$rh" "$rt")  (+-10 %: $(within "$(ratio "$rh" "$rt")" 0.9 1.1))"
  else
    echo "  hugetlb: skipped (only $free_huge free huge pages, less than 4x L3)"
  fi
else
  echo "  hugetlb: skipped (no free huge pages; RESERVE_HUGEPAGES=1 as root reserves them for this run)"
fi
[[ -n "$restore" ]] && echo "$restore" > /proc/sys/vm/nr_hugepages

# 3. Random vs sequential read at L1.
echo "== random vs sequential read, 16 KiB (L1)"
"$BW" cache --kernel seq_read --pattern seq,random --sizes 16KiB "${S[@]}" --json "$tmp/rs.json" >/dev/null
for w in 32_scalar 64_scalar 128_sse2 256_avx2 512_avx512f; do
  s=$(jq -r --arg k "seq_read_$w" '.records[] | select(.kernel==$k and .status=="ok") | .gbps.best' "$tmp/rs.json")
  r=$(jq -r --arg k "rand_read_$w" '.records[] | select(.kernel==$k and .status=="ok") | .gbps.best' "$tmp/rs.json")
  [[ -z "$s" || -z "$r" ]] && { echo "$w: skipped"; continue; }
  q=$(ratio "$r" "$s")
  printf '%-12s seq %8.1f GB/s  random %8.1f GB/s  random/seq %s  (>= 0.85: %s)\n' "$w" "$s" "$r" "$q" "$(within "$q" 0.85 10)"
done
