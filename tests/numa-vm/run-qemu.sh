#!/bin/bash
# Boot KERNEL + INITRD under QEMU TCG as a NUMA machine: NODES nodes with CPUS_PER_NODE
# vCPUs and MEM_MB MiB each, SLIT distances 10 local / 20 one hop / 30 two hops.
# The guest's /init powers off; panic=-1 + -no-reboot make a panic exit QEMU at once.
# Usage: run-qemu.sh KERNEL INITRD [NODES=2] [CPUS_PER_NODE=2] [MEM_MB=256]
# No KVM: this host's /dev/kvm is KVM-PVM, which a stock guest kernel cannot use.
set -euo pipefail
k=$1; i=$2; n=${3:-2}; c=${4:-2}; mem=${5:-256}
args=(-accel tcg,thread=multi -cpu max -machine q35 -smp $((n*c)) -m $((n*mem))M
      -nodefaults -no-user-config -display none -serial stdio -no-reboot
      -kernel "$k" -initrd "$i"
      -append "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=3")
for ((j=0;j<n;j++)); do
  args+=(-object memory-backend-ram,id=m$j,size=${mem}M
         -numa node,nodeid=$j,cpus=$((j*c))-$((j*c+c-1)),memdev=m$j)
done
for ((a=0;a<n;a++)); do for ((b=a+1;b<n;b++)); do
  d=$(( (b-a)==1 || (a==0 && b==n-1) ? 20 : 30 ))
  args+=(-numa dist,src=$a,dst=$b,val=$d)
done; done
exec qemu-system-x86_64 "${args[@]}"
