#!/bin/sh
# Print the slice of a sysfs tree that bwscope's topology parser reads
# (src/os/parse/topology.rs), one `path:value` line per file, paths
# relative to <root>/sys/devices: per cpu its topology/ ids and lists, its
# L2 and last-level caches' level/type/shared_cpu_list, its MIDR and
# capacity; the NUMA nodes' cpu lists and distances; Intel's hybrid PMU
# cpu lists. The fixtures in tests/fixtures/topology/ are this output.
#
#   scripts/topology-slice.sh /            > this-machine.sysfs
#   scripts/topology-slice.sh path/to/dump > dump.sysfs   # a dump holding sys/
#
# POSIX sh and busybox only (it also runs inside the QEMU test guest).
set -eu
root=${1:-/}
cd "$root/sys/devices"
{
  for f in system/cpu/online system/node/online system/node/possible \
           cpu_core/cpus cpu_atom/cpus; do
    [ -f "$f" ] && echo "$f"
  done
  for c in system/cpu/cpu[0-9]*; do
    [ -d "$c/topology" ] || continue
    for f in physical_package_id die_id cluster_id; do
      [ -f "$c/topology/$f" ] && echo "$c/topology/$f"
    done
    # The core's cpus: core_cpus_list, or on older kernels its old name.
    if [ -f "$c/topology/core_cpus_list" ]; then echo "$c/topology/core_cpus_list"
    elif [ -f "$c/topology/thread_siblings_list" ]; then echo "$c/topology/thread_siblings_list"; fi
    for i in "$c"/cache/index[0-9]*; do
      [ -d "$i" ] || continue
      # The L1s say nothing the parser uses (a core's own caches).
      [ "$(cat "$i/level" 2>/dev/null)" = 1 ] && continue
      for f in level type shared_cpu_list; do
        [ -f "$i/$f" ] && echo "$i/$f"
      done
    done
    for f in cpu_capacity regs/identification/midr_el1; do
      [ -f "$c/$f" ] && echo "$c/$f"
    done
  done
  for n in system/node/node[0-9]*; do
    [ -d "$n" ] || continue
    for f in cpulist distance; do
      [ -f "$n/$f" ] && echo "$n/$f"
    done
  done
} | while read -r f; do
  printf '%s:%s\n' "$f" "$(head -n 1 "$f" 2>/dev/null)"
done
