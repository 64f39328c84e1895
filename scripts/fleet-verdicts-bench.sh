#!/bin/bash
# fleet-verdicts-bench.sh — are fleet verdicts right on a small, busy machine? (root)
#
# NP ranks (default 5) in network namespaces (scripts/fleet-netns.sh) under Open MPI, with
# memory suites (SUITES, default cache,latency) and one link shaped by tc tbf (namespace SLOW,
# default 3, at RATE, default 200mbit), RUNS times (default 5). A run is exactly right when
# the shaped node fails on its network figures, no other node fails, and no slow path is
# reported between two other nodes. Nodes whose figures noise made uncertain are UNKNOWN,
# which is allowed and counted. Target: RUNS of RUNS exactly right.
#
# On a 2-vCPU machine NP ranks oversubscribe the cpus (mpirun --oversubscribe via one slot per
# namespace), and ranks sharing the machine take turns measuring memory; other work on the
# machine is the noise the verdicts must survive. Say so when reporting the result.
#
# env: BWSCOPE (default target/release/bwscope, built if missing)  RUNS  NP  SLOW  RATE  SUITES
#      EXTRA (more fleet flags)  KEEP (a folder to keep every run's fleet folder in)
# Needs: root, iproute2, util-linux, Open MPI, jq.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
NP=${NP:-5}
SLOW=${SLOW:-3}
RATE=${RATE:-200mbit}
SUITES=${SUITES:-cache,latency}
export NETNS_PREFIX=bwfv FLEET_NET=10.251.11
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
NS=$PWD/scripts/fleet-netns.sh
WORK=$(mktemp -d)
cleanup() { bash "$NS" down >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT

BWSCOPE=${BWSCOPE:-target/release/bwscope}
if [ ! -x "$BWSCOPE" ]; then cargo build --release; fi
BWSCOPE=$(readlink -f "$BWSCOPE")

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cpus, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(mpirun --version | head -1); $NP ranks, suites $SUITES, namespace $SLOW shaped to $RATE, $RUNS runs"
SLOW=$SLOW RATE=$RATE bash "$NS" up "$NP" >/dev/null
bash "$NS" hostfile > "$WORK/hosts"

right=0
for i in $(seq "$RUNS"); do
  # shellcheck disable=SC2086
  (cd "$WORK" && mpirun --hostfile "$WORK/hosts" -np "$NP" --bind-to none \
    --mca plm_rsh_agent "bash $NS rsh" \
    --mca oob_tcp_if_include "$FLEET_NET.0/24" --mca btl tcp,self --mca btl_tcp_if_include "$FLEET_NET.0/24" \
    "$BWSCOPE" fleet --control tcp --suites "$SUITES" --out "run$i" ${EXTRA:-} >/dev/null 2>"$WORK/run$i.err") || true
  f=$WORK/run$i/fleet.json
  if [ ! -f "$f" ]; then
    echo "run $i: no fleet.json ($(tail -1 "$WORK/run$i.err"))"
    continue
  fi
  shaped=$(jq -r --argjson s "$SLOW" \
    '[.verdicts.nodes[$s].checks[] | select((.outlier or .below_reference) and (.noisy | not) and (.metric | test("_(out|in)_gbps$")))] | length > 0' "$f")
  healthy_fail=$(jq -r --argjson s "$SLOW" '[.verdicts.nodes[] | select(.rank != $s and .drain) | .label] | join(",")' "$f")
  unknown=$(jq -r '[.verdicts.nodes[] | select((.ok | not) and (.drain | not)) | .label] | join(",")' "$f")
  paths=$(jq -r --argjson s "$SLOW" \
    '[.verdicts.links[] | select(.explained_by == null and (.noisy | not) and .gbps != null and .src != $s and .dst != $s)] | length' "$f")
  noisy=$(jq -r '.verdicts.uncertain_by_noise' "$f")
  ok=no
  if [ "$shaped" = true ] && [ -z "$healthy_fail" ] && [ "$paths" = 0 ]; then ok=yes; right=$((right + 1)); fi
  echo "run $i: exactly right: $ok (shaped node named: $shaped; healthy FAIL: ${healthy_fail:-none};" \
    "UNKNOWN: ${unknown:-none}; noise made $noisy uncertain; false paths: $paths)"
  if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp -r "$WORK/run$i" "$KEEP/"; fi
done
echo "$right of $RUNS runs exactly right"
