#!/bin/bash
# Boot KERNEL + INITRD under QEMU TCG as a two-tier machine with an ACPI HMAT: node 0 has
# the 2 vCPUs and 256 MiB, node 1 is 256 MiB without cpus (initiator: node 0), SLIT 10/20.
# HMAT (what the firmware claims; every guest node is the same host memory): node 0
# 100 ns and 10 GiB/s from node 0, node 1 250 ns and 4 GiB/s; node 1 has a memory-side
# cache of 8 MiB (64 B lines) in front of it.
# Usage: run-qemu-tiers.sh KERNEL INITRD
set -euo pipefail
k=$1; i=$2
lb() { echo "hmat-lb,initiator=0,target=$1,hierarchy=memory,data-type=$2"; }
exec qemu-system-x86_64 -accel tcg,thread=multi -cpu max -machine q35,hmat=on \
  -smp 2 -m 512M -nodefaults -no-user-config -display none -serial stdio -no-reboot \
  -kernel "$k" -initrd "$i" -append "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=3" \
  -object memory-backend-ram,id=m0,size=256M -numa node,nodeid=0,cpus=0-1,memdev=m0,initiator=0 \
  -object memory-backend-ram,id=m1,size=256M -numa node,nodeid=1,memdev=m1,initiator=0 \
  -numa dist,src=0,dst=1,val=20 \
  -numa "$(lb 0 access-latency),latency=100" -numa "$(lb 0 access-bandwidth),bandwidth=10G" \
  -numa "$(lb 1 access-latency),latency=250" -numa "$(lb 1 access-bandwidth),bandwidth=4G" \
  -numa hmat-cache,node-id=1,size=8M,level=1,associativity=direct,policy=write-back,line=64
