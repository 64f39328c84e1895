#!/bin/sh
# Peer check for the survey's DRAM memcpy headline (issue 8): bwscope's
# libc_memcpy at a DRAM-sized working set against mbw's memcpy test on the
# same array size, one after the other, best of each. Both count payload
# bytes here (mbw: "amount of data copied over the time"); bwscope's
# payload_gbps counts a copy of N/2 bytes as N/2.
#
# Usage: scripts/compare-peers-reports.sh [BWSCOPE] [MiB]
set -eu

peer_memcpy_mbw() {
    bw=${1:-bwscope}
    mib=${2:-256}
    command -v mbw >/dev/null || { echo "skip: mbw not installed (apt-get install mbw)"; return 0; }
    tmp=$(mktemp -d)
    # Working set = both arrays: 2 × mib.
    "$bw" cache -k libc_memcpy --sizes "$((2 * mib))MiB" --samples 9 --json "$tmp/bw.json" >/dev/null 2>"$tmp/bw.err"
    ours=$(python3 -c "import json,sys; r=[r for r in json.load(open(sys.argv[1]))['records'] if r['status']=='ok'][0]; print(r['payload_gbps']['best'])" "$tmp/bw.json")
    # mbw prints MiB/s per run; take the best run and convert to GB/s.
    theirs=$(mbw -q -n 9 -t0 "$mib" | awk '/^[0-9]+\t/ { for (i = 1; i <= NF; i++) if ($i == "Copy:") v = $(i + 1); if (v > best) best = v } END { printf "%.3f", best * 1048576 / 1e9 }')
    python3 -c "import sys; o,t=float(sys.argv[1]),float(sys.argv[2]); print(f'memcpy {sys.argv[3]} MiB arrays: bwscope {o:.2f} GB/s payload, mbw {t:.2f} GB/s, ratio bwscope/mbw {o/t:.2f}')" "$ours" "$theirs" "$mib"
    rm -rf "$tmp"
}

peer_memcpy_mbw "${1:-bwscope}" "${2:-256}"
