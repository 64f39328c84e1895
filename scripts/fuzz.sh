#!/bin/sh
# Coverage-guided fuzzing of the parsers that meet the outside (issue 42):
# every target in fuzz/ for SECONDS seconds (default 600) each, its corpus
# seeded from the project's fixtures, at the lowest CPU priority. Not part
# of `cargo test` (cargo-fuzz needs a nightly compiler's flags).
#
#   scripts/fuzz.sh                 # every target, 10 minutes each
#   SECONDS_EACH=60 scripts/fuzz.sh net_frame run_file
#   FUZZ_NO_BUILD=1 scripts/fuzz.sh  # the binaries already built, as they are
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a nightly rustc, or a
# stable one with RUSTC_BOOTSTRAP=1 (set here unless already set).
# Prints one line per target: executions, run time, crashes (an artifact
# under fuzz/artifacts/TARGET names each; every one becomes a test).
set -eu
cd "$(dirname "$0")/.."
: "${SECONDS_EACH:=600}"
: "${RUSTC_BOOTSTRAP:=1}"
export RUSTC_BOOTSTRAP
targets="$*"
[ -n "$targets" ] || targets="net_frame fleet_wire run_file smbios sysfs cli_grammar fleet_file history_store rendezvous knee_store hmac_join agent_grammar"

seed() {
    dir="fuzz/corpus/$1"
    mkdir -p "$dir"
    case "$1" in
    run_file)
        for f in tests/fixtures/cache-quick.json tests/fixtures/runs/*/*.json tests/golden/inputs/*.json; do
            [ -f "$f" ] && cp "$f" "$dir/$(echo "$f" | tr / _)"
        done ;;
    fleet_wire)
        printf '%s' '{"t":"join","magic":"bwscope-fleet","id":{"rank":1,"size":2,"hostname":"n1","machine":"m","version":"0.1.0","protocol":2,"schema_version":1,"fleet_schema_version":1,"job":null}}' > "$dir/join"
        printf '%s' '{"id":{"rank":1,"size":2,"hostname":"n1","machine":"m","version":"0.1.0","protocol":2,"schema_version":1,"fleet_schema_version":1,"job":null},"local_rank":0,"ip":"127.0.0.1","port":5280,"estimate_s":3.5,"error":null}' > "$dir/hello"
        { printf '{"seconds":1.5,"run":'; cat tests/fixtures/cache-quick.json; printf '}'; } > "$dir/node_reply"
        printf '%s' '{"flows":[],"seconds":1.0}' > "$dir/step_reply" ;;
    net_frame)
        # Hello, Welcome-sized and Error frames (length LE u32, kind).
        printf 'BWSC\001\000' | { printf '\006\000\000\000\001'; cat; } > "$dir/hello"
        printf '\004\000\000\000\012nope' > "$dir/error"
        printf '\000\000\000\000\013' > "$dir/started" ;;
    smbios)
        for f in /sys/firmware/dmi/tables/smbios_entry_point; do
            [ -r "$f" ] && cat "$f" /sys/firmware/dmi/tables/DMI > "$dir/host" 2>/dev/null || true
        done
        printf '_SM3_\000\030\003\003\000\001\000\000\000\000\000\040\000\000\000\000\000\000\000' > "$dir/ep3" ;;
    sysfs)
        printf 'node0/cpulist\0000-3\000node0/meminfo\000Node 0 MemTotal: 100 kB\000node1/cpulist\000\000' > "$dir/nodes"
        printf '0-3,8,10-11' > "$dir/list" ;;
    cli_grammar)
        for s in 16KiB 1KiB..1GiB:x2 4KiB..64KiB:+4KiB 0-3,8 1e99 16K; do
            printf '%s' "$s" > "$dir/$(echo "$s" | tr ./: ___)"
        done ;;
    fleet_file)
        # The recorded fleet, trimmed under -max_len (3 records a node).
        for f in tests/fixtures/runs/*/fleet.json; do
            jq -c '(.nodes[].run.records) |= .[:3] | (.nodes[].run.records[].samples) |= .[:3]' "$f" \
                > "$dir/$(echo "$f" | tr / _)" 2>/dev/null || true
        done ;;
    history_store)
        # Rows (first byte odd): NUL-separated words, hostile ones
        # included, whose bytes are also read as floats.
        printf '\001run-uid\0002026-01-01T10:00:00Z\000cache\0000.1.0\000local\000m1\000CPU \033]0;x\007\000k\000headline/DRAM read\000cache/x\000headline/L1 read\000GB/s\000ns\000\000noisy\000\000\000F1\0002026-01-01T10:00:00Z\000\000\000n1\000dram_read_gbps\000latency_ns' > "$dir/rows"
        printf '\003\000\000\000\000\000\000\360\177\000\000\000\000\000\000\000\000' > "$dir/rows-inf"
        # A store file (first byte even): one fixture run imported, packed
        # into 512-byte pages to fit under -max_len.
        if [ -x target/debug/bwscope ] && command -v python3 >/dev/null; then
            tmp=$(mktemp -d)
            jq -c '.records |= .[:3]' tests/fixtures/cache-quick.json > "$tmp/r.json" 2>/dev/null &&
                BWSCOPE_HISTORY="$tmp/h.sqlite3" target/debug/bwscope history import "$tmp/r.json" >/dev/null 2>&1 &&
                python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA journal_mode = DELETE'); c.execute('PRAGMA page_size = 512'); c.execute('VACUUM'); c.close()" "$tmp/h.sqlite3" &&
                { printf '\000'; cat "$tmp/h.sqlite3"; } > "$dir/store"
            rm -rf "$tmp"
        fi ;;
    rendezvous)
        printf '%s' '{"version":"0.1.0","protocol":2,"job":"job","size":2,"addrs":["127.0.0.1:5280","[::1]:5280"],"token":"00ff10","writer":{"machine":"m","host":"h","pid":1,"pid_start":7,"until_unix":0}}' > "$dir/note"
        printf '%s' '{"version":"0.1.0","protocol":2,"job":null,"size":4,"addrs":[],"token":null}' > "$dir/bare" ;;
    knee_store)
        # This host's stored probe, measured once into a cache folder of
        # its own (the target's host has the same key).
        if [ -x target/debug/bwscope ]; then
            tmp=$(mktemp -d)
            XDG_CACHE_HOME="$tmp" BWSCOPE_HISTORY=off target/debug/bwscope info --probe-knees --no-clock >/dev/null 2>&1
            find "$tmp" -name '*.json' -exec cp {} "$dir/probe" \;
            rm -rf "$tmp"
        fi
        printf '%s' '{"key":"x","probe":{}}' > "$dir/other-key" ;;
    hmac_join)
        # Conversations (first byte: bit 0 this side is rank 1, bit 1 a
        # token): length-prefixed JSON frames as the other side sends them.
        python3 - "$dir" <<'PY' || true
import json, struct, sys
d = sys.argv[1]
fr = lambda m: struct.pack("<I", len(json.dumps(m))) + json.dumps(m).encode()
ident = {"rank": 1, "size": 2, "hostname": "n1", "machine": "m", "version": "0.1.0", "protocol": 2,
         "schema_version": 1, "fleet_schema_version": 1, "job": None}
nonce = "00" * 32
open(d + "/rank", "wb").write(b"\0" + fr({"t": "join", "magic": "bwscope-fleet", "id": ident}))
open(d + "/rank-token", "wb").write(b"\2" + fr({"t": "prove", "nonce": nonce})
    + fr({"t": "join", "magic": "bwscope-fleet", "id": ident}) + fr({"t": "auth", "mac": nonce}))
open(d + "/root", "wb").write(b"\1" + fr({"t": "challenge", "nonce": None}) + fr({"t": "accepted"}))
open(d + "/root-token", "wb").write(b"\3" + fr({"t": "challenge", "nonce": nonce})
    + fr({"t": "proof", "mac": nonce}) + fr({"t": "accepted"}))
open(d + "/refused", "wb").write(b"\1" + fr({"t": "refused", "reason": "no \u001b]0;x\u0007"}))
PY
        ;;
    agent_grammar)
        # First byte: which flag the rest is given to (see the target).
        i=0
        for s in '\0002@0' '\000cpus:0-1:read' '\0001@0:rw' '\001alone' '\001pairs' '\001cpu0+cpu1' \
            '\0021@0' '\003cpus:0' '\0040' '\005read' '\0060,100,200' '\0070:1' \
            '\0002026-11-28T14:00:00+05:00' '\0002026-11-28' '\0005m' '\000100GB/s' '\00018446744073709551615@0'; do
            printf "$s" > "$dir/s$i"; i=$((i + 1))
        done ;;
    esac
}

total_crashes=0
for t in $targets; do
    seed "$t"
    log="fuzz/$t.log"
    # -s none: no sanitizer runtime needed (safe Rust; a panic or an
    # abort is what is looked for), -rss_limit_mb catches runaway
    # allocations, -timeout hangs.
    opts="-max_total_time=$SECONDS_EACH -rss_limit_mb=2048 -timeout=10 -max_len=65536 -print_final_stats=1 -artifact_prefix=fuzz/artifacts/$t/"
    mkdir -p "fuzz/artifacts/$t"
    if [ "${FUZZ_NO_BUILD:-0}" = 1 ]; then
        # The binaries `cargo fuzz build -s none` left (no rebuild).
        # shellcheck disable=SC2086
        nice -n 19 "fuzz/target/x86_64-unknown-linux-gnu/release/$t" "fuzz/corpus/$t" $opts >"$log" 2>&1 || true
    else
        # shellcheck disable=SC2086
        nice -n 19 cargo fuzz run -s none "$t" "fuzz/corpus/$t" -- $opts >"$log" 2>&1 || true
    fi
    execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
    secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | awk '{print $5}' | head -1)
    crashes=$(ls "fuzz/artifacts/$t" 2>/dev/null | grep -c -E '^(crash|oom|timeout|leak)-' || true)
    total_crashes=$((total_crashes + crashes))
    echo "$t: ${execs:-?} executions${secs:+ in $secs s}, $crashes crash/oom/timeout artifact(s) (log $log)"
done
[ "$total_crashes" -eq 0 ]
