#!/bin/busybox sh
# /init of the core-to-core topology guest (run-qemu-smp.sh): print the
# kernel's topology slice (scripts/topology-slice.sh) and what `bwscope
# cores` plans from it, between markers, then power off. The times the
# run takes are emulated: the host test reads the plan and the record
# statuses, never a figure.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
echo "=== VM cpus=$(cat /sys/devices/system/cpu/online) nodes=$(cat /sys/devices/system/node/online)"
echo "=== BEGIN slice"
sh /bin/topology-slice.sh /
echo "=== END slice"
/bin/bwscope cores --exchange cas --per-class 1 --budget 0.01 --fairness 0 \
  --samples 1 --min-sample-ms 0.2 --json /tmp/cores.json >/tmp/cores.out 2>/tmp/cores.err
echo "=== RC cores $?"
echo "=== BEGIN cores"
cat /tmp/cores.json 2>/dev/null
echo
echo "=== END cores"
echo "=== DONE"
poweroff -f
