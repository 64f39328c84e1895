#!/usr/bin/env bash
# Core to core: bwscope's CAS one-way latency against nviennot/core-to-core-latency
# (crates.io `core-to-core-latency` 1.2.0, MIT; its default bench 1, "CAS latency on a
# single shared cache line", round trip / 2) on the same pair, the two tools in turn
# for ROUNDS rounds (section for compare-peers.sh).
#
# Per round: the peer's figure and bwscope's (`cores --pair A,B --exchange cas`: the
# median of its samples of at least 1 ms, preempted ones retaken); the round's ratio
# bwscope / peer. Printed: every round with the load average beside it, the median of
# the per-round ratios, and the ratio of the bests (each tool's lowest over the rounds).
#
# The peer's figure: by default the median of PEER_RUNS=31 runs of PEER_SAMPLES=1
# sample (1000 round trips, after its own warm-up sample): the median of its samples,
# as bwscope's is. Its own form (PEER_RUNS=1 PEER_SAMPLES=300: the mean of 300
# samples, what it prints) is for a quiet machine only: there the mean takes in every
# sample in which one of its threads was preempted, and one 4 ms time slice among 300
# samples of ~0.1 ms moves it 10-100x (on this project's 2-vCPU guest at load 3.6 it
# read 530-1500 ns for a 55-60 ns pair; one short run once read 7.6 ns for two
# separate cores, which no transfer takes). The script says which form it used.
#
# The peer is built from crates.io into the git-ignored .bench/c2c (cargo install
# --root), once.
#
# Usage: scripts/compare-peers-cores.sh [path/to/bwscope]
# Env:   ROUNDS (default 9), PAIR (default: the first two allowed cpus, e.g. 0,1),
#        PEER (a core-to-core-latency binary to use instead of building one),
#        PEER_RUNS (default 31) and PEER_SAMPLES (default 1): the peer's figure per
#        round is the median of PEER_RUNS runs' means (PEER_RUNS=1 PEER_SAMPLES=300:
#        the peer's own form).
set -euo pipefail
cd "$(dirname "$0")/.."

BW=${1:-${BWSCOPE:-target/release/bwscope}}
ROUNDS=${ROUNDS:-9}
PEER_RUNS=${PEER_RUNS:-31}
PEER_SAMPLES=${PEER_SAMPLES:-1}
need() { command -v "$1" >/dev/null || { echo "needs $1" >&2; exit 2; }; }
need jq
need awk
[ -x "$BW" ] || { echo "no bwscope at $BW (cargo build --release)" >&2; exit 2; }

PEER=${PEER:-.bench/c2c/bin/core-to-core-latency}
if [ ! -x "$PEER" ]; then
  echo "building core-to-core-latency 1.2.0 into .bench/c2c (once)" >&2
  cargo install --quiet --locked core-to-core-latency --version 1.2.0 --root .bench/c2c >&2 ||
    cargo install --quiet core-to-core-latency --version 1.2.0 --root .bench/c2c >&2
fi

if [ -z "${PAIR:-}" ]; then
  PAIR=$("$BW" info --json - --no-clock | jq -r '.allowed_cpus[0:2] | map(tostring) | join(",")')
fi
case $PAIR in *,*) ;; *) echo "needs two cpus (PAIR=A,B); this process has $PAIR" >&2; exit 2 ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== core to core: CAS one-way latency on cpus $PAIR, $ROUNDS rounds, tools in turn"
if [ "$PEER_RUNS" = 1 ]; then
  echo "   peer: core-to-core-latency 1000 $PEER_SAMPLES --cores $PAIR (the mean of its samples)"
else
  echo "   peer: core-to-core-latency 1000 $PEER_SAMPLES --cores $PAIR, $PEER_RUNS runs (the median of their means)"
fi
echo "   bwscope: cores --pair $PAIR --exchange cas --fairness 0 (median of its samples)"
printf '%-6s %-16s %12s %12s %8s\n' round load peer_ns bwscope_ns ratio
for r in $(seq 1 "$ROUNDS"); do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  peer=$(for _ in $(seq 1 "$PEER_RUNS"); do
      "$PEER" 1000 "$PEER_SAMPLES" --cores "$PAIR" --csv 2>/dev/null | awk -F, 'NR==2 {print $1}'
    done | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  "$BW" cores --pair "$PAIR" --exchange cas --fairness 0 --json "$tmp/r$r.json" >/dev/null 2>&1 || true
  ours=$(jq -r '[.records[] | select(.status=="ok" and .extra.case_view=="pair") | .extra.one_way_ns.median][0] // "nan"' "$tmp/r$r.json")
  ratio=$(awk -v a="$ours" -v b="$peer" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.3f", a / b; else print "nan" }')
  printf '%-6s %-16s %12.1f %12.1f %8s\n' "$r" "$load" "$peer" "$ours" "$ratio"
  echo "$peer $ours $ratio" >> "$tmp/rows"
done
awk '
  $3 != "nan" { n++; r[n] = $3; if (!pb || $1 < pb) pb = $1; if (!ob || $2 < ob) ob = $2 }
  END {
    if (n == 0) { print "no round gave both figures"; exit 1 }
    # median of the per-round ratios
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
    m = (n % 2) ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
    printf "median of %d per-round ratios (bwscope / peer): %.3f  (target 0.90-1.10: %s)\n", n, m, (m >= 0.9 && m <= 1.1) ? "PASS" : "FAIL"
    printf "bests: peer %.1f ns, bwscope %.1f ns, ratio %.3f\n", pb, ob, ob / pb
  }' "$tmp/rows"
