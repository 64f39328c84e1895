#!/bin/bash
# compare-peers-fleet.sh — bwscope fleet against its peers, on one machine (root):
#
#  1. MPI pair bandwidth between two network namespaces (scripts/fleet-netns.sh): bwscope fleet
#     --transport mpi (2 ranks, both directions at once) against OSU osu_bibw (OSU_SRC=<OMB
#     source>/c, built here into .bench/osu) or, without OSU, scripts/fleet-mpi-bw.c in bidir mode
#     (osu_bibw's method); same message size and window. Target: bwscope >= 0.95x.
#  2. The TCP path between the same two namespaces: bwscope fleet --transport tcp against
#     iperf3 (one client per direction, at once), both directions summed, same write size, omit
#     window and time. Target >= 0.95x.
#  3. Orchestration overhead: a 4-rank fleet on this box (default per-node suites, shift):
#     the share of the wall time spent outside the measuring. Target <= 10 %.
#  4. The sample schedule's cost against N = 2, 4, 8, 16 ranks (oversubscribed), next to shift:
#     steps and wall time grow with N for shift, not for sample.
#
# Rounds alternate the two tools and keep the best of ROUNDS (default 3); a shared machine makes
# single runs noisy, so read ratios, not absolute figures.
#
# env: BWSCOPE (default build; default target/release/bwscope, built if missing)
#      BWSCOPE_MPI (a build with --features mpi; part 1 is skipped without it)
#      OSU_SRC (OMB's c/ directory)  ROUNDS  SIZE (bytes, default 1048576)  WINDOW (default 64)
#      ITERS (reference iterations, default 20)
#      PARTS (default "1 2 3 4")
# Needs: root, iproute2, util-linux, Open MPI (mpirun, mpicc), iperf3, jq.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-1048576}
WINDOW=${WINDOW:-64}
PARTS=${PARTS:-1 2 3 4}
export NETNS_PREFIX=bwfb FLEET_NET=10.251.9
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
NS=$PWD/scripts/fleet-netns.sh
BENCH=.bench
mkdir -p "$BENCH"
WORK=$(mktemp -d)
cleanup() { bash $NS down >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT

BWSCOPE=${BWSCOPE:-target/release/bwscope}
if [ ! -x "$BWSCOPE" ]; then cargo build --release; fi
BWSCOPE=$(readlink -f "$BWSCOPE")
[ -n "${BWSCOPE_MPI:-}" ] && BWSCOPE_MPI=$(readlink -f "$BWSCOPE_MPI")

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cpus, $(uname -r)"
echo "# $(mpirun --version | head -1), $(iperf3 --version | head -1)"

f3() { for x in "$@"; do printf '%.3f ' "$x"; done; }
best() { sort -g | tail -1; }
med() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# "best/best = X, median/median = Y" of two lists of figures.
ratios() {
  local b=$1 r=$2
  echo "best/best = $(echo "$(tr ' ' '\n' <<<"$b" | best) / $(tr ' ' '\n' <<<"$r" | best)" | bc -l | cut -c1-5)," \
    "median/median = $(echo "$(tr ' ' '\n' <<<"$b" | med) / $(tr ' ' '\n' <<<"$r" | med)" | bc -l | cut -c1-5)"
}
ns_mpirun() { # np args...
  local np=$1; shift
  mpirun --hostfile "$WORK/hosts" -np "$np" --bind-to none \
    --mca plm_rsh_agent "bash $NS rsh" \
    --mca oob_tcp_if_include "$FLEET_NET.0/24" --mca btl tcp,self --mca btl_tcp_if_include "$FLEET_NET.0/24" "$@"
}
# Sum of what arrived over all flows of a transport in a fleet file, GB/s.
fleet_sum() { jq -r --arg t "$2" '[.network[] | select(.transport == $t) | .flows[].recv_gbps // 0] | add' "$1"; }

if [[ " $PARTS " == *" 1 "* || " $PARTS " == *" 2 "* ]]; then
  bash $NS up 2 >/dev/null
  bash $NS hostfile > "$WORK/hosts"
fi

if [[ " $PARTS " == *" 1 "* ]]; then
  if [ -z "${BWSCOPE_MPI:-}" ]; then
    echo "part 1 skipped: give BWSCOPE_MPI=<a build with --features mpi>"
  else
    if [ -n "${OSU_SRC:-}" ]; then
      mkdir -p "$BENCH/osu"
      mpicc -O2 -w -I"$OSU_SRC/util" "$OSU_SRC/mpi/pt2pt/osu_bibw.c" "$OSU_SRC/util/osu_util.c" \
        "$OSU_SRC/util/osu_util_mpi.c" "$OSU_SRC/util/osu_util_graph.c" "$OSU_SRC/util/osu_util_papi.c" \
        -o "$BENCH/osu/osu_bibw" -lm
      REF="osu_bibw"
    else
      mpicc -O2 scripts/fleet-mpi-bw.c -o "$BENCH/fleet-mpi-bw"
      REF="fleet-mpi-bw bidir"
    fi
    b=(); r=()
    for i in $(seq "$ROUNDS"); do
      if [ -n "${OSU_SRC:-}" ]; then
        # MB/s = 10^6 B/s in OMB; both directions together.
        r+=("$(ns_mpirun 2 "$PWD/$BENCH/osu/osu_bibw" -m "$SIZE:$SIZE" -W "$WINDOW" -i "${ITERS:-20}" -x 5 2>/dev/null |
          awk -v s="$SIZE" '$1 == s {print $2 / 1000}')")
      else
        r+=("$(ns_mpirun 2 "$PWD/$BENCH/fleet-mpi-bw" "$SIZE" "$WINDOW" "${ITERS:-20}" bidir 2>/dev/null | awk '{print $5}')")
      fi
      (cd "$WORK" && ns_mpirun 2 "$BWSCOPE_MPI" fleet --suites none --transport mpi --msg-sizes "${SIZE}B" \
        --window "$WINDOW" --step-time 2 --out "mpi$i" >/dev/null 2>&1)
      b+=("$(fleet_sum "$WORK/mpi$i/fleet.json" mpi)")
    done
    echo "MPI pair, both directions, ${SIZE} B x window ${WINDOW}: bwscope $(f3 "${b[@]}")GB/s; $REF $(f3 "${r[@]}")GB/s; $(ratios "${b[*]}" "${r[*]}")"
  fi
fi

if [[ " $PARTS " == *" 2 "* ]]; then
  # Two iperf3 processes, one per direction, at once (iperf3 3.12's --bidir
  # runs both directions in one thread; bwscope's two flows each have
  # their own threads at both ends).
  IP0="$FLEET_NET.1"; IP1="$FLEET_NET.2"
  b=(); r=()
  for i in $(seq "$ROUNDS"); do
    ip netns exec "$NETNS_PREFIX-1" iperf3 -s -1 -p 5399 >/dev/null 2>&1 &
    ip netns exec "$NETNS_PREFIX-0" iperf3 -s -1 -p 5398 >/dev/null 2>&1 &
    for t in $(seq 50); do
      ip netns exec "$NETNS_PREFIX-1" ss -Hltn 'sport = :5399' | grep -q . &&
        ip netns exec "$NETNS_PREFIX-0" ss -Hltn 'sport = :5398' | grep -q . && break
      sleep 0.1
    done
    ip netns exec "$NETNS_PREFIX-0" iperf3 -c "$IP1" -p 5399 -t 3 -O 1 -l 128K -J > "$WORK/a.json" &
    ip netns exec "$NETNS_PREFIX-1" iperf3 -c "$IP0" -p 5398 -t 3 -O 1 -l 128K -J > "$WORK/b.json" &
    wait
    r+=("$(jq -s '(.[0].end.sum_received.bits_per_second + .[1].end.sum_received.bits_per_second) / 8e9' "$WORK/a.json" "$WORK/b.json")")
    (cd "$WORK" && ns_mpirun 2 "$BWSCOPE" fleet --control tcp --suites none --transport tcp --msg-sizes 128KiB \
      --step-time 3 --omit 1 --out "tcp$i" >/dev/null 2>&1)
    b+=("$(fleet_sum "$WORK/tcp$i/fleet.json" tcp)")
  done
  echo "TCP pair, both directions at once, 128 KiB writes, 3 s after 1 s omitted: bwscope $(f3 "${b[@]}")GB/s; iperf3 x2 $(f3 "${r[@]}")GB/s; $(ratios "${b[*]}" "${r[*]}")"
fi

if [[ " $PARTS " == *" 3 "* ]]; then
  for i in $(seq "$ROUNDS"); do
    t0=$(date +%s.%N)
    (cd "$WORK" && mpirun --oversubscribe --mca btl tcp,self --mca btl_tcp_if_include lo -np 4 "$BWSCOPE" fleet \
      --control tcp --out "over$i" >/dev/null 2>&1)
    t1=$(date +%s.%N)
    jq -r --arg w "$(echo "$t1 - $t0" | bc -l)" '.timings | "overhead, 4 ranks on this box: bwscope wall \(.total_seconds|.*10|round/10) s (launcher \($w|tonumber|.*10|round/10) s), measuring \((.node_measure_seconds + .network_measure_seconds)|.*10|round/10) s, outside the measuring \(.overhead_fraction*1000|round/10) % of bwscope wall, \((1 - (.node_measure_seconds + .network_measure_seconds) / ($w|tonumber))*1000|round/10) % of launcher wall"' "$WORK/over$i/fleet.json"
  done
fi

if [[ " $PARTS " == *" 4 "* ]]; then
  echo "scaling (oversubscribed on $(nproc) cpus; --suites none --step-time 0.3 --omit 0.1; sample --peers 3):"
  echo "  cost = the time every node spends in the network phase, summed (N x network s): linear in N when"
  echo "  the network s stays flat (sample), quadratic when it grows with N (shift)"
  printf '%-8s %4s %6s %6s %11s %8s %10s %10s\n' schedule N steps flows flows/node "wall s" "network s" "cost node-s"
  for n in 2 4 8 16; do
    for s in sample shift; do
      (cd "$WORK" && mpirun --oversubscribe --mca btl tcp,self --mca btl_tcp_if_include lo -np "$n" "$BWSCOPE" fleet \
        --control tcp --suites none --schedule "$s" --peers 3 --step-time 0.3 --omit 0.1 --out "scale-$s-$n" >/dev/null 2>&1)
      jq -r --arg s "$s" --arg n "$n" '"\($s) \($n) \(.network[0].steps) \(.network[0].flows|length) \(.timings.total_seconds) \(.timings.network_seconds)"' \
        "$WORK/scale-$s-$n/fleet.json" |
        awk '{printf "%-8s %4s %6s %6s %11.1f %8.2f %10.2f %10.1f\n", $1, $2, $3, $4, $4 / $2, $5, $6, $2 * $6}'
    done
  done
fi
