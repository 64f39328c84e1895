#!/usr/bin/env python3
"""Summarise a gpu-smoke.sh folder as Markdown: bwscope's tables, its ratios
against nvbandwidth, PyTorch and STREAM from the same run, and PASS/FAIL for
each check. Reads only what the phases wrote; a phase not run is a line
saying so. Exit 1 when a check failed, 2 when there was no GPU.
Usage: summary.py DIR
"""
import glob
import json
import os
import re
import statistics
import sys

D = sys.argv[1]
MiB = 1 << 20
fails = []
out = []


def p(s=""):
    out.append(s)


def load(name):
    path = os.path.join(D, name)
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError as e:
        p(f"- `{name}` did not parse: {e}")
        return None


def check(what, ok, detail=""):
    p(f"- {'PASS' if ok else 'FAIL'}  {what}{': ' + detail if detail else ''}")
    if not ok:
        fails.append(what)


def fmt(x, nd=1):
    return "-" if x is None else f"{x:.{nd}f}"


def size_name(b):
    for unit, n in (("GiB", 1 << 30), ("MiB", MiB), ("KiB", 1 << 10)):
        if b >= n and b % n == 0:
            return f"{b // n} {unit}"
    return f"{b} B"


p("# bwscope on a real GPU: gpu-smoke summary")
p()
env = os.path.join(D, "env.txt")
if os.path.exists(env):
    p("## Machine")
    p("```")
    p(open(env).read().strip()[:3000])
    p("```")

# ---------------------------------------------------------------- CUDA ---
cuda = load("cuda.json")
nogpu = False


def recs(run, **kw):
    res = []
    for r in run["records"]:
        e = r.get("extra", {})
        if all((e.get(k) if k not in ("status", "size_bytes") else r.get(k)) == v for k, v in kw.items()):
            res.append(r)
    return res


def one(run, **kw):
    r = recs(run, **kw)
    return r[0] if r else None


def g(r, stat="median", key="gbps"):
    if r is None or r.get("status") != "ok":
        return None
    v = r["extra"].get(key[6:]) if key.startswith("extra.") else r.get(key)
    return v.get(stat) if v else None


if cuda is None:
    p("\n## CUDA transfers: not run")
elif cuda["records"][0]["status"] == "skipped" and len(cuda["records"]) == 1:
    p(f"\n## CUDA transfers: skipped: {cuda['records'][0].get('reason')}")
    nogpu = True
else:
    o = cuda["options"]
    dev, pci = o["device"], o.get("pci") or {}
    p("\n## CUDA transfers (`bwscope transfer --backend cuda`)")
    p(f"\nDevice: **{dev['name']}**, driver CUDA {dev.get('driver_version')}, PCI {dev.get('pci_bus_id')}, "
      f"link {pci.get('link_speed_gts')} GT/s x{pci.get('link_width')} (gen {pci.get('link_gen')}) = "
      f"{fmt(pci.get('theoretical_gbps'))} GB/s per direction, NUMA node {pci.get('numa_node')}, "
      f"local cpus {pci.get('local_cpus')}; host cpus {o.get('host_cpus')} ({o.get('placement_source')}); "
      f"copy engines {dev.get('copy_engines')}. Run started {cuda.get('started_at')}.")
    for n in dev.get("notes", []):
        p(f"- note: {n}")
    rs = cuda["records"]
    p("\n### Checks")
    errors = [r for r in rs if r["status"] == "error"]
    check("no error records", not errors,
          "; ".join(f"{r['kernel']} {size_name(r.get('size_bytes') or 0)}: {r.get('reason')}" for r in errors[:5]))
    measured = [r for r in rs if r["status"] == "ok" and not r["extra"].get("direction", "").startswith("cpu-")]
    unverified = [r for r in measured if r["extra"].get("verified") is not True]
    check(f"every measured case verified ({len(measured)} cases)", measured and not unverified,
          ", ".join(r["kernel"] for r in unverified[:5]))
    skipped = [r for r in rs if r["status"] == "skipped"]
    for reason in sorted({r.get("reason") for r in skipped}):
        n = sum(1 for r in skipped if r.get("reason") == reason)
        p(f"- skipped ({n} records): {reason}")
    big = sorted({r["size_bytes"] for r in rs if (r.get("size_bytes") or 0) >= 64 * MiB})
    ok = all((g(one(cuda, host_kind="pinned", direction="h2d", size_bytes=s), "best") or 0)
             >= (g(one(cuda, host_kind="pageable", direction="h2d", size_bytes=s), "best") or 1e9) for s in big)
    check("pinned h2d >= pageable h2d at >= 64 MiB", bool(big) and ok)
    wc = one(cuda, host_kind="pinned-wc", direction="cpu-read")
    if wc is not None:
        # Not a pass/fail: whether the CPU sees WC depends on the platform.
        # In a KVM guest whose passthrough GPU snoops, the hypervisor maps
        # guest RAM write-back whatever the guest's page attributes say.
        p(f"- note: pinned-wc behaves write-combined: {wc['extra'].get('behaves_wc')} "
          f"(CPU read/write = {fmt(wc['extra'].get('cpu_read_over_write'), 3)}; WC reads are 10-50x slower than writes)")
    pc = one(cuda, host_kind="pinned", direction="cpu-read")
    if pc is not None:
        check("pinned reads are cached (not WC)", pc["extra"].get("behaves_wc") is False)
    link = pci.get("theoretical_gbps")
    if link:
        over = [r for r in measured if r["extra"]["direction"] in ("h2d", "d2h", "h2d-sm", "d2h-sm")
                and r["gbps"]["best"] > link * 1.05]
        check(f"h2d/d2h below the link rate ({fmt(link)} GB/s)", not over,
              ", ".join(f"{r['kernel']} {fmt(r['gbps']['best'])}" for r in over[:5]))
    blocked = [r for r in measured if r["extra"].get("timer") == "device-events" and r["extra"].get("host_kind") != "pageable"]
    p(f"- start blocker used in {sum(1 for r in blocked if r['extra'].get('start_blocker'))} of {len(blocked)} event-timed cases")

    sizes = sorted({r["size_bytes"] for r in rs if r.get("size_bytes") and not r["extra"].get("direction", "").startswith("cpu-")})
    p("\n### The seed's experiment: pageable vs pinned (GB/s, median of samples; best in brackets)")
    p("\n| size | pageable h2d | pinned h2d | pinned/pageable | pageable d2h | pinned d2h | pinned/pageable |")
    p("|---|---|---|---|---|---|---|")
    for s in sizes:
        row = [size_name(s)]
        for d in ("h2d", "d2h"):
            a = one(cuda, host_kind="pageable", direction=d, size_bytes=s)
            b = one(cuda, host_kind="pinned", direction=d, size_bytes=s)
            row += [f"{fmt(g(a))} ({fmt(g(a, 'best'))})", f"{fmt(g(b))} ({fmt(g(b, 'best'))})",
                    fmt(g(b) / g(a), 2) if g(a) and g(b) else "-"]
        p("| " + " | ".join(row) + " |")
    p("\nChart: `cuda.svg` (and `cuda-*.svg`), drawn by `bwscope plot cuda.json`.")

    p("\n### Every kind and direction (GB/s, median; bidir = both directions together)")
    dirs = ["h2d", "d2h", "bidir", "h2d-sm", "d2h-sm"]
    p("\n| kind | size | " + " | ".join(dirs) + " |")
    p("|---|---|" + "---|" * len(dirs))
    for kind in o["kinds"]:
        for s in [x for x in sizes if x >= 4 * MiB]:
            row = [kind, size_name(s)] + [fmt(g(one(cuda, host_kind=kind, direction=d, size_bytes=s))) for d in dirs]
            p("| " + " | ".join(row) + " |")
    p("\n| size | d2d (read+write) | d2d payload | d2d-sm (read+write) | d2d-sm payload |")
    p("|---|---|---|---|---|")
    for s in sizes:
        a, b = one(cuda, direction="d2d", size_bytes=s), one(cuda, direction="d2d-sm", size_bytes=s)
        p(f"| {size_name(s)} | {fmt(g(a))} | {fmt(g(a, key='payload_gbps'))} | {fmt(g(b))} | {fmt(g(b, key='payload_gbps'))} |")

    # ------------------------------------------------------- nvbandwidth ---
    nvb = {}
    for path in sorted(glob.glob(os.path.join(D, "nvbandwidth-*.json"))):
        mib = int(re.search(r"nvbandwidth-(\d+)\.json", path).group(1))
        try:
            doc = json.load(open(path))
        except ValueError:
            continue
        for t in doc.get("nvbandwidth", {}).get("testcases", []):
            try:
                nvb[(t["name"], mib)] = float(t.get("sum"))
            except (TypeError, ValueError):
                nvb[(t["name"], mib)] = None
    p("\n## Side by side with nvbandwidth (same run; nvbandwidth: median of 3 samples of 16 copies)")
    if not nvb:
        log = os.path.join(D, "nvbandwidth-build.log")
        p("\nnvbandwidth did not run: " + (open(log).read()[-1500:] if os.path.exists(log) else "phase not run"))
    else:
        p("\n| test | size | nvbandwidth GB/s | bwscope median | bwscope best | median ratio | target |")
        p("|---|---|---|---|---|---|---|")
        pairs = [
            ("host_to_device_memcpy_ce", dict(host_kind="pinned", direction="h2d"), "gbps", 0.98),
            ("device_to_host_memcpy_ce", dict(host_kind="pinned", direction="d2h"), "gbps", 0.98),
            ("host_to_device_bidirectional_memcpy_ce", dict(host_kind="pinned", direction="bidir"), "extra.h2d_gbps", None),
            ("device_local_copy", dict(direction="d2d"), "payload_gbps", 0.95),
            ("host_to_device_memcpy_sm", dict(host_kind="pinned", direction="h2d-sm"), "gbps", None),
            ("device_to_host_memcpy_sm", dict(host_kind="pinned", direction="d2h-sm"), "gbps", None),
        ]
        for name, sel, key, target in pairs:
            for mib in (64, 256, 1024):
                ref = nvb.get((name, mib))
                r = one(cuda, size_bytes=mib * MiB, **sel)
                med, best = g(r, "median", key), g(r, "best", key)
                ratio = med / ref if med and ref else None
                tgt = f">= {target}" if target else "-"
                p(f"| {name} | {mib} MiB | {fmt(ref)} | {fmt(med)} | {fmt(best)} | {fmt(ratio, 3)} | {tgt} |")
                if target and ratio is not None:
                    check(f"{name} {mib} MiB: bwscope/nvbandwidth = {ratio:.3f} >= {target}", ratio >= target)

    # ----------------------------------------------------------- PyTorch ---
    torch = load("torch.json")
    p("\n## Side by side with PyTorch (CUDA events, 7 samples of 10 copies)")
    if torch is None:
        p("\nPyTorch did not run (see torch.err).")
    else:
        p(f"\ntorch {torch['torch']} on {torch['device']}")
        p("\n| kind | direction | size | torch min..max GB/s | torch median | bwscope median | bwscope best | within torch's spread |")
        p("|---|---|---|---|---|---|---|---|")
        for t in torch["results"]:
            kind, d, s, v = t["kind"], t["direction"], t["size_bytes"], t["gbps"]
            r = one(cuda, host_kind=kind, direction=d, size_bytes=s) if kind else one(cuda, direction="d2d", size_bytes=s)
            key = "payload_gbps" if d == "d2d" else "gbps"
            med = g(r, "median", key)
            inside = med is not None and min(v) <= med <= max(v) * 1.0
            p(f"| {kind or '-'} | {d} | {size_name(s)} | {fmt(min(v))}..{fmt(max(v))} | {fmt(statistics.median(v))} | "
              f"{fmt(med)} | {fmt(g(r, 'best', key))} | {'yes' if inside else 'no'} |")
            if kind == "pageable" and med is not None:
                # Pageable copies are staged by the driver through the CPU
                # and vary run to run: the check is that bwscope's samples
                # (min..best) overlap PyTorch's, or lie above them.
                lo, hi = min(v), max(v)
                bmin, bbest = g(r, "min", key), g(r, "best", key)
                check(f"pageable {d} {size_name(s)}: bwscope samples {bmin:.2f}..{bbest:.2f} overlap PyTorch's {lo:.2f}..{hi:.2f} (or lie above)",
                      bbest >= lo)

# -------------------------------------------------------------- OpenCL ---
ocl = load("opencl.json")
p("\n## OpenCL on the NVIDIA driver (`bwscope transfer --backend opencl`)")
if ocl is None:
    p("\nnot run")
elif ocl["records"][0]["status"] == "skipped" and len(ocl["records"]) == 1:
    p(f"\nskipped: {ocl['records'][0].get('reason')}")
else:
    od = ocl["options"]["device"]
    p(f"\nDevice: {od['name']} ({od.get('vendor')}), {od.get('driver_version')}; notes: {'; '.join(od.get('notes', []))}")
    errs = [r for r in ocl["records"] if r["status"] == "error"]
    check("OpenCL: no error records", not errs, "; ".join(f"{r['kernel']}: {r.get('reason')}" for r in errs[:5]))
    okr = [r for r in ocl["records"] if r["status"] == "ok" and not r["extra"]["direction"].startswith("cpu-")]
    check("OpenCL: every measured case verified", okr and all(r["extra"].get("verified") is not False for r in okr))
    dirs = ["h2d", "d2h", "bidir", "map"]
    p("\n| kind | size | " + " | ".join(dirs) + " | CPU read/write | behaves WC |")
    p("|---|---|" + "---|" * len(dirs) + "---|---|")
    for kind in ocl["options"]["kinds"]:
        cr = one(ocl, host_kind=kind, direction="cpu-read")
        for s in (64 * MiB, 256 * MiB):
            cells = []
            for d in dirs:
                r = one(ocl, host_kind=kind, direction=d, size_bytes=s)
                if r is not None and r["extra"].get("zero_copy"):
                    cells.append("zero-copy")
                else:
                    cells.append(fmt(g(r)))
            wcv = cr["extra"].get("cpu_read_over_write") if cr else None
            p(f"| {kind} | {size_name(s)} | " + " | ".join(cells) +
              f" | {fmt(wcv, 3)} | {cr['extra'].get('behaves_wc') if cr else '-'} |")

# ----------------------------------------------------------- bad input ---
bad = os.path.join(D, "badinput.txt")
p("\n## Bad input on the real device")
if os.path.exists(bad):
    p("```")
    p(open(bad).read().strip()[:4000])
    p("```")
else:
    p("\nnot run")

# --------------------------------------------------------------- cores ---
p("\n## Cores: bwscope threads vs STREAM (GB/s, best of rounds)")
stream_txt = os.path.join(D, "stream.txt")
threads = [load(os.path.basename(x)) for x in sorted(glob.glob(os.path.join(D, "threads-*.json")))]
threads = [t for t in threads if t]
if not threads or not os.path.exists(stream_txt):
    p("\nnot run")
else:
    pages = os.path.join(D, "pages.txt")
    p("\npages: " + (open(pages).read().strip() if os.path.exists(pages)
                      else "not recorded (an older run: bwscope had its default THP pages, STREAM 4 KiB ones)"))
    stream = {}
    t = None
    for line in open(stream_txt):
        m = re.match(r"threads=(\d+)", line)
        if m:
            t = int(m.group(1))
            continue
        m = re.match(r"(Copy|Scale|Add|Triad):\s+([\d.]+)", line)
        if m and t:
            k = (t, m.group(1))
            stream[k] = max(stream.get(k, 0.0), float(m.group(2)) / 1000.0)  # MB/s -> GB/s
    total = max(threads[0]["options"]["sizes"])
    best = {}
    for run in threads:
        for r in run["records"]:
            # Per-thread sets are total / threads, rounded down to the kernel's granule.
            if r["status"] != "ok" or abs(r.get("size_bytes", 0) * r["threads"] - total) > total // 100:
                continue
            op = r["op"] + ("-nt" if r.get("nontemporal") else "") + ("-pages" if r.get("pattern") == "pages" else "")
            k = (r["threads"], op)
            best[k] = max(best.get(k, 0.0), r["gbps"]["best"])
    counts = sorted({k[0] for k in best})
    p(f"\nbwscope: `threads --smt --counts ... --placement scatter`, DRAM point {size_name(total)} in total; "
      f"STREAM: 3 x 100 M doubles, `gcc -O3 -march=native -fopenmp`, OMP_PROC_BIND=spread OMP_PLACES=threads; "
      f"{len(threads)} alternating rounds. Bytes counted the same way (read + written, no write-allocate); "
      f"STREAM's Copy loop compiles to memcpy, whose stores are non-temporal at this size and which glibc "
      f"copies four pages at a time, so copy-nt (one stream) and copy-nt 4 pages are its likes.")
    p("\n| threads | bwscope read | bwscope copy | bwscope copy-nt | bwscope copy-nt 4 pages | bwscope write-nt | STREAM Copy | STREAM Triad | best read/copy over Copy |")
    p("|---|---|---|---|---|---|---|---|---|")
    for c in counts:
        rd, cp, cn, cg, wn = (best.get((c, x)) for x in ("read", "copy", "copy-nt", "copy-nt-pages", "write-nt"))
        sc, st = stream.get((c, "Copy")), stream.get((c, "Triad"))
        top = max(x for x in (rd, cp, cn, cg, 0.0) if x is not None)
        ratio = top / sc if top and sc else None
        p(f"| {c} | {fmt(rd)} | {fmt(cp)} | {fmt(cn)} | {fmt(cg)} | {fmt(wn)} | {fmt(sc)} | {fmt(st)} | {fmt(ratio, 2)} |")
        if ratio is not None:
            check(f"{c} threads: best of bwscope read/copy/copy-nt over STREAM Copy = {ratio:.2f} >= 1.0", ratio >= 1.0)
numa = load("numa.json")
if numa:
    p(f"\nbwscope numa: {len([r for r in numa['records'] if r['status'] == 'ok'])} ok records, "
      f"{len([r for r in numa['records'] if r['status'] != 'ok'])} other; options {json.dumps(numa['options'])[:300]}")
    for r in numa["records"][:12]:
        if r["status"] == "ok" and r.get("gbps"):
            pl = r.get("placement") or {}
            p(f"- {r['kernel']} cpu node {pl.get('cpu_node')} -> memory node {pl.get('memory_node')}: "
              f"{fmt(r['gbps']['best'])} GB/s, {r['threads']} threads")

p(f"\n**{len(fails)} check(s) failed**" + (": " + "; ".join(fails) if fails else ""))
print("\n".join(out))
sys.exit(2 if nogpu else (1 if fails else 0))
