#!/bin/busybox sh
# Guest /init for the memtype VM test: find the ivshmem-plain device
# (1af4:1110), check what bwscope must refuse, then run `bwscope memtype`
# on its prefetchable BAR 2 mapped uncached (resource2) and write-combining
# (resource2_wc), JSON between markers on the serial console.
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t debugfs none /sys/kernel/debug
d=
for p in /sys/bus/pci/devices/*; do
  [ "$(cat $p/vendor):$(cat $p/device)" = "0x1af4:0x1110" ] && d=$p
done
if [ -z "$d" ]; then echo "BWSCOPE-VM: no ivshmem device"; poweroff -f; fi
echo "BWSCOPE-VM: ivshmem at $d: $(ls $d | grep resource | tr '\n' ' ')"
B=/bin/bwscope
check() { # name, then the command: prints its exit code and last line
  n=$1; shift
  out=$("$@" 2>&1); rc=$?
  echo "BWSCOPE-VM: $n-rc=$rc $(echo "$out" | tail -1)"
}
# A disabled device does not decode its BARs: refused.
echo 0 > $d/enable 2>/dev/null
check disabled $B memtype --device-mem $d/resource2_wc --allow-device-writes --size 1MiB
echo 1 > $d/enable
# BAR 0 holds ivshmem's registers (non-prefetchable MMIO): refused.
check bar0 $B memtype --device-mem $d/resource0 --allow-device-writes --size 4KiB
# Without the confirmation flag nothing is written.
check noconfirm $B memtype --device-mem $d/resource2_wc --size 1MiB
# Larger than the BAR (16 MiB).
check toolarge $B memtype --device-mem $d/resource2_wc --allow-device-writes --size 32MiB
echo BWSCOPE-JSON-BEGIN
$B memtype --kinds device-uc,device-wc --device-mem $d/resource2 --device-mem $d/resource2_wc \
  --allow-device-writes --size 4MiB --passes 3 --read-passes 2 --json - 2>/tmp/err
rc=$?
echo "BWSCOPE-JSON-END rc=$rc"
cat /tmp/err
$B memtype --kinds device-uc,device-wc --device-mem $d/resource2 --device-mem $d/resource2_wc \
  --allow-device-writes --size 4MiB --passes 3 --read-passes 2 2>/dev/null
# DRM dumb buffer and fbdev (bochs driver, if the initramfs carries it).
if [ -f /lib/modules/load-order ]; then
  for m in $(cat /lib/modules/load-order); do insmod /lib/modules/$m || echo "BWSCOPE-VM: insmod $m failed"; done
  sleep 1
  # The framebuffer console draws into /dev/fb0 (its cursor blinks every
  # 200 ms): a writer beside ours that would make the read-back check fail
  # whenever a blink lands inside the copy. Unbind it, as a user would.
  for v in /sys/class/vtconsole/vtcon*; do
    grep -q "frame buffer" $v/name 2>/dev/null && echo 0 > $v/bind && echo "BWSCOPE-VM: unbound $(cat $v/name)"
  done
fi
if [ -e /dev/dri/card0 ]; then
  echo BWSCOPE-DRM-BEGIN
  $B memtype --kinds device-dumb,device-fb --device-mem /dev/dri/card0 --device-mem /dev/fb0 \
    --allow-device-writes --size 2MiB --passes 2 --read-passes 1 --json - 2>/tmp/err
  echo "BWSCOPE-DRM-END rc=$?"
  cat /tmp/err
else
  echo "BWSCOPE-VM: no /dev/dri/card0"
fi
poweroff -f
