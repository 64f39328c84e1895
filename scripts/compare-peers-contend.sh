#!/bin/bash
# compare-peers-contend.sh — each `bwscope contend` agent alone against its
# own suite alone, in the same script, alternating, best of ROUNDS:
#   - a CPU read team vs `bwscope threads` on the same cpus with the kernel,
#     per-thread size and sample length (contend's slice) the team ran
#     (read from the contend run): the
#     contend window (a mean) vs the threads median, and the best 200 ms
#     slice vs the best threads sample;
#   - a loopback TCP flow vs `bwscope net run` (stream mode, 1 stream) to a
#     transponder on 127.0.0.1.
# Target: each ratio within 5 % (0.95..1.05). Then the wall time of
# `bwscope contend` with its defaults (target <= 60 s on 2 cores).
#
# env: BWSCOPE (default target/release/bwscope)  ROUNDS (3)  CPUS (the
#      team's cpus, default every allowed cpu)  PORT (5283)
#      SIZE (the team's bytes per thread; default contend's own)
#      BWSCOPE_PEER_MEMORY (pages for both sides, as compare-peers.sh sets)
# Needs: python3. Only 127.0.0.1 is contacted.
set -euo pipefail
BW=${BWSCOPE:-target/release/bwscope}
ROUNDS=${ROUNDS:-3}; PORT=${PORT:-5283}
MEM=${BWSCOPE_PEER_MEMORY:-}
[ -x "$BW" ] || { echo "contend: $BW missing (cargo build --release)"; exit 1; }
CPUS=${CPUS:-$("$BW" info --json - 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin)["allowed_cpus"]
print(",".join(map(str, c)))')}
N=$(echo "$CPUS" | tr ',' '\n' | wc -l)
W=$(mktemp -d)
srv=""
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
"$BW" net serve --bind 127.0.0.1 --port "$PORT" >/dev/null 2>&1 & srv=$!
sleep 0.5

for r in $(seq "$ROUNDS"); do
  "$BW" contend --cpu "cpus:$CPUS" --net loopback --phases alone ${SIZE:+--size "$SIZE"} ${MEM:+--memory "$MEM"} \
    --json "$W/c$r.json" >/dev/null 2>&1 || true
  read -r k ws ms < <(python3 -c '
import json, sys
r = [r for r in json.load(open(sys.argv[1]))["records"] if r["extra"].get("case_agent") == "cpu0"][0]
print(r["extra"]["kernels"][0], r["size_bytes"] * r["threads"], round(r["samples"][0]["seconds"] * 1000))' "$W/c$r.json" 2>/dev/null || echo "seq_read 0 200")
  # Samples as long as contend's slices: on some VMs a few ms of streaming
  # run far above the sustained rate (128 MiB read at 60 GB/s in 2 ms
  # samples, 12.5 GB/s in 20 ms and longer ones), and the sampler's
  # default picks short samples at mid sizes.
  "$BW" threads --cpus "$CPUS" --counts "$N" --kernel "$k" --sizes "$((ws / 1024))KiB" --samples 5 --min-sample-ms "$ms" \
    ${MEM:+--memory "$MEM"} --json "$W/t$r.json" >/dev/null 2>&1 || true
  "$BW" net run "127.0.0.1:$PORT" -m stream -t 2 -O 1 -P 1 --json "$W/n$r.json" >/dev/null 2>&1 || true
done

python3 - "$W" "$ROUNDS" "$CPUS" <<'PY'
import json, os, sys
d, rounds, cpus = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def recs(n):
    try:
        return json.load(open(os.path.join(d, n)))["records"]
    except Exception:
        return []
def best(v):
    v = [x for x in v if x]
    return max(v) if v else None
team_w, team_s, th_med, th_best, flow, net = [], [], [], [], [], []
kernel = "?"
for r in range(1, rounds + 1):
    for x in recs(f"c{r}.json"):
        e = x["extra"]
        if x["status"] != "ok" or e.get("case_phase") != e.get("case_agent"):
            continue
        if e["case_agent"] == "cpu0":
            team_w.append(e["window_gbps"]); team_s.append(x["gbps"]["best"])
            kernel = e["kernels"][0]
        elif e["case_agent"] == "net0":
            flow.append(e["window_gbps"])
    t = [x for x in recs(f"t{r}.json") if x["status"] == "ok" and x["kernel"] == kernel]
    th_med.append(t[0]["gbps"]["median"] if t else None)
    th_best.append(t[0]["gbps"]["best"] if t else None)
    n = [x["extra"].get("receiver_gbitps") for x in recs(f"n{r}.json") if x["status"] == "ok"]
    net.append(sum(v for v in n if v) / 8 if n else None)
print(f"each agent alone vs its own suite alone, best of {rounds} alternating rounds (GB/s = 10^9 B/s)")
print(f"{'agent':34} {'contend':>8} {'own suite':>10} {'ratio':>6}  own suite")
rows = [
    (f"cpu team {cpus} window (mean)", best(team_w), best(th_med), f"threads {kernel} median, same cpus and size"),
    (f"cpu team {cpus} best slice", best(team_s), best(th_best), f"threads {kernel} best sample"),
    ("loopback flow (TCP payload)", best(flow), best(net), "net run 127.0.0.1 stream, 1 stream, receiver / 8"),
]
for name, a, b, what in rows:
    ratio = f"{a / b:.3f}" if a and b else "-"
    fa = f"{a:.2f}" if a else "-"
    fb = f"{b:.2f}" if b else "-"
    print(f"{name:34} {fa:>8} {fb:>10} {ratio:>6}  {what}")
PY

t0=$(date +%s.%N)
"$BW" contend >/dev/null 2>&1 || echo "(bwscope contend exited $?)"
t1=$(date +%s.%N)
python3 -c "print(f'bwscope contend with defaults: {$t1-$t0:.1f} s (target <= 60 s on 2 cores)')"
