#!/usr/bin/env bash
# Run bwscope and peer tools on the same work, one after the other in the
# same run, and print ratios (bwscope / peer; >= 1.00 means bwscope is at
# least as fast). A benchmark, not a test: numbers depend on the machine
# and on what else it is doing, so every cell alternates the two tools
# ROUNDS times and compares the best of each.
#
# Works on any x86 CPU and on aarch64: it reads the machine from `bwscope
# info --json` (CPU model, the matched microarchitecture row, cache sizes:
# the measured `effective_size_bytes` where the host has it, else CPUID's
# or sysfs's), picks the likwid-bench tests this CPU can run (x86: sse,
# avx, avx512 and their `_mem` non-temporal variants; aarch64: load/store/
# copy scalar, `_neon`, `_sve<VL>`, `copy_pair`, `copy_nt`; as
# `likwid-bench -a` lists them and bwscope can run the matching kernel),
# and sizes the cells from the caches. On aarch64 the `arm` section adds
# tinymembench's NEON tests and STREAM where installed
# (scripts/compare-peers-arm.sh). The output
# is Markdown; a full run is kept per microarchitecture in
# docs/peers/<row id>.md so the next person on another CPU sees where the
# numbers came from.
#
#   scripts/compare-peers.sh                      # every section below
#   ROUNDS=5 scripts/compare-peers.sh
#   SECTIONS="machine cache" CELLS="load_avx copy_avx" SIZES="16384" ROUNDS=1 \
#     scripts/compare-peers.sh                    # a quick partial check
#
# Sections: machine (CPU, row, caches), clock (add chain vs imul chain),
# ceilings (L1 limits reached at the clock read next to each record), cache
# (single-thread cells vs likwid-bench, geometric mean), threads (2-thread
# DRAM aggregate vs likwid-bench -w S0:1GB:2, and vs STREAM Copy where a
# STREAM binary is given: STREAM=path; the tools back to back in turn, with
# the median of each round's own ratio beside the bests), times (suite wall times),
# latency, cores (CAS one-way vs core-to-core-latency, per-round ratios), memtype,
# net, transfer, contend (each agent of `bwscope contend`
# alone vs its own suite alone, and its default wall time), reports (each its own
# scripts/compare-peers-<topic>.sh, callable alone).
#
# Env: PAGES (matched: bwscope gets the pages the peers get; default:
# bwscope's own choice, said in each table), ROUNDS (3), CPU (cpu for single-thread cells; default the last
# allowed cpu, away from cpu 0's interrupts), SECTIONS, CELLS (likwid test
# names), SIZES (bytes, overrides the cache-derived sizes), OUT (where the
# Markdown goes; default docs/peers/<row id>.md for a full run, nothing for
# a partial one; OUT=- prints only).
#
# Needs the Debian packages of the peers: likwid, iperf3, clpeak (+ an
# OpenCL ICD such as pocl-opencl-icd), mbw; python3, jq; on aarch64 also
# tinymembench, and STREAM on either (not packaged: build them, put
# them on PATH or set TINYMEMBENCH= / STREAM=). Builds bwscope --release.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
ARCH=$(uname -m)
if [ "$ARCH" = aarch64 ]; then
  ALL_SECTIONS="machine clock ceilings cache threads times arm latency cores memtype net transfer contend reports"
  ALL_CELLS="load load_neon load_sve128 load_sve256 load_sve512 store store_neon store_sve128
    store_sve256 store_sve512 copy copy_pair copy_nt copy_sve512"
else
  ALL_SECTIONS="machine clock ceilings cache threads times latency cores memtype net transfer contend reports"
  ALL_CELLS="load_sse load_avx load_avx512 store_sse store_avx store_avx512 copy_sse copy_avx copy_avx512
  store_mem_sse store_mem_avx store_mem_avx512 copy_mem_sse copy_mem_avx copy_mem_avx512"
fi
# Like for like: the peers (likwid-bench, STREAM, mbw) allocate plain
# memory, which gets transparent huge pages only under THP `always`; by
# default bwscope is given the same pages (PAGES=matched), so a ratio
# compares tools, not page sizes. PAGES=default keeps bwscope's own choice
# (THP where it can) and says so in every table.
THP_POLICY=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || true)
PAGES=${PAGES:-matched}
case $PAGES in
  matched)
    if [ "$THP_POLICY" = always ]; then BW_MEM=thp; PAGES_SAID="both THP (policy always)"
    else BW_MEM=nohuge; PAGES_SAID="both 4 KiB pages (bwscope --memory nohuge; THP policy ${THP_POLICY:-unknown}, so the peers get none)"; fi ;;
  default)
    BW_MEM=""; PAGES_SAID="bwscope's default (THP where it can), peers plain pages (THP policy ${THP_POLICY:-unknown}): NOT like for like" ;;
  *) echo "PAGES must be matched or default" >&2; exit 2 ;;
esac
export BWSCOPE_PEER_MEMORY=$BW_MEM
SECTIONS=${SECTIONS:-$ALL_SECTIONS}
CELLS=${CELLS:-$ALL_CELLS}
cargo build --release -q
BW=target/release/bwscope
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

if ! command -v likwid-bench >/dev/null; then
  # aarch64: likwid is optional (the arm section's peers may be all there is).
  [ "$ARCH" = aarch64 ] || { echo "needs likwid-bench: apt-get install likwid" >&2; exit 2; }
  echo "likwid-bench not installed: its cells are left out" >&2
  likwid-bench() { return 1; }
fi
# Captured once: `cmd | grep -q` under pipefail fails when grep stops
# reading early (SIGPIPE), which would silently drop cells.
KERNELS_HERE=$("$BW" kernels)
LIKWID_TESTS=$(likwid-bench -a 2>/dev/null || true)
"$BW" info --json "$WORK/info.json" >/dev/null
runs_here() { grep -q "^$1 .* yes\$" <<<"$KERNELS_HERE"; }
likwid_has() { grep -q "^$1 " <<<"$LIKWID_TESTS"; }

# One query of the host facts: info KEY -> value.
info() {
  python3 - "$WORK/info.json" "$1" <<'EOF'
import json, sys
h = json.load(open(sys.argv[1]))
key = sys.argv[2]
m = h.get("uarch") or {}
row = m.get("row") or {}
def cache(level):
    cs = [c for c in h["caches"] if c["level"] == level and c["type"] != "instruction"]
    if not cs:
        return ""
    c = cs[0]
    # The cells are bandwidth cells: the size the read curve showed, else
    # CPUID's. (The latency curve's knee can sit far inside a cache on a
    # guest: 3 MiB of a 32 MiB L3 on Zen 4, which put the "L3" cell at
    # 1.5 MiB, just past the 1 MiB L2.)
    return str(c.get("bandwidth_size_bytes") or c["size_bytes"])
llc = max([c["level"] for c in h["caches"] if c["type"] != "instruction"] or [0])
cpu = h["cpu"]
print({
    "model": cpu["model_name"] or "?",
    "ident": f'{cpu["vendor"]} family {cpu["family"]:#x} model {cpu["model"]:#x} stepping {cpu["stepping"]}',
    "hypervisor": cpu.get("hypervisor") or "none",
    "row": row.get("id") or f'unknown-{cpu["vendor"] or "none"}-{cpu["family"]:x}-{cpu["model"]:x}',
    "row_name": row.get("name") or "not in the table (ceilings unknown)",
    "reason": m.get("reason") or "run predates the table",
    "l2": cache(2),
    "l3": cache(llc) if llc >= 3 else "",
    "last_cpu": str(h["allowed_cpus"][-1]),
    "sve_bits": str((h.get("arm") or {}).get("sve_vector_bits") or ""),
}[key])
EOF
}
CPU=${CPU:-$(info last_cpu)}

# Cell sizes: L1 (16 KiB), half of L2, a quarter of L3 but at least 4 x L2
# and at most half of L3, and 1 GiB; rounded down to 64 KiB.
cell_sizes() {
  local l2 l3; l2=$(info l2); l3=$(info l3)
  python3 - "$l2" "$l3" <<'EOF'
import sys
r = lambda b: b // 65536 * 65536
l2 = int(sys.argv[1] or 0); l3 = int(sys.argv[2] or 0)
sizes = [16384]
if l2:
    sizes.append(r(l2 // 2))
if l3 and l2:
    sizes.append(r(min(max(l3 // 4, 4 * l2), l3 // 2)))
sizes.append(1 << 30)
print(" ".join(map(str, sizes)))
EOF
}
SIZES=${SIZES:-$(cell_sizes)}

# The bwscope kernel for an aarch64 likwid test (bench/armv8/*.ptt): load,
# store, copy = ldr/str of x registers; _neon = ldr/str q; _sve<VL> = SVE at
# that vector length (only when it is this core's); copy_pair = ldp/stp x;
# copy_nt = ldnp/stnp x (bwscope's NT copy loads with ldp).
kernel_for_arm() {
  case $1 in
    load) echo seq_read_64_scalar ;;
    load_neon) echo seq_read_128_neon ;;
    store) echo seq_write_64_scalar ;;
    store_neon) echo seq_write_128_neon ;;
    copy) echo seq_copy_64_scalar ;;
    copy_pair) echo seq_copy_128_scalar ;;
    copy_nt) echo seq_copy_128_nt_scalar ;;
    load_sve* | store_sve* | copy_sve*)
      [ "${1##*_sve}" = "$(info sve_bits)" ] || return 1
      case $1 in load*) echo seq_read_sve ;; store*) echo seq_write_sve ;; *) echo seq_copy_sve ;; esac ;;
    *) return 1 ;;
  esac
}

# The bwscope kernel for a likwid test: <op>[_mem]_<isa>.
kernel_for() {
  [ "$ARCH" = aarch64 ] && { kernel_for_arm "$1"; return; }
  local t=$1 nt="" op isa w
  case $t in *_mem_*) nt="_nt" ;; esac
  op=${t%%_*}
  isa=${t##*_}
  case $isa in sse) w="128_sse2" ;; avx) w="256_avx2" ;; avx512) w="512_avx512f" ;; *) return 1 ;; esac
  case $op in load) op=read ;; store) op=write ;; copy) op=copy ;; *) return 1 ;; esac
  [ "$op" = read ] && [ -n "$nt" ] && return 1
  echo "seq_${op}_${w%%_*}${nt}_${w#*_}"
}

bw_json() { # kernel size(bytes) file -> the run's JSON in file
  "$BW" cache --kernel "$1" --sizes "${2}B" --cpus "$CPU" ${BW_MEM:+--memory "$BW_MEM"} --json "$3" >/dev/null 2>&1
}

field() { # file kernel expr -> value from the first ok record of kernel
  python3 -c '
import json, sys
r = [x for x in json.load(open(sys.argv[1]))["records"] if x["kernel"] == sys.argv[2] and x["status"] == "ok"]
if not r:
    print("nan"); sys.exit()
r = r[0]; e = r.get("extra", {})
v = eval(sys.argv[3], {}, {"r": r, "e": e})
print("nan" if v is None else v)' "$1" "$2" "$3"
}

likwid_cell() { # test size(bytes) workgroup-threads -> GB/s (one likwid run)
  taskset -c "$CPU" likwid-bench -t "$1" -w "S0:${2}B:${3:-1}" 2>/dev/null |
    awk '/^MByte\/s:/ {printf "%.3f\n", $2/1000}'
}

best() { python3 -c 'import sys; v=[float(x) for x in sys.argv[1:] if x not in ("", "nan")]; print(max(v) if v else "nan")' "$@"; }
median() { python3 -c 'import sys, statistics; v=[float(x) for x in sys.argv[1:] if x not in ("", "nan")]; print(statistics.median(v) if v else "nan")' "$@"; }

section_machine() {
  echo "## Machine"
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| date | $(date -u +%Y-%m-%dT%H:%MZ) |"
  echo "| CPU | $(info model) ($(info ident)) |"
  echo "| hypervisor | $(info hypervisor) |"
  echo "| microarchitecture row | \`$(info row)\`: $(info row_name) |"
  echo "| matched by | $(info reason) |"
  echo "| L2 / last-level cache used for sizing | $(info l2) B / $(info l3) B |"
  echo "| cell sizes | $SIZES B |"
  echo "| bwscope | $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src || echo ' (modified)') |"
  echo "| likwid-bench | $(dpkg-query -W -f '${Version}' likwid 2>/dev/null || echo '?') |"
  echo "| rounds | $ROUNDS, alternating bwscope and the peer; best of each |"
  echo "| single-thread cpu | $CPU |"
  echo "| pages | $PAGES_SAID |"
}

section_clock() {
  local second="imul r64,r64"
  [ "$ARCH" = aarch64 ] && second="eor x,x"
  echo "## Clock: dependent add chain vs $second chain (target: within 3 %)"
  echo
  echo "| round | add chain GHz | $second chain GHz | apart | used GHz |"
  echo "|---|---|---|---|---|"
  for i in $(seq "$ROUNDS"); do
    "$BW" info --json "$WORK/clock.json" >/dev/null
    python3 - "$WORK/clock.json" "$i" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))["clock"]
hz = c["hz"]
print(f'| {sys.argv[2]} | {c["add_hz"]/1e9:.3f} | {c["imul_hz"]/1e9:.3f} | '
      f'{(max(c["add_hz"], c["imul_hz"]) / min(c["add_hz"], c["imul_hz"]) - 1) * 100:.2f} % | '
      f'{"implausible" if hz is None else f"{hz/1e9:.3f}"} |')
EOF
  done
}

section_ceilings() {
  echo "## L1 ceilings reached: 16 KiB, single thread, best of $ROUNDS runs"
  echo
  echo "Ceiling = the matched row's bytes per cycle x the clock read right after the record's samples"
  echo "(\`extra.ceiling_gbps\`, \`extra.clock_hz\`). Targets: read >= 90 % of the load ceiling, write and copy"
  echo ">= 90 % of the store ceiling."
  echo
  local ks="" cand="seq_read_128_sse2 seq_read_256_avx2 seq_read_512_avx512f seq_write_128_sse2 seq_write_256_avx2
    seq_write_512_avx512f seq_copy_128_sse2 seq_copy_256_avx2 seq_copy_512_avx512f"
  [ "$ARCH" = aarch64 ] && cand="seq_read_128_scalar seq_read_128_neon seq_read_256_neon seq_read_sve
    seq_write_128_neon seq_write_256_neon seq_write_sve seq_copy_128_neon seq_copy_256_neon seq_copy_sve"
  for k in $cand; do
    runs_here "$k" && ks="$ks,$k"
  done
  for i in $(seq "$ROUNDS"); do
    "$BW" cache --kernel "${ks#,}" --sizes 16KiB --cpus "$CPU" --json "$WORK/ceil$i.json" >/dev/null 2>&1
  done
  python3 - "$WORK"/ceil*.json <<'EOF'
import json, sys
best = {}
for f in sys.argv[1:]:
    for r in json.load(open(f))["records"]:
        if r["status"] != "ok":
            continue
        if r["kernel"] not in best or r["gbps"]["best"] > best[r["kernel"]]["gbps"]["best"]:
            best[r["kernel"]] = r
print("| kernel | best GB/s | clock next to it GHz | ceiling GB/s | reached |")
print("|---|---|---|---|---|")
for k, r in best.items():
    e = r.get("extra", {})
    c, hz = e.get("ceiling_gbps"), e.get("clock_hz")
    hz = f"{hz/1e9:.3f}" if hz else "-"
    if c:
        print(f'| {k} | {r["gbps"]["best"]:.1f} | {hz} | {c:.1f} | {r["gbps"]["best"]/c*100:.1f} % |')
    else:
        print(f'| {k} | {r["gbps"]["best"]:.1f} | {hz} | unknown | - |')
EOF
}

section_cache() {
  echo "## Single-thread cells vs likwid-bench (taskset -c $CPU, -w S0:<size>B:1), best of $ROUNDS alternating rounds; pages: $PAGES_SAID"
  echo
  echo "bwscope's figure per round is its record's best sample (7 samples of >= 10 ms); likwid's is its one"
  echo "figure over ~1 s. The median column is bwscope's median sample, best over the rounds, for comparison."
  echo "Each round runs the two seconds apart and is labelled by the spell bwscope's spell probes found it in"
  echo "(shared: the core gave the probe under 0.75 of its load rate in at least a quarter of the samples;"
  echo "docs/noise.md); the round-ratio medians are over own-core rounds and shared rounds apart, so a"
  echo "table never sets bwscope in one kind of spell against the peer in another."
  echo
  echo "| likwid test | bwscope kernel | size B | bwscope GB/s | bwscope median | likwid GB/s | ratio | round ratio, median: own core (n) | shared core (n) |"
  echo "|---|---|---|---|---|---|---|---|---|"
  local ratios=()
  for size in $SIZES; do
    for t in $CELLS; do
      local k
      k=$(kernel_for "$t") || continue
      runs_here "$k" && likwid_has "$t" || continue
      local bb=() bm=() lk=() sp=()
      for i in $(seq "$ROUNDS"); do
        bw_json "$k" "$size" "$WORK/cell.json"
        bb+=("$(field "$WORK/cell.json" "$k" 'r["gbps"]["best"]')")
        bm+=("$(field "$WORK/cell.json" "$k" 'r["gbps"]["median"]')")
        sp+=("$(field "$WORK/cell.json" "$k" '"shared" if (r.get("spells") or {}).get("core_shared", 0) * 4 >= max((r.get("spells") or {}).get("probed", 1), 1) and (r.get("spells") or {}).get("core_shared", 0) >= 2 else "own"')")
        lk+=("$(likwid_cell "$t" "$size")")
      done
      local b m l r split
      b=$(best "${bb[@]}"); m=$(best "${bm[@]}"); l=$(best "${lk[@]}")
      r=$(python3 -c "b=float('$b'); l=float('$l'); print(f'{b/l:.3f}' if l == l and l > 0 and b == b else 'nan')")
      [ "$r" != nan ] && ratios+=("$r")
      split=$(python3 -c '
import statistics, sys
n = len(sys.argv) // 3
b, l, s = sys.argv[1:1 + n], sys.argv[1 + n:1 + 2 * n], sys.argv[1 + 2 * n:]
out = []
for kind in ("own", "shared"):
    v = [float(x) / float(y) for x, y, k in zip(b, l, s) if k == kind and x != "nan" and y != "nan" and float(y) > 0]
    out.append(f"{statistics.median(v):.3f} ({len(v)})" if v else "- (0)")
print(" | ".join(out))' "${bb[@]}" "${lk[@]}" "${sp[@]}")
      printf '| %s | %s | %s | %.1f | %.1f | %.1f | %s | %s |\n' "$t" "$k" "$size" "$b" "$m" "$l" "$r" "$split"
    done
  done
  echo
  python3 -c '
import math, sys
v = [float(x) for x in sys.argv[1:]]
if v:
    g = math.exp(sum(map(math.log, v)) / len(v))
    print(f"Geometric mean of {len(v)} ratios: **{g:.3f}** (target >= 1.05); lowest {min(v):.3f} (target >= 0.97)")
else:
    print("No cell ran (no likwid test and bwscope kernel pair this CPU can run).")' "${ratios[@]}"
}

section_threads() {
  # likwid's S0 domain, first two hardware threads (physical cores first).
  local cpus
  cpus=$(likwid-pin -p 2>/dev/null | awk '/^Domain S0:/ {getline; gsub(/[ \t]/, ""); print; exit}' | cut -d, -f1,2)
  echo "## 2-thread DRAM aggregate vs likwid-bench -w S0:1GB:2 (cpus ${cpus:-?}), best of $ROUNDS alternating rounds; pages: $PAGES_SAID"
  echo
  echo "Each round gives each tool one figure (bwscope: its record's best sample; likwid: its one figure), the"
  echo "two runs back to back, in turn first. Where the host's DRAM is shared, its fast spells (tens of seconds)"
  echo "decide the bests, so the medians over the rounds are given too, and the median of each round's own ratio:"
  echo "two runs seconds apart mostly see the same spell, so that ratio compares the tools, not the moments."
  echo
  echo "| likwid test | bwscope kernel | bwscope GB/s | likwid GB/s | ratio | bwscope median | likwid median | ratio | round ratio, median | rounds bwscope ≥ likwid |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  local tests
  if [ "$ARCH" = aarch64 ]; then
    tests="load_neon store_neon copy_pair"
  else
    local isa=avx
    runs_here seq_read_512_avx512f && likwid_has load_avx512 && isa=avx512
    tests="load_$isa store_$isa copy_$isa"
  fi
  for t in $tests; do
    local k; k=$(kernel_for "$t")
    runs_here "$k" && likwid_has "$t" || continue
    local bb=() lk=()
    local lb lw
    for i in $(seq "$ROUNDS"); do
      # In turn first, so that neither tool always runs just after the other.
      [ $((i % 2)) = 0 ] && lw=$(likwid-bench -t "$t" -w S0:1GB:2 2>/dev/null | awk '/^MByte\/s:/ {printf "%.3f\n", $2/1000}')
      "$BW" threads --counts 2 --threads 2 ${cpus:+--cpus "$cpus"} --sizes 1GB --kernel "$k" ${BW_MEM:+--memory "$BW_MEM"} \
        --json "$WORK/thr.json" >/dev/null 2>&1 || true
      lb=$(python3 -c '
import json, sys
r = [x for x in json.load(open(sys.argv[1]))["records"] if x["status"] == "ok" and x["threads"] == 2]
print(r[0]["gbps"]["best"] if r else "nan")' "$WORK/thr.json")
      [ $((i % 2)) = 1 ] && lw=$(likwid-bench -t "$t" -w S0:1GB:2 2>/dev/null | awk '/^MByte\/s:/ {printf "%.3f\n", $2/1000}')
      bb+=("$lb"); lk+=("${lw:-nan}")
    done
    python3 -c '
import statistics, sys
n = len(sys.argv) // 2
b = [float(x) for x in sys.argv[2:n + 1]]
l = [float(x) for x in sys.argv[n + 1:]]
pairs = [(x, y) for x, y in zip(b, l) if x == x and y == y and y > 0]
r = lambda x, y: f"{x / y:.3f}" if y > 0 else "nan"
ok = lambda v: [x for x in v if x == x] or [float("nan")]
bb, ll = ok(b), ok(l)
rr = statistics.median([x / y for x, y in pairs]) if pairs else float("nan")
won = sum(x >= y for x, y in pairs)
print(f"| {sys.argv[1]} | {max(bb):.1f} | {max(ll):.1f} | {r(max(bb), max(ll))} | {statistics.median(bb):.1f} "
      f"| {statistics.median(ll):.1f} | {r(statistics.median(bb), statistics.median(ll))} | {rr:.3f} | {won} of {len(pairs)} |")
' "$t | $k" "${bb[@]}" "${lk[@]}"
  done
  [ "$ARCH" = aarch64 ] || threads_vs_stream "$cpus" "${isa:-avx}"
}

# STREAM's Copy at two threads against bwscope's two NT copies, alternating.
# GCC turns Copy into memcpy, which glibc runs with non-temporal stores four
# pages at a time at this size: seq_copy_*_nt is one stream, pages_copy_*_nt
# is glibc's shape. Needs a STREAM binary (STREAM=path, or `stream` on PATH;
# build stream.c with -O3 -march=native -fopenmp and a DRAM-sized array).
threads_vs_stream() { # cpus isa
  local stream=${STREAM:-$(command -v stream || true)}
  echo
  if [ -z "$stream" ]; then
    echo "STREAM: not installed (build stream.c with -fopenmp; STREAM=path)"
    return 0
  fi
  local seq; seq=$(kernel_for "copy_mem_$2")
  local ks="$seq" pages="pages_${seq#seq_}" places=""
  runs_here "$pages" && ks="$seq,$pages"
  [ -n "$1" ] && places=$(sed 's/[0-9]\+/{&}/g' <<<"$1")
  echo "STREAM Copy vs bwscope's NT copies at 2 threads (\`threads --sizes 1GB\`; STREAM: its own array size,"
  echo "OMP_NUM_THREADS=2 OMP_PROC_BIND=spread${places:+ OMP_PLACES=$places}), $ROUNDS alternating rounds; pages: $PAGES_SAID"
  echo
  echo "| kernel | bwscope best | bwscope median | STREAM Copy best | STREAM median | best ratio | median ratio | round ratio, median |"
  echo "|---|---|---|---|---|---|---|---|"
  local sc=() i
  declare -A got=()
  for i in $(seq "$ROUNDS"); do
    "$BW" threads --counts 2 --threads 2 ${1:+--cpus "$1"} --sizes 1GB --kernel "$ks" ${BW_MEM:+--memory "$BW_MEM"} \
      --json "$WORK/thr.json" >/dev/null 2>&1 || true
    # One word per kernel per round ("nan" where it has no record), so the
    # rounds line up with STREAM's.
    while read -r k g; do got[$k]="${got[$k]:-} $g"; done < <(python3 -c '
import json, sys
ok = {x["kernel"]: x["gbps"]["best"] for x in json.load(open(sys.argv[1]))["records"]
      if x["status"] == "ok" and x["threads"] == 2}
for k in sys.argv[2].split(","):
    print(k, ok.get(k, "nan"))' "$WORK/thr.json" "$ks")
    local v; v=$(OMP_NUM_THREADS=2 OMP_PROC_BIND=spread OMP_PLACES=${places:-threads} "$stream" 2>/dev/null |
      awk '/^Copy:/ {printf "%.3f\n", $2/1000}')
    sc+=("${v:-nan}")
  done
  local sb sm; sb=$(best "${sc[@]}"); sm=$(median "${sc[@]}")
  for k in ${ks//,/ }; do
    # shellcheck disable=SC2086 # the rounds' figures, one word each
    local b m; b=$(best ${got[$k]:-}); m=$(median ${got[$k]:-})
    # shellcheck disable=SC2086
    python3 -c "
import statistics, sys
r = lambda x, y: f'{x/y:.3f}' if y > 0 else 'nan'
b, m, sb, sm = float('$b'), float('$m'), float('$sb'), float('$sm')
n = (len(sys.argv) - 1) // 2
p = [x / y for x, y in zip(map(float, sys.argv[1:n + 1]), map(float, sys.argv[n + 1:])) if x == x and y == y and y > 0]
pr = f'{statistics.median(p):.3f}' if p else 'nan'
print(f'| $k | {b:.1f} | {m:.1f} | {sb:.1f} | {sm:.1f} | {r(b, sb)} | {r(m, sm)} | {pr} |')" ${got[$k]:-} "${sc[@]}"
  done
}

section_times() {
  echo "## Suite wall times"
  echo
  local t0 t1
  t0=$(date +%s.%N); "$BW" --no-save >/dev/null 2>&1 || true; t1=$(date +%s.%N)
  python3 -c "print(f'- bwscope (default survey): {$t1-$t0:.1f} s (target <= 60 s)')"
  t0=$(date +%s.%N); "$BW" cache --quick >/dev/null 2>&1; t1=$(date +%s.%N)
  python3 -c "print(f'- bwscope cache --quick: {$t1-$t0:.1f} s (target <= 10 s)')"
  t0=$(date +%s.%N); "$BW" cache >/dev/null 2>&1; t1=$(date +%s.%N)
  python3 -c "print(f'- bwscope cache (full default sweep): {$t1-$t0:.1f} s (target <= 120 s)')"
}

fenced() { # title command... : a topic script's own output, verbatim
  echo "## $1"
  echo
  echo '```'
  shift
  "$@" || echo "(exit $?)"
  echo '```'
}
section_latency() { fenced "Latency" env BWSCOPE=$BW scripts/compare-peers-latency.sh; }
section_cores() { fenced "Core to core vs core-to-core-latency (CAS)" scripts/compare-peers-cores.sh "$BW"; }
section_memtype() { fenced "Memory types" env BWSCOPE=$BW scripts/compare-peers-memtype.sh; }
section_net() { fenced "Network vs iperf3" env BWSCOPE=$BW scripts/compare-peers-net.sh; }
section_transfer() { fenced "Host-device transfers vs clpeak" env BWSCOPE=$BW scripts/compare-peers-transfer.sh; }
section_contend() { fenced "Contend: each agent alone vs its own suite alone" env BWSCOPE=$BW scripts/compare-peers-contend.sh; }
section_reports() { fenced "Reports, memcpy vs mbw" scripts/compare-peers-reports.sh "$BW"; }
section_arm() { fenced "tinymembench (NEON) and STREAM" env BWSCOPE=$BW CPU=$CPU scripts/compare-peers-arm.sh; }

main() {
  echo "# bwscope vs peers on $(info model) ($(info row))"
  echo
  for s in $SECTIONS; do
    "section_$s"
    echo
  done
}

partial=""
[ "$SECTIONS" = "$ALL_SECTIONS" ] || partial="sections"
[ "$CELLS" = "$ALL_CELLS" ] || partial="$partial cells"
[ "$SIZES" = "$(cell_sizes)" ] || partial="$partial sizes"
[ "$ROUNDS" -ge 3 ] || partial="$partial rounds"
if [ -z "${OUT+set}" ]; then
  if [ -z "$partial" ]; then OUT="docs/peers/$(info row).md"; else OUT=-; fi
fi
main | tee "$WORK/out.md"
if [ "$OUT" != - ]; then
  mkdir -p "$(dirname "$OUT")"
  {
    [ -n "$partial" ] && echo "> Partial run (changed:$partial); not the full comparison." && echo
    cat "$WORK/out.md"
  } >"$OUT"
  echo "written to $OUT" >&2
elif [ -n "$partial" ]; then
  echo "partial run (changed:$partial): not kept under docs/peers (set OUT=FILE to keep it)" >&2
fi
