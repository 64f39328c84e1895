#!/bin/bash
# Build a tiny initramfs: busybox (static, from busybox-static) + the static bwscope + /init.
# Usage: mkinitramfs.sh OUT.cpio.gz BWSCOPE_STATIC INIT_SCRIPT [EXTRA...]
# (each EXTRA file goes into /bin as it is named)
# Needs: busybox-static, cpio, gzip. (Adapted from the research recipe.)
set -euo pipefail
out=$(realpath -m "$1"); bin=$2; init=$3
shift 3
busybox=${BUSYBOX:-/bin/busybox}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{bin,sbin,proc,sys,dev,tmp}
cp "$busybox" "$work/bin/busybox"
cp "$bin" "$work/bin/bwscope"
cp "$init" "$work/init"; chmod +x "$work/init"
for extra in "$@"; do cp "$extra" "$work/bin/"; done
(cd "$work" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) > "$out"
