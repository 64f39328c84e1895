#!/usr/bin/env bash
# Type-check and lint bwscope for macOS (Apple silicon and Intel Macs) on a
# Debian machine with no Mac and no Apple SDK (CI runs this; so can you).
#
# Needs (Debian 12; `.ci/run` installs them, as for scripts/windows-wine.sh):
#   apt-get install rustc-web rust-web-src rust-web-clippy
# rustup cannot fetch Apple targets' standard libraries here, so Debian's
# rustc-web builds std for the target from rust-web-src (-Zbuild-std,
# unlocked by RUSTC_BOOTSTRAP=1), and Debian's clippy-driver lints in the
# same build (as scripts/aarch64-emulated.sh and windows-wine.sh do).
#
# What it proves: the library, the binary and the tests compile for
# aarch64-apple-darwin and lint clean (`clippy --all-targets -D
# warnings`, the crate's rules included: a `// SAFETY:` on every unsafe),
# and the library and the binary for x86_64-apple-darwin. With no TARGET
# named (as CI runs it) the Intel Mac's tests are not checked again: the
# macOS layer is one for both (its only arch branches are `cfg!`
# expressions, checked either way), the x86 kernels are Linux's, and the
# tests would cost a second pass over fifty crates. Name a target to check
# all its targets. What it cannot prove: anything at run time.
# Nothing is linked (that needs Apple's SDK), nothing runs, and bwscope has
# never run on a Mac: docs/macos.md says what a Mac user should run first.
#
# Usage: scripts/macos-check.sh [--no-clippy] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."

export RUSTC="${RUSTC_MACOS:-/usr/bin/rustc}" RUSTC_BOOTSTRAP=1
# C in build scripts (rusqlite's bundled SQLite) needs Apple's SDK to
# compile; nothing links here, so a stub stands in (see the stub).
stub="$PWD/scripts/macos-cc-stub.sh"
export CC_aarch64_apple_darwin="$stub" CC_x86_64_apple_darwin="$stub"
export AR_aarch64_apple_darwin=ar AR_x86_64_apple_darwin=ar
DIR=target-macos
clippy=1
if [ "${1:-}" = "--no-clippy" ]; then
  clippy=0
  shift
fi
TARGETS=("$@")
named=${#TARGETS[@]}
[ "$named" -gt 0 ] || TARGETS=(aarch64-apple-darwin x86_64-apple-darwin)

command -v "$RUSTC" >/dev/null || {
  echo "macos-check: $RUSTC not found; install the packages listed at the top of $0" >&2
  exit 2
}
[ -d /usr/lib/rustlib/src/rust/library ] || {
  echo "macos-check: the std source is missing: apt-get install rust-web-src" >&2
  exit 2
}

if [ $clippy = 1 ] && [ -x /usr/bin/clippy-driver ]; then
  export RUSTC_WORKSPACE_WRAPPER=/usr/bin/clippy-driver
  lint="-D warnings"
else
  lint=""
fi

for t in "${TARGETS[@]}"; do
  t0=$(date +%s)
  var="CARGO_TARGET_$(echo "$t" | tr 'a-z-' 'A-Z_')_RUSTFLAGS"
  export "$var"="$lint"
  scope=(--all-targets)
  if [ "$named" -eq 0 ] && [ "$t" = x86_64-apple-darwin ]; then
    scope=(--lib --bins)
  fi
  cargo check -Zbuild-std --target "$t" --target-dir "$DIR" "${scope[@]}" --keep-going
  unset "$var"
  echo "macos-check: $t checked${lint:+ and linted} in $(($(date +%s) - t0)) s"
done
