#!/bin/bash
# Build a static bwscope (glibc + crt-static: runs as a lone binary in a
# busybox initramfs). Prints the path of the binary.
# Usage: build-static.sh TARGET_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
t=$1
cd "$root"
CARGO_TARGET_DIR="$t" RUSTFLAGS="-C target-feature=+crt-static" \
  cargo build --release --quiet --target x86_64-unknown-linux-gnu >&2
echo "$t/x86_64-unknown-linux-gnu/release/bwscope"
