#!/bin/busybox sh
# /init of the NUMA test guest: run bwscope's NUMA paths and print every JSON result
# between markers on the serial console, then power off. The host test parses the log.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
echo "=== VM nodes=$(cat /sys/devices/system/node/online) cpus=$(cat /sys/devices/system/cpu/online) numa_balancing=$(cat /proc/sys/kernel/numa_balancing)"
run() {
  name=$1; shift
  /bin/bwscope "$@" --json /tmp/$name.json >/tmp/$name.out 2>/tmp/$name.err
  rc=$?
  echo "=== RC $name $rc"
  [ $rc -eq 0 ] || cat /tmp/$name.err
  echo "=== BEGIN $name"
  cat /tmp/$name.json 2>/dev/null
  echo
  echo "=== END $name"
}
S="--samples 2 --min-sample-ms 1"
run matrix numa --size 4MiB --mix read,1:1 $S
run pair numa --scenario write-pair --size 4MiB $S
run threads threads --cpus 1,3 --sizes 4MiB --kernel seq_read_64_scalar,seq_write_64_scalar $S
run procs threads --processes --cpus 1,3 --counts 2 --sizes 4MiB --kernel seq_read_64_scalar $S
run load numa --load 1@1 --probe-cpu 0 --delays 0,2000 --size 4MiB $S
run contend contend --cpu 1@0 --cpu 1@1:write --size 8MiB --samples 2 --min-sample-ms 100
/bin/bwscope contend --cpu 3@1 >/dev/null 2>/tmp/badteam.err
echo "=== RC badteam $? $(cat /tmp/badteam.err)"
/bin/bwscope numa --memory-nodes 7 >/dev/null 2>/tmp/bad.err
echo "=== RC bad $? $(cat /tmp/bad.err)"
echo "=== DONE"
poweroff -f
