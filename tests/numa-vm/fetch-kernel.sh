#!/bin/bash
# Fetch Debian's own kernel for the NUMA guest: the package linux-image-amd64 depends
# on, via `apt-get download` (no install), and extract boot/vmlinuz-* as DIR/vmlinuz.
# Usage: fetch-kernel.sh DIR      (needs apt-get and dpkg-deb; ~70 MB download, < 5 s)
# The serial console driver is built into Debian's kernel: no modules are needed.
set -euo pipefail
dir=$(realpath -m "$1")
mkdir -p "$dir"
[ -s "$dir/vmlinuz" ] && { echo "$dir/vmlinuz"; exit 0; }
cd "$dir"
pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
[ -n "$pkg" ] || { echo "fetch-kernel: cannot resolve linux-image-amd64 (run apt-get update)" >&2; exit 1; }
# _apt must be able to write here, else apt prints a harmless "unsandboxed" warning.
chmod 777 . 2>/dev/null || true
apt-get download "$pkg" 2>&1 | grep -v unsandboxed || true
dpkg-deb --fsys-tarfile "${pkg}"_*.deb | tar -x --wildcards './boot/vmlinuz-*'
mv boot/vmlinuz-* vmlinuz
rm -rf boot "${pkg}"_*.deb
echo "$dir/vmlinuz"
