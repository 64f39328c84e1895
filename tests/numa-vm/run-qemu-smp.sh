#!/bin/bash
# Boot KERNEL + INITRD under QEMU TCG as a 2-socket machine with SMT:
# -smp sockets=2,cores=4,threads=2 (16 vCPUs), one NUMA node per socket
# (SLIT 10 local, 20 remote), so the guest kernel's own sysfs states
# packages, cores, SMT siblings and nodes as a real 2-socket server's does.
# Every time inside is emulated: nothing it measures is a measurement.
# vendor=GenuineIntel: TCG's `max` cpu is otherwise an AMD family whose SMT
# needs `topoext`, which TCG lacks (QEMU then states every thread a core).
# Usage: run-qemu-smp.sh KERNEL INITRD [MEM_MB_PER_NODE=256]
set -euo pipefail
k=$1; i=$2; mem=${3:-256}
exec qemu-system-x86_64 -accel tcg,thread=multi -cpu max,vendor=GenuineIntel -machine q35 \
  -smp 16,sockets=2,cores=4,threads=2 -m $((2 * mem))M \
  -object memory-backend-ram,id=m0,size=${mem}M \
  -object memory-backend-ram,id=m1,size=${mem}M \
  -numa node,nodeid=0,cpus=0-7,memdev=m0 \
  -numa node,nodeid=1,cpus=8-15,memdev=m1 \
  -numa dist,src=0,dst=1,val=20 \
  -nodefaults -no-user-config -display none -serial stdio -no-reboot \
  -kernel "$k" -initrd "$i" \
  -append "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=3"
