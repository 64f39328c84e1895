#!/usr/bin/env bash
# Everything bwscope claims about a real NVIDIA GPU machine, in one command,
# with the reference tools beside it in the same run. This project's CI has
# no GPU; this is what is run on one (docs/transfer.md holds the results).
#
#   scripts/gpu-smoke.sh [-o DIR] [PHASE...]
#
# Phases (default: all, in this order):
#   env       the machine: GPU, driver, PCIe link, CPUs, NUMA, OpenCL ICDs
#   transfer  bwscope transfer --backend cuda: every kind (pageable, pinned,
#             pinned-wc, registered, mapped), h2d/d2h/bidir/d2d and the SM
#             copy kernels (h2d-sm/d2h-sm/d2d-sm), 4 KiB..1 GiB, verified;
#             the seed's pageable-vs-pinned chart
#   peers     NVIDIA's nvbandwidth (built here with CMake; without Boost the
#             command line is rewritten by scripts/gpu/nvbandwidth-noboost.py)
#             and PyTorch copies timed with CUDA events
#   opencl    bwscope transfer --backend opencl on the NVIDIA ICD (the
#             seed's CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_ONLY path included)
#   badinput  sizes beyond device memory, a missing device index,
#             CUDA_VISIBLE_DEVICES="": one-line errors or skipped records
#   cores     bwscope threads and numa over every core, beside STREAM
#             (gcc -O3 -fopenmp, OMP_PROC_BIND=spread) at the same counts
#   contend   bwscope contend: a CPU read team on half the cores beside
#             pinned h2d, pinned d2h and an SM copy (h2d-sm), alone, in
#             pairs and all together (under a minute); beside it the same
#             team alone in bwscope threads (and STREAM when the cores
#             phase built it) and the same copies alone in bwscope transfer
#
# Then scripts/gpu/summary.py writes DIR/summary.md: the tables, the ratios
# against nvbandwidth, PyTorch and STREAM, and PASS/FAIL for each check.
# Exit: 0 every check passed, 1 a check failed, 2 no usable GPU.
# Environment: BWSCOPE (the binary), PEERS (nvbandwidth and STREAM sources,
# default ./peers), ROUNDS (alternating rounds for the cores phase, 3),
# TRANSFER_FLAGS (added to both transfer runs, e.g. "--samples 2" for a dry
# run against the test stand-in libcuda), CUDA_FLAGS (the CUDA run only),
# THREADS_FLAGS (added to bwscope threads, e.g. "--sizes 8GiB"), NUMA=0 (the
# cores phase skips its `bwscope numa` run, for a short lease).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
BW=${BWSCOPE:-${CARGO_TARGET_DIR:-$here/../target}/release/bwscope}
PEERS=${PEERS:-$here/../peers}
ROUNDS=${ROUNDS:-3}
DIR=gpu-smoke
if [ "${1:-}" = -o ]; then DIR=$2; shift 2; fi
phases=${*:-env transfer peers opencl badinput cores contend}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
log() { echo "== $(date +%T) $*" | tee -a "$DIR/smoke.log"; }
has() { case " $phases " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
[ -x "$BW" ] || { echo "gpu-smoke: no bwscope binary at $BW (cargo build --release)"; exit 2; }

if has env; then
  log env
  {
    echo "date: $(date -u +%F)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm,clocks.max.mem --format=csv 2>&1
    nvidia-smi topo -m 2>&1 | head -20
    (nvcc --version 2>&1 | tail -2) || true
    lscpu 2>&1 | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|NUMA|L1d|L2|L3"
    ls /etc/OpenCL/vendors 2>&1; ldconfig -p | grep -i -E "libOpenCL|nvidia-opencl" 2>&1
    python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))' 2>&1
    "$BW" info 2>&1 | head -30
  } > "$DIR/env.txt" 2>&1
  cat "$DIR/env.txt"
fi

if has transfer; then
  log "transfer (cuda)"
  "$BW" transfer --backend cuda ${TRANSFER_FLAGS:-} ${CUDA_FLAGS:-} --json "$DIR/cuda.json" > "$DIR/cuda.txt" 2> "$DIR/cuda.err"
  echo "rc=$?" >> "$DIR/cuda.err"
  tail -3 "$DIR/cuda.err"
  "$BW" plot "$DIR/cuda.json" -o "$DIR/cuda.svg" > /dev/null 2>> "$DIR/cuda.err" || true
fi

if has peers; then
  log "nvbandwidth"
  nvb=$DIR/nvbandwidth-build
  rm -rf "$nvb" && cp -r "$PEERS/nvbandwidth" "$nvb"
  if ! (cmake -S "$nvb" -B "$nvb/b" -DCMAKE_BUILD_TYPE=Release > "$DIR/nvbandwidth-build.log" 2>&1); then
    echo "nvbandwidth: CMake failed as distributed (Boost missing?); rewriting its command line" | tee -a "$DIR/nvbandwidth-build.log"
    rm -rf "$nvb" && cp -r "$PEERS/nvbandwidth" "$nvb"
    python3 "$here/gpu/nvbandwidth-noboost.py" "$nvb" >> "$DIR/nvbandwidth-build.log" 2>&1
    cmake -S "$nvb" -B "$nvb/b" -DCMAKE_BUILD_TYPE=Release >> "$DIR/nvbandwidth-build.log" 2>&1
  fi
  (cmake --build "$nvb/b" -j"$(nproc)" >> "$DIR/nvbandwidth-build.log" 2>&1) || echo "nvbandwidth: build failed" | tee -a "$DIR/nvbandwidth-build.log"
  if [ -x "$nvb/b/nvbandwidth" ]; then
    for mib in 64 256 1024; do
      "$nvb/b/nvbandwidth" -j -b $mib -t host_to_device_memcpy_ce device_to_host_memcpy_ce \
        host_to_device_bidirectional_memcpy_ce device_local_copy host_to_device_memcpy_sm \
        device_to_host_memcpy_sm > "$DIR/nvbandwidth-$mib.json" 2> "$DIR/nvbandwidth-$mib.err"
    done
  fi
  tail -2 "$DIR/nvbandwidth-build.log"
  log "pytorch"
  python3 "$here/gpu/torch_copies.py" 64 256 1024 > "$DIR/torch.json" 2> "$DIR/torch.err"
  tail -2 "$DIR/torch.err"
fi

if has opencl; then
  log "transfer (opencl)"
  # The NVIDIA driver ships its OpenCL library; an image may lack the ICD
  # loader (libOpenCL.so.1) or the vendor file. PEERS may hold Debian's
  # ocl-icd-libopencl1 .deb for the loader.
  if ! ldconfig -p | grep -q "libOpenCL.so.1"; then
    deb=$(ls "$PEERS"/ocl-icd-libopencl1_*.deb 2>/dev/null | head -1)
    if [ -n "$deb" ]; then
      mkdir -p /tmp/ocl && dpkg -x "$deb" /tmp/ocl
      export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      echo "opencl: ICD loader from $(basename "$deb")" | tee -a "$DIR/opencl.err"
    fi
  fi
  if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
    lib=$(ldconfig -p | grep -o "/[^ ]*libnvidia-opencl.so.1" | head -1)
    if [ -n "$lib" ] && mkdir -p /etc/OpenCL/vendors 2>/dev/null; then
      echo "$lib" > /etc/OpenCL/vendors/nvidia.icd
      echo "opencl: wrote /etc/OpenCL/vendors/nvidia.icd -> $lib" | tee -a "$DIR/opencl.err"
    fi
  fi
  "$BW" transfer --backend opencl ${TRANSFER_FLAGS:-} --json "$DIR/opencl.json" > "$DIR/opencl.txt" 2>> "$DIR/opencl.err"
  echo "rc=$?" >> "$DIR/opencl.err"
  tail -3 "$DIR/opencl.err"
fi

if has badinput; then
  log "bad input"
  {
    bad() { # description, then the command
      local what=$1; shift
      echo "### $what"
      echo "\$ $*"
      timeout 120 "$@" > /tmp/bad.out 2> /tmp/bad.err; echo "rc=$?"
      head -3 /tmp/bad.err; head -c 600 /tmp/bad.out; echo
    }
    bad "size beyond device memory" "$BW" transfer --backend cuda --sizes 200GiB --directions h2d
    bad "a device index that does not exist" "$BW" transfer --backend cuda --device 7
    bad "no visible device" env CUDA_VISIBLE_DEVICES= "$BW" transfer --backend cuda --json -
    bad "opencl: a device index that does not exist" "$BW" transfer --backend opencl --device 9
    bad "the GPU still works afterwards" "$BW" transfer --backend cuda --kinds pinned --directions h2d,h2d-sm --sizes 64MiB
    bad "SM copies asked of OpenCL" "$BW" transfer --backend opencl --directions h2d-sm
  } > "$DIR/badinput.txt" 2>&1
  grep -E "^###|^rc=" "$DIR/badinput.txt"
fi

if has cores; then
  # Like for like: STREAM's static arrays get transparent huge pages only
  # under THP `always`; bwscope is given the same pages (summary.md says which).
  thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || true)
  if [ "$thp" = always ]; then mem=thp; else mem=nohuge; fi
  echo "bwscope --memory $mem; THP policy ${thp:-unknown} (STREAM's arrays get THP only under always)" > "$DIR/pages.txt"
  log "cores: STREAM build"
  ncpu=$(nproc)
  counts=$(python3 -c "n=$ncpu; print(','.join(str(c) for c in sorted({1,2,4,8,12,16,n}) if c<=n))")
  # 3 arrays of 100 M doubles (2.4 GB): far beyond any L3 a 16-core VM sees.
  gcc -O3 -march=native -fopenmp -DSTREAM_ARRAY_SIZE=100000000 -DNTIMES=10 \
    "$PEERS/stream/stream.c" -o "$DIR/stream" 2> "$DIR/stream-build.log" || echo "STREAM: build failed"
  : > "$DIR/stream.txt"
  for round in $(seq "$ROUNDS"); do
    log "cores: round $round: bwscope threads"
    "$BW" threads --smt --counts "$counts" --placement scatter --memory "$mem" ${THREADS_FLAGS:-} --json "$DIR/threads-$round.json" \
      > "$DIR/threads-$round.txt" 2>&1
    log "cores: round $round: STREAM"
    for t in ${counts//,/ }; do
      echo "threads=$t round=$round" >> "$DIR/stream.txt"
      OMP_NUM_THREADS=$t OMP_PROC_BIND=spread OMP_PLACES=threads "$DIR/stream" \
        | grep -E "^(Copy|Scale|Add|Triad):" >> "$DIR/stream.txt"
    done
  done
  if [ "${NUMA:-1}" != 0 ]; then
    log "cores: numa"
    "$BW" numa --json "$DIR/numa.json" > "$DIR/numa.txt" 2>&1
  fi
fi

if has contend; then
  ncpu=$(nproc)
  half=$(( ncpu > 1 ? ncpu / 2 : 1 ))
  team="0-$((half - 1))"
  log "contend: cpus $team read x pinned h2d x pinned d2h x SM copy (h2d-sm)"
  "$BW" contend --cpu "cpus:$team" --device cuda:h2d:pinned --device cuda:d2h:pinned --device cuda:sm-h2d \
    ${CONTEND_FLAGS:-} --json "$DIR/contend.json" > "$DIR/contend.txt" 2> "$DIR/contend.err"
  echo "rc=$?" >> "$DIR/contend.err"
  cat "$DIR/contend.txt"; tail -2 "$DIR/contend.err"
  log "contend: each agent alone in its own suite"
  # Like for like: the kernel the team ran, its total working set (size
  # per thread x threads) and its slice length, read from the contend run. A plain
  # `--kernel seq_read` runs every width at both default sizes, one of
  # them LLC-resident, and its best is a cache figure, not the team's.
  kw=$(python3 -c "
import json, sys
r = [r for r in json.load(open(sys.argv[1]))['records'] if r['extra'].get('case_agent') == 'cpu0'][0]
print(r['extra']['kernels'][0], r['size_bytes'] * r['threads'], round(r['samples'][0]['seconds'] * 1000))" "$DIR/contend.json" 2>/dev/null) || kw="seq_read"
  read -r tk tsz tms <<< "$kw"
  # Samples as long as contend's slices (a few ms of streaming can run far
  # above the sustained rate on a VM).
  "$BW" threads --cpus "$team" --counts "$half" --kernel "$tk" ${tsz:+--sizes "$(( tsz / 1024 ))KiB"} \
    ${tms:+--min-sample-ms "$tms"} --samples 5 \
    --json "$DIR/contend-threads.json" > /dev/null 2>> "$DIR/contend.err"
  "$BW" transfer --backend cuda --kinds pinned,mapped --directions h2d,d2h,h2d-sm --sizes 64MiB --samples 5 \
    ${TRANSFER_FLAGS:-} --json "$DIR/contend-transfer.json" > /dev/null 2>> "$DIR/contend.err"
  if [ -x "$DIR/stream" ]; then
    OMP_NUM_THREADS=$half OMP_PROC_BIND=close OMP_PLACES=threads "$DIR/stream" | grep -E "^(Copy|Triad):" \
      > "$DIR/contend-stream.txt"
  fi
  python3 - "$DIR" <<'PY' | tee "$DIR/contend-beside.txt"
import json, os, sys
d = sys.argv[1]
def load(n):
    try:
        return json.load(open(os.path.join(d, n)))["records"]
    except Exception as e:
        print(f"{n}: unreadable ({e})"); return []
c = load("contend.json")
alone = {r["extra"]["case_agent"]: r for r in c
         if r["extra"].get("case_phase") == r["extra"].get("case_agent") and r["status"] == "ok"}
def best(recs, pred):
    v = [r["gbps"]["best"] for r in recs if r["status"] == "ok" and r.get("gbps") and pred(r)]
    return max(v) if v else None
th = best(load("contend-threads.json"), lambda r: True)
th_med = [r["gbps"]["median"] for r in load("contend-threads.json") if r["status"] == "ok" and r.get("gbps")]
tr = load("contend-transfer.json")
cpu0 = alone.get("cpu0", {})
own = {"cpu0": (f"threads {cpu0.get('extra', {}).get('kernels', ['?'])[0]}, same cpus and size", th)}
for name, direction in (("dev0", "h2d"), ("dev1", "d2h"), ("dev2", "h2d-sm")):
    own[name] = (f"transfer {direction} 64MiB",
                 best(tr, lambda r, x=direction: r["extra"].get("direction") == x))
print("agent  contend alone GB/s  own suite alone GB/s  ratio  (own suite)")
for name, (what, g) in own.items():
    a = alone.get(name, {}).get("extra", {}).get("window_gbps")
    ratio = f"{a / g:.2f}" if a and g else "-"
    print(f"{name:6} {a if a is None else round(a, 2)!s:>19} {g if g is None else round(g, 2)!s:>21} {ratio:>6}  ({what})")
if cpu0 and th_med:
    b = cpu0["gbps"]["best"]
    print(f"cpu0 best 200 ms slice {b:.2f} GB/s vs threads best sample {th:.2f}: {b / th:.2f}; window vs threads median {th_med[0]:.2f}: {cpu0['extra']['window_gbps'] / th_med[0]:.2f}")
    # threads' aggregate is all bytes over the span from the first start to
    # the last end: each sample waits for its slowest thread (as STREAM's
    # and likwid's do). The team streams without waiting, so its rate is
    # the sum of its threads' own rates; threads' like of it is the sum of
    # per_thread_gbps.
    each = [r["per_thread_gbps"] for r in load("contend-threads.json")
            if r["status"] == "ok" and r.get("per_thread_gbps")]
    if each:
        w = cpu0["extra"]["window_gbps"]
        print(f"cpu0 window {w:.2f} vs threads' sum of per-thread rates {sum(each[0]):.2f}: "
              f"{w / sum(each[0]):.2f} (its threads {min(each[0]):.1f}..{max(each[0]):.1f} GB/s each)")
agg = [r for r in c if r["extra"].get("case_agent") == "aggregate"]
if agg:
    a = max(agg, key=lambda r: len(r["extra"].get("phase_agents", [])))["extra"]
    print(f"all together: {a.get('aggregate_gbps')} GB/s, sum of alones {a.get('sum_alone_gbps')}, loss {a.get('loss_percent')} %")
s = os.path.join(d, "contend-stream.txt")
if os.path.exists(s):
    print("STREAM at the team's thread count (MB/s):", " ".join(open(s).read().split()))
PY
fi

log summary
python3 "$here/gpu/summary.py" "$DIR" > "$DIR/summary.md"
rc=$?
cat "$DIR/summary.md"
exit $rc
