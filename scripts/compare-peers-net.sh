#!/bin/bash
# compare-peers-net.sh — bwscope's streaming mode vs iperf3 on loopback, same
# duration and omit window, one after the other, 1 and 2 streams; prints the
# receiver-side rates and the ratio bwscope/iperf3 (target: >= 1).
#
# env: BWSCOPE (default target/release/bwscope)  TIME (5 s)  OMIT (1 s)
#      ROUNDS (2: each pair is run this many times, alternating tools)
#      PORT_BW (5281)  PORT_IPERF (5282)
# Needs: iperf3 (Debian package iperf3), python3. Only 127.0.0.1 is contacted.
set -euo pipefail
BW=${BWSCOPE:-target/release/bwscope}
TIME=${TIME:-5}; OMIT=${OMIT:-1}; ROUNDS=${ROUNDS:-2}
PORT_BW=${PORT_BW:-5281}; PORT_IPERF=${PORT_IPERF:-5282}

compare_net() {
  command -v iperf3 >/dev/null || { echo "net: iperf3 missing (apt-get install iperf3); skipped"; return 0; }
  [ -x "$BW" ] || { echo "net: $BW missing (cargo build --release)"; return 1; }
  local pids=()
  cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
  trap cleanup RETURN
  "$BW" net serve --bind 127.0.0.1 --port "$PORT_BW" 2>/dev/null & pids+=($!)
  iperf3 -s -B 127.0.0.1 -p "$PORT_IPERF" >/dev/null 2>&1 & pids+=($!)
  sleep 0.5
  echo "loopback TCP, ${TIME} s after a ${OMIT} s omit window, receiver-side Gbit/s (10^9 bit/s)"
  printf '%-8s %-6s %10s %10s %7s\n' streams round iperf3 bwscope ratio
  for streams in 1 2; do
    for round in $(seq "$ROUNDS"); do
      local ip bw
      ip=$(iperf3 -c 127.0.0.1 -p "$PORT_IPERF" -t "$TIME" -O "$OMIT" -P "$streams" -J |
           python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9)')
      bw=$("$BW" net run "127.0.0.1:$PORT_BW" -m stream -t "$TIME" -O "$OMIT" -P "$streams" --json - 2>/dev/null |
           python3 -c 'import json,sys; print(sum(r["extra"]["receiver_gbitps"] for r in json.load(sys.stdin)["records"]))')
      printf '%-8s %-6s %10.2f %10.2f %7.2f\n' "$streams" "$round" "$ip" "$bw" "$(python3 -c "print($bw/$ip)")"
    done
  done
}

compare_net
