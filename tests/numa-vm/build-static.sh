#!/bin/bash
# Build a static bwscope for the QEMU guest: gnu target + crt-static (static-pie),
# which needs nothing beyond the default toolchain (no musl target).
# Usage: build-static.sh OUT_BINARY [TARGET_DIR]
# --target is required: with it RUSTFLAGS apply to the binary only, not to the
# proc macros (clap/serde derive), which cannot be built crt-static.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1")
tdir=${2:-${CARGO_TARGET_DIR:-$here/../../target}}
cd "$here/../.."
RUSTFLAGS="-C target-feature=+crt-static" CARGO_TARGET_DIR="$tdir" \
  cargo build --release --quiet --target x86_64-unknown-linux-gnu --bin bwscope
mkdir -p "$(dirname "$out")"
cp "$tdir/x86_64-unknown-linux-gnu/release/bwscope" "$out"
