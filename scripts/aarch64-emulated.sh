#!/usr/bin/env bash
# Cross-build bwscope for aarch64 and run its tests under qemu-user, on an
# x86-64 Debian 12 machine with no ARM hardware (CI runs this; so can you).
#
# Needs (Debian 12; `.ci/run` installs them):
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install rustc-web libstd-rust-web-dev:arm64 rust-web-clippy \
#       gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static
# rustc-web is Debian's rustc (1.96) with the x86-64 and, from the arm64
# multiarch package, the aarch64 standard library; rustup's cargo drives it
# through RUSTC. Never pass `-L /usr/aarch64-linux-gnu` to QEMU: with the
# cross toolchain's glibc every thread start hangs under qemu-user 7.2; the
# multiarch libc6:arm64 in /lib works.
#
# What it proves: the aarch64 build compiles and lints clean (the library,
# the binary and these tests), and every
# kernel moves exactly its bytes (checksums, guard pages), the platform
# parsing and the survey work end to end, on cores with SVE at two vector
# lengths and without SVE. What it cannot prove: anything about speed.
# Tests that time things skip under emulation with a one-line message.
#
# Usage: scripts/aarch64-emulated.sh [--no-clippy]
set -euo pipefail
cd "$(dirname "$0")/.."

T=aarch64-unknown-linux-gnu
export RUSTC="${RUSTC_AARCH64:-/usr/bin/rustc}"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
# A separate target folder: the x86-64 build with rustup's compiler stays
# valid.
DIR=target-arm
TESTS=(--lib --test kernels_more --test survey)

for tool in "$RUSTC" aarch64-linux-gnu-gcc qemu-aarch64-static; do
  command -v "$tool" >/dev/null || {
    echo "aarch64-emulated: $tool not found; install the packages listed at the top of $0" >&2
    exit 2
  }
done

t0=$(date +%s)
# One build both lints and compiles: Debian's clippy-driver (it matches
# Debian's rustc; rustup's does not know this std) wraps the compiler for
# bwscope's own crates, and -D warnings makes any lint an error, as
# `cargo clippy -- -D warnings` does on x86-64. (A separate `cargo clippy`
# pass would build every dependency a second time.)
if [ "${1:-}" != "--no-clippy" ] && [ -x /usr/bin/clippy-driver ]; then
  export RUSTC_WORKSPACE_WRAPPER=/usr/bin/clippy-driver
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-D warnings"
fi
# Build cost, not test strength: dependencies unoptimised and line tables
# only (bwscope itself keeps the dev profile's opt-level 2, so the harness
# around the kernels is what it is natively).
BUILD=(--config 'profile.dev.debug="line-tables-only"' --config 'profile.dev.package."*".opt-level=0')
cargo test "${BUILD[@]}" --target "$T" --target-dir "$DIR" "${TESTS[@]}" --no-run
t1=$(date +%s)

# -cpu max: SVE (and SVE2, SME) at the vector length given in bytes, MIDR
# implementer 0 (not in the table: null ceilings); a64fx: SVE 512 and
# 256-byte lines, a row of the table; cortex-a72: no SVE (NEON only).
for cpu in max,sve-default-vector-length=16 max,sve-default-vector-length=64 a64fx cortex-a72; do
  echo "== qemu-aarch64-static -cpu $cpu"
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64-static -cpu $cpu" \
    cargo test "${BUILD[@]}" --target "$T" --target-dir "$DIR" "${TESTS[@]}"
done
t2=$(date +%s)
echo "aarch64-emulated: build $((t1 - t0)) s, emulated tests $((t2 - t1)) s"
