#!/bin/bash
# Boot Debian's kernel under QEMU (TCG) with an ivshmem-plain device backed by
# SHM_FILE on the host, run bwscope's memtype checks (init.sh) and power off.
# Usage: run.sh BWSCOPE_STATIC_BINARY VMLINUZ SHM_FILE WORKDIR
# Output: the serial console on stdout (\r stripped); exit status of QEMU.
# Needs: qemu-system-x86 busybox-static cpio (Debian packages).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "$1"); k=$(realpath "$2"); shm=$3; work=$4
mkdir -p "$work"
cp "$bin" "$work/bwscope"
# The bochs DRM driver (get-kernel.sh puts it beside the kernel) gives the
# guest /dev/dri/card0 and /dev/fb0; without it those checks are skipped.
kmod=$(dirname "$k")/kmod
mods=()
for m in drm.ko drm_kms_helper.ko ttm.ko drm_ttm_helper.ko drm_vram_helper.ko bochs.ko; do
  [ -f "$kmod/$m" ] && mods+=("$m")
done
[ ${#mods[@]} -eq 6 ] || mods=()
"$here/mkinitramfs.sh" "$work/initrd.cpio.gz" "$work/bwscope" "$here/init.sh" "$kmod" "${mods[@]}" >/dev/null
# A fresh, zeroed 16 MiB backing file: what the guest writes shows up here.
rm -f "$shm"; truncate -s 16M "$shm"
exec timeout 600 qemu-system-x86_64 -accel tcg,thread=multi -cpu max -machine q35 -smp 1 -m 512M \
  -nodefaults -no-user-config -display none -serial stdio -no-reboot \
  -kernel "$k" -initrd "$work/initrd.cpio.gz" \
  -append "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=3" \
  -object memory-backend-file,id=shm0,share=on,mem-path="$shm",size=16M \
  -device ivshmem-plain,memdev=shm0 -device VGA </dev/null | tr -d '\r'
