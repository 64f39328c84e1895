#!/bin/sh
# The C compiler macos-check.sh gives the Apple targets' build scripts:
# rusqlite's bundled SQLite is C, and compiling it for macOS needs Apple's
# SDK headers, which this machine lacks. A type-check links nothing, so
# the objects only have to exist: this writes each `-o FILE` empty and
# compiles nothing, and tells cc-rs's compiler probes (`-E`, `-?`) it is
# clang, as Apple's compiler is. SQLite itself supports macOS
# (sqlite.org); what is checked here is bwscope's Rust.
out=""
for a in "$@"; do
  case "$a" in
    -E) echo clang; exit 0 ;;
    # cc-rs takes a compiler that accepts `-?` for MSVC's cl.
    "-?") exit 1 ;;
  esac
done
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then out="$2"; shift; fi
  shift
done
[ -n "$out" ] && : > "$out"
exit 0
