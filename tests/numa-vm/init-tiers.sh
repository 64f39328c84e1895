#!/bin/busybox sh
# /init of the tiers guest (run-qemu-tiers.sh): what the kernel exports about tiers and
# HMAT, then bwscope's info, tier matrix and interleave sweep, each JSON between markers.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
echo "=== VM nodes=$(cat /sys/devices/system/node/online) cpus=$(cat /sys/devices/system/cpu/online) has_cpu=$(cat /sys/devices/system/node/has_cpu)"
for f in /sys/devices/system/node/node*/access*/initiators/*_* /sys/devices/virtual/memory_tiering/*/nodelist; do
  echo "=== SYS $f $(cat $f 2>/dev/null)"
done
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
  echo "=== BEGIN $name.txt"
  cat /tmp/$name.out
  echo "=== END $name.txt"
}
S="--samples 2 --min-sample-ms 1"
run info info --no-clock
run tiers numa --tiers --size 4MiB $S
run sweep numa --interleave 0,1 --size 8MiB $S
/bin/bwscope numa --interleave 0,7 >/dev/null 2>/tmp/bad.err
echo "=== RC bad $? $(cat /tmp/bad.err)"
echo "=== DONE"
poweroff -f
