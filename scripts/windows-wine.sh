#!/usr/bin/env bash
# Cross-build bwscope for Windows x86-64 and run its tests under wine, on an
# x86-64 Debian 12 machine with no Windows (CI runs this; so can you).
#
# Needs (Debian 12; `.ci/run` installs them):
#   apt-get install rustc-web rust-web-src rust-web-clippy mingw-w64 wine64
# rustup cannot fetch other targets' standard libraries here and Debian's
# own Windows std is too old, so Debian's rustc-web builds std for the
# target from rust-web-src (-Zbuild-std, unlocked by RUSTC_BOOTSTRAP=1);
# mingw-w64 links (.cargo/config.toml). Rust's std imports
# bcryptprimitives!ProcessPrng, which wine 8 lacks: a one-function shim
# (scripts/windows/bcryptprimitives.c) goes into a throwaway wine prefix.
#
# What it proves: the Windows build compiles and lints clean (the library,
# the binary and these tests), the unit tests pass, every kernel moves
# exactly its bytes (checksums, guard pages), and the survey, memtype's wc
# and uc kinds, the process team, a loopback network pair and bad input
# work end to end (tests/windows.rs). What it cannot prove: anything about
# speed (wine's times are not Windows times; every run under wine says
# so), write-combining (wine drops PAGE_WRITECOMBINE), large pages with the
# right, console Ctrl-C (wine has no console to deliver it on), more than
# one processor group or NUMA node. The MSVC target needs a Windows SDK
# and cannot be built here; nothing depends on the GNU target.
#
# Usage: scripts/windows-wine.sh [--no-clippy]
set -euo pipefail
cd "$(dirname "$0")/.."

T=x86_64-pc-windows-gnu
DIR=target-windows
export RUSTC="${RUSTC_WINDOWS:-/usr/bin/rustc}" RUSTC_BOOTSTRAP=1
WINE=${WINE:-/usr/lib/wine/wine64}
WINESERVER=${WINESERVER:-$(dirname "$WINE")/wineserver}
TESTS=(--lib --test windows --test kernels_more)

for tool in "$RUSTC" x86_64-w64-mingw32-gcc "$WINE" "$WINESERVER"; do
  command -v "$tool" >/dev/null || {
    echo "windows-wine: $tool not found; install the packages listed at the top of $0" >&2
    exit 2
  }
done
[ -d /usr/lib/rustlib/src/rust/library ] || {
  echo "windows-wine: the std source is missing: apt-get install rust-web-src" >&2
  exit 2
}

t0=$(date +%s)
# A throwaway prefix with the shim, made once per target folder.
export WINEPREFIX="$PWD/$DIR/wine-prefix" WINEDEBUG=-all
if [ ! -f "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ]; then
  mkdir -p "$DIR"
  x86_64-w64-mingw32-gcc -O2 -shared -o "$DIR/bcryptprimitives.dll" \
    scripts/windows/bcryptprimitives.c -ladvapi32
  "$WINE" wineboot --init >/dev/null 2>&1 || true
  cp "$DIR/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"
fi

# One wineserver for the whole run, kept until the script ends: each test
# executable otherwise meets the server the previous one left lingering
# for its last seconds, and one that connects as it exits can die with "wine
# client error:0: recvmsg: Connection reset by peer" (kernels_more did so
# once here, right after the unit tests; three runs after it passed).
# (Waiting first lets wineboot's own server end instead of racing it. The
# server's helpers hold this script's output open until the trap kills it.)
"$WINESERVER" -w
"$WINESERVER" -p
trap '"$WINESERVER" -k 2>/dev/null || true' EXIT

# One build both lints and compiles (Debian's clippy-driver matches
# Debian's rustc), as scripts/aarch64-emulated.sh does.
if [ "${1:-}" != "--no-clippy" ] && [ -x /usr/bin/clippy-driver ]; then
  export RUSTC_WORKSPACE_WRAPPER=/usr/bin/clippy-driver
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS="-D warnings"
fi
# bwscope at the dev profile's level 2: built at level 1 (tried to save
# build time), the survey under wine ran for minutes with its worker in
# `util::rng::fill_words` (every size's refill) whenever gdb looked.
BUILD=(-Zbuild-std --target "$T" --target-dir "$DIR"
  --config 'profile.dev.debug="line-tables-only"' --config 'profile.dev.package."*".opt-level=0')
# `cargo test` builds (and lints) the binary the end-to-end tests run: a
# `cargo build --bins` before it compiled bwscope a second time for
# nothing, since the tests' dev-dependencies change the features its
# dependencies are built with (416 of 1,322 unit-seconds from a fresh
# folder on a 2-vCPU Xeon model 207 guest).
cargo test "${BUILD[@]}" "${TESTS[@]}" --no-run
t1=$(date +%s)
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$WINE" cargo test "${BUILD[@]}" "${TESTS[@]}"
t2=$(date +%s)
echo "windows-wine: build $((t1 - t0)) s, tests under wine $((t2 - t1)) s"
