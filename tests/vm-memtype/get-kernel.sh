#!/bin/bash
# Fetch Debian's stock kernel image (the package linux-image-amd64 depends on
# today) and extract vmlinuz into DIR, plus the bochs DRM driver and its
# dependencies into DIR/kmod/ (for the dumb-buffer and fbdev checks).
# Idempotent: prints DIR/vmlinuz.
# Usage: get-kernel.sh DIR        (needs apt-get + network the first time)
# Env: BWSCOPE_VM_KERNEL=/path/to/vmlinuz skips the download entirely.
set -euo pipefail
if [ -n "${BWSCOPE_VM_KERNEL:-}" ]; then
  [ -f "$BWSCOPE_VM_KERNEL" ] || { echo "BWSCOPE_VM_KERNEL=$BWSCOPE_VM_KERNEL does not exist" >&2; exit 1; }
  echo "$BWSCOPE_VM_KERNEL"; exit 0
fi
dir=$1; mkdir -p "$dir"; cd "$dir"
if [ ! -s vmlinuz ] || [ ! -d kmod ]; then
  command -v apt-get >/dev/null || { echo "no apt-get: set BWSCOPE_VM_KERNEL" >&2; exit 1; }
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  [ -n "$pkg" ] || { echo "apt-cache knows no linux-image-amd64 (run apt-get update?)" >&2; exit 1; }
  chmod 777 . 2>/dev/null || true   # apt's _apt user downloads into it
  apt-get download "$pkg" 2>&1 | grep -v unsandboxed >&2 || true
  deb=$(ls "${pkg}"_*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || { echo "apt-get download $pkg failed" >&2; exit 1; }
  rm -rf kmod lib boot; mkdir -p kmod
  dpkg-deb --fsys-tarfile "$deb" | tar -x --wildcards './boot/vmlinuz-*' './lib/modules/*/kernel/drivers/gpu/drm/*'
  # bochs and what it needs, in load order (from the modules' depends=).
  for m in drm.ko drm_kms_helper.ko ttm/ttm.ko drm_ttm_helper.ko drm_vram_helper.ko tiny/bochs.ko; do
    cp lib/modules/*/kernel/drivers/gpu/drm/$m kmod/ 2>/dev/null || true
  done
  cp boot/vmlinuz-* vmlinuz.tmp && mv vmlinuz.tmp vmlinuz
  rm -rf boot lib "$deb"
fi
echo "$dir/vmlinuz"
