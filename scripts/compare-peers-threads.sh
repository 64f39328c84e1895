#!/bin/bash
# Threads vs likwid-bench: 2 threads at a 1 GiB total working set, one tool after the other
# on the same work, and the ratio bwscope / likwid for read, write, NT write and copy.
# Usage: scripts/compare-peers-threads.sh [BWSCOPE=target/release/bwscope]
# Needs: likwid (apt-get install likwid). Both tools count bytes read + written (a copy of
# N/2 into N/2 counts N). likwid's -w S0:1GB:2 is 10^9 bytes (its "Size (Byte)" line says
# 1000000000) split over 2 threads of socket 0; bwscope gets --sizes 1GB (also 10^9).
set -euo pipefail
bw=${1:-${BWSCOPE:-target/release/bwscope}}

compare_threads() {
  command -v likwid-bench >/dev/null || { echo "likwid-bench missing: apt-get install likwid"; return 0; }
  # Widest AVX kernels likwid ships on x86-64: 256-bit (load_avx, store_avx, store_mem_avx
  # = NT stores, copy_avx); compare with bwscope's 256-bit kernels and its widest ones.
  local pairs="load_avx:seq_read_256_avx2 store_avx:seq_write_256_avx2 store_mem_avx:seq_write_256_nt_avx2 copy_avx:seq_copy_256_avx2"
  local json; json=$(mktemp)
  "$bw" threads --counts 2 --threads 2 --sizes 1GB \
    --kernel seq_read_256_avx2,seq_write_256_avx2,seq_write_256_nt_avx2,seq_copy_256_avx2,seq_read_512,seq_write_512,seq_copy_512_avx512f \
    --json "$json" >/dev/null 2>&1 || { echo "bwscope threads failed"; return 1; }
  # likwid reports one figure over its whole run; bwscope the best and the median of its
  # samples: the ratio uses the median (the fair one), best is shown beside it.
  printf '%-14s %-24s %11s %12s %11s %13s %14s\n' likwid bwscope "likwid GB/s" "bwscope best" "median" "ratio(median)" "skew % sample"
  for p in $pairs; do
    local lk=${p%%:*} bk=${p##*:}
    # likwid prints "MByte/s:  12345.67" (10^6 B/s).
    local l; l=$(likwid-bench -t "$lk" -w S0:1GB:2 2>/dev/null | awk '/^MByte\/s:/{print $2}')
    local b; b=$(python3 -c "import json,sys; r=[x for x in json.load(open('$json'))['records'] if x['kernel']=='$bk' and x['status']=='ok']; print('%.2f %.2f' % (r[0]['gbps']['best'], r[0]['gbps']['median']) if r else '')")
    local best=${b% *} med=${b#* }
    local s; s=$(python3 -c "import json,sys; r=[x for x in json.load(open('$json'))['records'] if x['kernel']=='$bk' and x['status']=='ok']; print('%.3f'%(100*r[0]['extra']['start_skew_fraction']) if r else '-')")
    local ratio=- lg=-
    [ -n "$l" ] && lg=$(python3 -c "print('%.2f' % ($l/1000))")
    [ -n "$l" ] && [ -n "$b" ] && ratio=$(python3 -c "print('%.2f' % ($med*1000/$l))")
    printf '%-14s %-24s %11s %12s %11s %13s %14s\n' "$lk" "$bk" "$lg" "${best:--}" "${med:--}" "$ratio" "$s"
  done
  echo "widest bwscope kernels (AVX-512 where present):"
  python3 -c "
import json
for x in json.load(open('$json'))['records']:
    if x['status']=='ok' and '512' in x['kernel']:
        print('  %-26s best %6.2f median %6.2f GB/s  skew %.3f %% of a sample' % (x['kernel'], x['gbps']['best'], x['gbps']['median'], 100*x['extra']['start_skew_fraction']))
"
  rm -f "$json"
}

compare_threads
