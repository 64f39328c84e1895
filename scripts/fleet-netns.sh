#!/bin/bash
# fleet-netns.sh — several "hosts" on one machine for fleet tests: N network
# namespaces, each with its own veth into one bridge in the root namespace,
# and an rsh agent that lets Open MPI (or a test) start commands "on" them.
#
#   fleet-netns.sh up N           create $P-0 .. $P-(N-1) at 10.251.0.1 .. 10.251.0.N/24,
#                                 the bridge $P-br at 10.251.0.254 (mpirun's side)
#   fleet-netns.sh down           kill what runs in them, delete namespaces and bridge
#   fleet-netns.sh rsh HOST CMD…  the rsh agent: run CMD in namespace HOST under its own
#                                 host name (unshare --uts), pinned with taskset when
#                                 FLEET_CPUS_<HOST with - as _> names cpus; with
#                                 PRIVATE_DIR=D in a mount namespace of its own with a
#                                 fresh tmpfs over D (its working directory: nothing in
#                                 it is shared, as between Kubernetes pods), and with
#                                 HOSTS_FILE=F too, F bound over /etc/hosts
#   fleet-netns.sh hostfile       print an Open MPI hostfile (one slot per namespace)
#   fleet-netns.sh status
#
# env: NETNS_PREFIX (default bwf; interface names stay under 15 bytes)
#      FLEET_NET (default 10.251.0): the /24 the namespaces and the bridge share
#      SLOW=k RATE=100mbit   tbf on both ends of namespace k's veth (a slow link)
#      UNREACH=a:b           namespaces a and b get an `unreachable` route to each other
# The addresses exist only inside these namespaces and on the bridge; there is no default
# route and no forwarding, so nothing leaves the machine.
# Open MPI: mpirun --hostfile <(fleet-netns.sh hostfile) --mca plm_rsh_agent "fleet-netns.sh rsh" \
#   --mca oob_tcp_if_include 10.251.0.0/24 --mca btl tcp,self --mca btl_tcp_if_include 10.251.0.0/24 …
# Needs root (CAP_SYS_ADMIN + CAP_NET_ADMIN) and iproute2, util-linux.
set -euo pipefail
P=${NETNS_PREFIX:-bwf}
BR=$P-br
NET=${FLEET_NET:-10.251.0}

ns_list() { ip netns list | awk '{print $1}' | grep -E "^$P-[0-9]+$" || true; }

down() {
  for ns in $(ns_list); do
    pids=$(ip netns pids "$ns" || true)
    [ -n "$pids" ] && kill $pids 2>/dev/null || true
  done
  sleep 0.2
  for ns in $(ns_list); do
    pids=$(ip netns pids "$ns" || true)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
    ip netns del "$ns"
  done
  for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E "^$P-v[0-9]+$" || true); do
    ip link del "$l" 2>/dev/null || true
  done
  ip link show "$BR" >/dev/null 2>&1 && ip link del "$BR" || true
  return 0
}

up() {
  local n=$1
  down
  ip link add "$BR" type bridge
  ip addr add "$NET.254/24" dev "$BR"
  ip link set "$BR" up
  for i in $(seq 0 $((n - 1))); do
    ns=$P-$i
    ip netns add "$ns"
    ip link add "$P-v$i" type veth peer name eth0 netns "$ns"
    ip link set "$P-v$i" master "$BR" up
    ip -n "$ns" addr add "$NET.$((i + 1))/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
  done
  if [ -n "${SLOW:-}" ]; then
    # Both directions: egress of the namespace's end and of the bridge's end.
    ip netns exec "$P-$SLOW" tc qdisc replace dev eth0 root tbf rate "${RATE:-100mbit}" burst 256kb latency 50ms
    tc qdisc replace dev "$P-v$SLOW" root tbf rate "${RATE:-100mbit}" burst 256kb latency 50ms
  fi
  if [ -n "${UNREACH:-}" ]; then
    a=${UNREACH%%:*}; b=${UNREACH##*:}
    ip -n "$P-$a" route add unreachable "$NET.$((b + 1))/32"
    ip -n "$P-$b" route add unreachable "$NET.$((a + 1))/32"
  fi
  for i in $(seq 0 $((n - 1))); do
    for t in $(seq 50); do
      [ "$(ip netns exec "$P-$i" cat /sys/class/net/eth0/operstate)" = up ] && break
      sleep 0.1
    done
  done
  echo "up: $n namespaces $P-0..$P-$((n - 1)) on $BR ($NET.0/24) slow=${SLOW:-none}@${RATE:-} unreachable=${UNREACH:-none}"
}

rsh() {
  # Open MPI calls its agent like ssh: agent [options] HOST COMMAND…, the
  # command to be run by a shell there.
  while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
  local host=$1; shift
  local var="FLEET_CPUS_${host//-/_}"
  local pin=()
  [ -n "${!var:-}" ] && pin=(taskset -c "${!var}")
  if [ -n "${PRIVATE_DIR:-}" ]; then
    exec ip netns exec "$host" unshare --uts --mount --propagation private "${pin[@]}" sh -c '
      hostname "$0"
      mount -t tmpfs -o mode=0700 "$0-private" "$2" && cd "$2" || exit 1
      if [ -n "$3" ]; then mount --bind "$3" /etc/hosts || exit 1; fi
      exec sh -c "$1"' "$host" "$*" "$PRIVATE_DIR" "${HOSTS_FILE:-}"
  fi
  exec ip netns exec "$host" unshare --uts "${pin[@]}" sh -c 'hostname "$0"; exec sh -c "$1"' "$host" "$*"
}

case "${1:-}" in
  up) up "${2:?how many namespaces}" ;;
  down) down ;;
  rsh) shift; rsh "$@" ;;
  hostfile) for ns in $(ns_list | sort -t- -k2 -n); do echo "$ns slots=1"; done ;;
  status)
    ip -br link show "$BR" 2>/dev/null || true
    for ns in $(ns_list); do echo "== $ns"; ip -n "$ns" -br addr; ip netns exec "$ns" tc qdisc show dev eth0; done ;;
  *) echo "usage: $0 up N | down | rsh HOST CMD... | hostfile | status" >&2; exit 2 ;;
esac
