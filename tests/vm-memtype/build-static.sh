#!/bin/bash
# Build a static bwscope (glibc + crt-static: runs as a lone binary in a
# busybox initramfs) with the NUMA guest's script, in TARGET_DIR, where
# tests/numa_vm.rs builds the same binary: one release build for both.
# Prints the path of the binary.
# Usage: build-static.sh TARGET_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
t=$1
"$root/tests/numa-vm/build-static.sh" "$t/bwscope-static" "$t" >&2
echo "$t/bwscope-static"
