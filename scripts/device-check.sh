#!/usr/bin/env bash
# One prepared run on a bigger machine (a 16-core host with a GPU, lent for
# minutes at a time): what a 2-vCPU guest cannot show, in at most 8 minutes,
# every result in one folder as JSON plus summary.md.
#
#   scripts/device-check.sh [OUT]        # default ./device-check
#
# Steps (each bounded by `timeout`, each one's output kept even when another
# fails; SKIP names a step and why where the machine cannot do it):
#   cores     `bwscope cores --all-pairs --exchange cas` (the full CAS matrix and
#             its topology verdict), then `bwscope cores` (classes with CAS, HIT,
#             HITM, checks, fairness): cores-matrix.json, cores.json, the heatmap
#   contended `bwscope watch --every 1s` on the last cpu: 3 quiet samples, then a
#             memory hog (`bwscope threads` reading 4 GiB on all other cpus but
#             one) while 10 more are taken; beside it `bwscope latency` on the
#             remaining cpu (its spell probes): does `memory_contended` fire in
#             those 10 samples? watch.txt, spells.json
#   shared    where the machine shows SMT siblings: a busy loop on cpu 0's
#             sibling while `bwscope cache` reads 16 KiB on cpu 0 (does
#             `core_shared` fire?), and likwid-bench `load_avx` on cpu 0 in the
#             same state where installed (the ratio of the two): shared.json
#   gpu       scripts/gpu-smoke.sh env transfer badinput (short samples): gpu/
#
# Exit 0 when it ran (a check that did not hold is FAIL in summary.md, not an
# exit status: the results are the point); 2 without a bwscope binary.
# Env: BWSCOPE (default target/release/bwscope), STEPS (default
# "cores contended shared gpu"), GPU_FLAGS (added to gpu-smoke's transfers).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BW=${BWSCOPE:-$here/../target/release/bwscope}
OUT=${1:-device-check}
STEPS=${STEPS:-cores contended shared gpu}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
[ -x "$BW" ] || { echo "device-check: no bwscope at $BW (cargo build --release)" >&2; exit 2; }
T0=$(date +%s)
S="$OUT/summary.md"
{
  echo "# device check, $(date -u +%FT%TZ)"
  echo
  echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cpus), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- bwscope: $("$BW" --version 2>&1)"
} > "$S"
say() { echo "$*" | tee -a "$S"; }
has() { case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
"$BW" info --json "$OUT/info.json" > "$OUT/info.txt" 2>&1
ncpu=$(jq '.allowed_cpus | length' "$OUT/info.json")
last=$(jq '.allowed_cpus[-1]' "$OUT/info.json")

if has cores; then
  say ""
  say "## cores"
  timeout 150 "$BW" cores --all-pairs --exchange cas --fairness 0 --json "$OUT/cores-matrix.json" \
    > "$OUT/cores-matrix.txt" 2>&1
  say "- full CAS matrix: rc $?, $(jq '[.records[] | select(.extra.case_view=="pair" and .status=="ok")] | length' "$OUT/cores-matrix.json" 2>/dev/null) pairs stood, $(jq '[.records[] | select(.status=="error")] | length' "$OUT/cores-matrix.json" 2>/dev/null) refused"
  "$BW" plot "$OUT/cores-matrix.json" --chart cores-matrix -o "$OUT/cores-matrix.svg" >/dev/null 2>&1
  timeout 120 "$BW" cores --json "$OUT/cores.json" > "$OUT/cores.txt" 2>&1
  say "- classes (CAS median ns): $(jq -r '[.records[] | select(.extra.case_view=="class" and .extra.case_exchange=="cas") | "\(.extra.case_class) \(.extra.one_way_ns.median|floor)"] | join(", ")' "$OUT/cores.json" 2>/dev/null)"
  say "- verdict: $(jq -r '[.records[].warnings[] | select(.kind|test("shares_a_core|answers_like_class|class_splits|slower_twin")) | .kind] | group_by(.) | map("\(.[0]) ×\(length)") | join(", ") | if .=="" then "the stated topology holds" else . end' "$OUT/cores.json" "$OUT/cores-matrix.json" 2>/dev/null | sort -u | tr '\n' ' ')"
fi

if has contended; then
  say ""
  say "## memory contended: does watch see a hog?"
  if [ "$ncpu" -lt 4 ]; then
    say "SKIP: needs 4 cpus ($ncpu here)"
  else
    probe=$(jq '.allowed_cpus[-2]' "$OUT/info.json")
    hogs=$(jq -r '.allowed_cpus[0:-2] | map(tostring) | join(",")' "$OUT/info.json")
    n=$(( ncpu - 2 ))
    timeout 120 "$BW" watch --every 1s --count 13 --cpu "$last" > "$OUT/watch.txt" 2> "$OUT/watch.err" &
    wpid=$!
    for _ in $(seq 1 60); do [ "$(wc -l < "$OUT/watch.txt")" -ge 3 ] && break; sleep 1; done
    "$BW" threads --cpus "$hogs" --counts "$n" --sizes 4GiB --kernel seq_read_64_scalar \
      --samples 10000 > /dev/null 2>&1 &
    hpid=$!
    sleep 2
    timeout 60 "$BW" latency --cpu "$probe" --sizes 256MiB --view random --samples 10 \
      --json "$OUT/spells.json" > /dev/null 2>&1
    wait "$wpid"
    kill "$hpid" 2>/dev/null; wait "$hpid" 2>/dev/null
    after=$(tail -n +4 "$OUT/watch.txt" | grep -c memory_contended)
    say "- watch: $after of the 10 samples under the hog said memory_contended (quiet ones: $(head -3 "$OUT/watch.txt" | grep -c ' ok')) — $([ "$after" -ge 1 ] && echo PASS || echo FAIL)"
    say "- latency's spell probes: $(jq -r '[.records[] | .spells.memory_contended // 0] | add' "$OUT/spells.json" 2>/dev/null) samples memory_contended; warnings: $(jq -r '[.records[].warnings[].kind] | unique | join(",")' "$OUT/spells.json" 2>/dev/null)"
  fi
fi

if has shared; then
  say ""
  say "## core shared: a busy SMT sibling"
  sib=$(jq -r '[.cpus[] | select(.id==0) | .siblings[] | select(.!=0)][0] // empty' "$OUT/info.json")
  if [ -z "$sib" ]; then
    say "SKIP: cpu 0 has no SMT sibling here"
  else
    timeout 60 "$BW" cache --cpus 0 --sizes 16KiB --kernel seq_read_256_avx2,seq_read_64_scalar \
      --samples 10 --json "$OUT/alone.json" > /dev/null 2>&1
    taskset -c "$sib" sh -c 'while :; do :; done' &
    busy=$!
    timeout 60 "$BW" cache --cpus 0 --sizes 16KiB --kernel seq_read_256_avx2,seq_read_64_scalar \
      --samples 10 --json "$OUT/shared.json" > /dev/null 2>&1
    lk=""
    if command -v likwid-bench >/dev/null; then
      lk=$(timeout 60 likwid-bench -t load_avx -w S0:16kB:1 2>/dev/null | awk '/MByte\/s:/ {print $2/1000}')
    fi
    kill "$busy"; wait "$busy" 2>/dev/null
    ours=$(jq -r '[.records[] | select(.kernel=="seq_read_256_avx2") | .gbps.median][0] // "nan"' "$OUT/shared.json")
    alone=$(jq -r '[.records[] | select(.kernel=="seq_read_256_avx2") | .gbps.median][0] // "nan"' "$OUT/alone.json")
    fired=$(jq -r '[.records[].warnings[].kind] | map(select(.=="core_shared")) | length' "$OUT/shared.json")
    say "- busy loop on cpu $sib: core_shared on $fired of $(jq '.records | length' "$OUT/shared.json") records — $([ "$fired" -ge 1 ] && echo PASS || echo FAIL)"
    say "- 16 KiB AVX2 read on cpu 0: alone $alone GB/s, beside the busy sibling $ours GB/s"
    if [ -n "$lk" ]; then
      say "- likwid-bench load_avx in the same state: $lk GB/s; bwscope / likwid $(awk -v a="$ours" -v b="$lk" 'BEGIN{printf "%.2f", a/b}')"
    else
      say "- likwid-bench: SKIP (not installed)"
    fi
  fi
fi

if has gpu; then
  say ""
  say "## GPU smoke"
  if ! command -v nvidia-smi >/dev/null; then
    say "SKIP: no nvidia-smi"
  else
    left=$(( 480 - ($(date +%s) - T0) - 20 ))
    BWSCOPE=$BW TRANSFER_FLAGS="--samples 3 ${GPU_FLAGS:-}" timeout "$left" \
      "$here/gpu-smoke.sh" -o "$OUT/gpu" env transfer badinput > "$OUT/gpu.txt" 2>&1
    say "- gpu-smoke (env transfer badinput): rc $?, $(grep -c PASS "$OUT/gpu/summary.md" 2>/dev/null) PASS, $(grep -c FAIL "$OUT/gpu/summary.md" 2>/dev/null) FAIL (gpu/summary.md)"
  fi
fi
say ""
say "took $(( $(date +%s) - T0 )) s"
exit 0
