#!/usr/bin/env python3
"""Write a topology fixture (the `path:value` sysfs slice that
scripts/topology-slice.sh prints from a live or recorded tree) for a
machine of which no recorded sysfs tree is public. Its output is
GENERATED, not recorded: each fixture made with it says so in
tests/fixtures/topology/README.md, with the source of the layout.

  topology-fixture.py hwloc-xml FILE.xml [--node-distance-remote D]
      From an hwloc XML topology (hwloc's own output of a recorded CPUID
      dump): packages, dies, cores, PUs and the cpus under each L2 and L3
      as hwloc decoded them. A CPUID dump has no NUMA facts, so one NUMA
      node per package is assumed (AMD's NPS1, Intel without SNC), with
      SLIT distances 10 local and D remote (default 32).

  topology-fixture.py layout PACKAGES NODES_PER_PACKAGE CLUSTERS_PER_NODE \
      CORES_PER_CLUSTER THREADS [--near D] [--far D]
      A regular layout: each NUMA node one die with one last-level cache,
      clusters of cores sharing a cluster id, one L2 per core, SMT threads
      numbered core-major within a package's half (cpu n and n + half are
      siblings, as Linux numbers them on Kunpeng and x86). Distances: 10
      local, 16 within a package, D_near to the next package in a ring,
      D_far across it.
"""
import sys
import xml.etree.ElementTree as ET


def cpulist(cpus):
    cpus = sorted(set(cpus))
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


def write(places, nodes, distances):
    """places: {cpu: dict(package, die, cluster, core, l2, l3)};
    nodes: [(id, [cpus])]; distances: [[d]]."""
    print(f"system/cpu/online:{cpulist(places)}")
    print(f"system/node/online:{cpulist([n for n, _ in nodes])}")
    for c in sorted(places):
        p = places[c]
        t = f"system/cpu/cpu{c}/topology"
        print(f"{t}/physical_package_id:{p['package']}")
        if p.get("die") is not None:
            print(f"{t}/die_id:{p['die']}")
        if p.get("cluster") is not None:
            print(f"{t}/cluster_id:{p['cluster']}")
        print(f"{t}/core_cpus_list:{cpulist(p['core'])}")
        # The L1s are left out, as topology-slice.sh leaves them out.
        caches = [(2, "Unified", p["l2"])]
        if p.get("l3"):
            caches.append((3, "Unified", p["l3"]))
        for i, (level, kind, shared) in enumerate(caches):
            d = f"system/cpu/cpu{c}/cache/index{i}"
            print(f"{d}/level:{level}")
            print(f"{d}/type:{kind}")
            print(f"{d}/shared_cpu_list:{cpulist(shared)}")
    for (n, cpus), dist in zip(nodes, distances):
        print(f"system/node/node{n}/cpulist:{cpulist(cpus)}")
        print(f"system/node/node{n}/distance:{' '.join(map(str, dist))}")


def from_hwloc_xml(path, remote):
    root = ET.parse(path).getroot()
    places = {}

    def walk(obj, ctx):
        kind = obj.get("type")
        ctx = dict(ctx)
        if kind == "Package":
            ctx["package"] = int(obj.get("os_index"))
        elif kind == "Die":
            ctx["die"] = int(obj.get("os_index"))
        elif kind in ("L2Cache", "L3Cache", "Core"):
            pus = [int(p.get("os_index")) for p in obj.iter("object") if p.get("type") == "PU"]
            ctx[{"L2Cache": "l2", "L3Cache": "l3", "Core": "core"}[kind]] = pus
        elif kind == "PU":
            places[int(obj.get("os_index"))] = ctx
        for child in obj.findall("object"):
            walk(child, ctx)

    walk(root.find("object"), {})
    packages = sorted({p["package"] for p in places.values()})
    # Die ids per package start at 0 in sysfs (die_id is package-relative).
    for pkg in packages:
        dies = sorted({p.get("die") for p in places.values() if p["package"] == pkg})
        for p in places.values():
            if p["package"] == pkg and p.get("die") is not None:
                p["die"] = dies.index(p["die"])
    nodes = [(pkg, [c for c, p in places.items() if p["package"] == pkg]) for pkg in packages]
    dist = [[10 if a == b else remote for b in packages] for a in packages]
    write(places, nodes, dist)


def from_layout(pk, npp, cpn, cores, threads, near, far):
    per_pkg = npp * cpn * cores * threads
    half = per_pkg // threads
    total = pk * per_pkg
    places, nodes = {}, []
    for pkg in range(pk):
        base = pkg * per_pkg
        for n in range(npp):
            node_cpus = []
            for cl in range(cpn):
                for co in range(cores):
                    first = base + ((n * cpn + cl) * cores + co)
                    sib = [first + t * half for t in range(threads)]
                    node_cpus += sib
                    for c in sib:
                        places[c] = {"package": pkg, "die": n,
                                     "cluster": (pkg * npp + n) * cpn + cl,
                                     "core": sib, "l2": sib}
            for c in node_cpus:
                places[c]["l3"] = node_cpus
            nodes.append((pkg * npp + n, sorted(node_cpus)))
    assert len(places) == total

    def d(a, b):
        pa, pb = a // npp, b // npp
        if a == b:
            return 10
        if pa == pb:
            return 16
        return near if (pa - pb) % pk in (1, pk - 1) else far

    dist = [[d(a, b) for b, _ in nodes] for a, _ in nodes]
    write(places, nodes, dist)


def flag(args, name, default):
    return int(args[args.index(name) + 1]) if name in args else default


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[:1] == ["hwloc-xml"] and len(a) >= 2:
        from_hwloc_xml(a[1], flag(a, "--node-distance-remote", 32))
    elif a[:1] == ["layout"] and len(a) >= 6:
        from_layout(*map(int, a[1:6]), flag(a, "--near", 32), flag(a, "--far", 34))
    else:
        sys.exit(__doc__)
