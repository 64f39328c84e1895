#!/bin/bash
# netns-pair.sh — bwscope's copy of the research recipe: two network namespaces ("leader" A and "transponder" B) joined by a veth pair.
# Idempotent: `up` first removes leftovers of the same prefix; `down` is safe to run any time.
#
#   netns-pair.sh up          create  $P-a <-veth-> $P-b, addresses $IPA/$IPB, optional shaping
#   netns-pair.sh down        kill processes left in both namespaces, delete them (veth goes with them)
#   netns-pair.sh status      show namespaces, links, qdiscs
#   netns-pair.sh exec a|b CMD...   run CMD inside namespace A or B
#
# env: NETNS_PREFIX (default bwt)  IPA/IPB (default 10.250.0.1 / 10.250.0.2, /24, no default route:
#      nothing can leave the pair)  MTU (default 1500)
#      RATE   e.g. 1gbit  -> tbf on both veth ends (both directions)
#      DELAY  e.g. 1ms    -> netem (needs CONFIG_NET_SCH_NETEM; refused with a message where missing)
# Needs: root, or CAP_SYS_ADMIN + CAP_NET_ADMIN (ip netns add bind-mounts under /run/netns).
# Used by tests/net_netns.rs (shaped-rate tests; cleaned up by an RAII guard even on failure).
# Rootless alternative: run the whole thing inside `unshare --user --map-root-user --mount --net`.
set -euo pipefail
P=${NETNS_PREFIX:-bwt}
A=$P-a; B=$P-b; VA=$P-va; VB=$P-vb
IPA=${IPA:-10.250.0.1}; IPB=${IPB:-10.250.0.2}; MTU=${MTU:-1500}
RATE=${RATE:-}; DELAY=${DELAY:-}

ns_exists() { ip netns list | awk '{print $1}' | grep -qx "$1"; }

down() {
  for ns in "$A" "$B"; do
    if ns_exists "$ns"; then
      pids=$(ip netns pids "$ns" || true)
      [ -n "$pids" ] && kill $pids 2>/dev/null || true
      sleep 0.2
      pids=$(ip netns pids "$ns" || true)
      [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
      ip netns del "$ns"
    fi
  done
  # a veth half left in the root namespace by an interrupted `up`
  ip link show "$VA" >/dev/null 2>&1 && ip link del "$VA" || true
  return 0
}

shape() { # dev ns
  local dev=$1 ns=$2
  if [ -n "$DELAY" ]; then
    local extra=""; [ -n "$RATE" ] && extra="rate $RATE"
    ip netns exec "$ns" tc qdisc replace dev "$dev" root netem delay "$DELAY" $extra limit 100000 || {
      echo "netem unavailable (kernel lacks CONFIG_NET_SCH_NETEM?)" >&2; return 1; }
  elif [ -n "$RATE" ]; then
    # burst must be >= rate/HZ; 1 MiB is safe up to ~10 Gbit at HZ=1000 (and still fine for TSO skbs)
    ip netns exec "$ns" tc qdisc replace dev "$dev" root tbf rate "$RATE" burst 1mb latency 20ms
  fi
}

up() {
  down
  ip netns add "$A"
  ip netns add "$B"
  ip link add "$VA" netns "$A" mtu "$MTU" type veth peer name "$VB" netns "$B" mtu "$MTU"
  ip -n "$A" addr add "$IPA/24" dev "$VA"
  ip -n "$B" addr add "$IPB/24" dev "$VB"
  for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
  ip -n "$A" link set "$VA" up
  ip -n "$B" link set "$VB" up
  shape "$VA" "$A" && shape "$VB" "$B" || { down; exit 1; }
  # wait until both ends report operstate UP (no ping needed; iputils-ping may be absent)
  for i in $(seq 50); do
    [ "$(ip netns exec "$A" cat /sys/class/net/$VA/operstate)" = up ] &&
    [ "$(ip netns exec "$B" cat /sys/class/net/$VB/operstate)" = up ] && break
    sleep 0.1
  done
  echo "up: $A($VA $IPA) <-> $B($VB $IPB) mtu=$MTU rate=${RATE:-none} delay=${DELAY:-none}"
}

status() {
  ip netns list
  for ns in "$A" "$B"; do
    ns_exists "$ns" || continue
    echo "== $ns"; ip -n "$ns" -br addr; ip netns exec "$ns" tc qdisc show
  done
}

case "${1:-}" in
  up) up ;;
  down) down; echo "down: $A $B removed" ;;
  status) status ;;
  exec) shift; w=$1; shift; case $w in a) ns=$A;; b) ns=$B;; *) echo "a|b" >&2; exit 2;; esac
        exec ip netns exec "$ns" "$@" ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
