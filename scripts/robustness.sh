#!/usr/bin/env bash
# The bad-input and fault matrix of docs/robustness.md, re-run against a
# built binary. Prints one Markdown row per case (case | command | expected
# | got) and a closing "N passed, M failed" line; exits 1 when a case fails.
#
#   scripts/robustness.sh                 # uses target/release/bwscope
#   BW=target/debug/bwscope scripts/robustness.sh
#   CARGO_TESTS=1 scripts/robustness.sh   # also the cargo-only cases
#
# Only loopback addresses are contacted; every command has a time limit.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BW=${BW:-target/release/bwscope}
BW=$(realpath "$BW")
[ -x "$BW" ] || { echo "no binary at $BW: cargo build --release first" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
pass=0; fail=0
TINY=(cache --kernel seq_read_64_scalar --sizes 16KiB --samples 2 --min-sample-ms 1)

row() { # case command expected got ok
  local mark; if [ "$5" = 1 ]; then mark=pass; pass=$((pass+1)); else mark="**FAIL**"; fail=$((fail+1)); fi
  printf '| %s | `%s` | %s | %s (%s) |\n' "$1" "$2" "$3" "$4" "$mark"
}

# check CASE RC REGEX -- ARGS...: run bwscope ARGS, expect exit RC and REGEX
# in stderr (empty: anything), never a panic.
check() {
  local name=$1 want=$2 re=$3; shift 4
  local err; err=$(timeout 60 "$BW" "$@" 2>&1 >/dev/null); local rc=$?
  local ok=1
  [ "$rc" = "$want" ] || ok=0
  [ -z "$re" ] || grep -qE -- "$re" <<<"$err" || ok=0
  grep -q panicked <<<"$err" && ok=0
  local first; first=$(grep -m1 -E '^(error|note)' <<<"$err" | cut -c1-110)
  row "$name" "bwscope $*" "exit $want${re:+, /$re/}" "exit $rc${first:+: $first}" $ok
}

# custom CASE COMMAND EXPECTED GOT OK: a row computed by the caller.
custom() { row "$@"; }

sha() { sha256sum "$1" | cut -c1-16; }

echo '| case | command | expected | got |'
echo '|---|---|---|---|'

# ---- 1. size lists ----
err=$( (ulimit -v 1048576; timeout 60 "$BW" cache --sizes 1..1TiB:x1.00000001) 2>&1 ); rc=$?
custom "geometric range of 2.7e9 points under a 1 GiB memory limit" "bwscope cache --sizes 1..1TiB:x1.00000001" "exit 2, too many points" "exit $rc: $(head -c 100 <<<"$err")" $([ $rc = 2 ] && grep -q "too many points (2772598753 > 10000)" <<<"$err" && echo 1 || echo 0)
check "geometric range of 138,638 points" 2 "too many points" -- cache --sizes 1KiB..1GiB:x1.0001
check "linear range over the cap" 2 "too many points" -- cache --sizes 1..1GiB:+1
check "many ranges adding up past the cap" 2 "too many points" -- cache --sizes "$(printf '1KiB..2KiB:+1,%.0s' {1..20})"
check "plan of hours says so before starting" 2 "estimated to take at least" -- cache --kernel seq_read_64_scalar --sizes 1KiB..1GiB:x1.002 --min-sample-ms 100 --json /nonexistent-dir/x.json
check "ambiguous unit" 2 "ambiguous" -- cache --sizes 16K
check "zero size" 2 "zero" -- cache --sizes 0
check "size above 1 TiB" 2 "too large" -- cache --sizes 2TiB
check "range backwards" 2 "malformed" -- cache --sizes 1GiB..1KiB:x2
check "factor 1" 2 "malformed" -- cache --sizes 1KiB..1GiB:x1
check "1e99 bytes" 2 "too large" -- cache --sizes 1e99

# ---- 2. the atomic writer ----
mkdir w && cd w
check "empty --json path, nothing left behind" 2 "path is empty" -- "${TINY[@]}" --json ""
custom "empty --json leaves no ./.partial" "ls -A" "empty directory" "$(ls -A | wc -l) entries" $([ -z "$(ls -A)" ] && echo 1 || echo 0)
echo secret > secret; chmod 600 secret; h=$(sha secret)
ln -s secret run.json.partial; ln -s secret .partial
timeout 60 "$BW" "${TINY[@]}" --json run.json >/dev/null 2>&1; rc=$?
custom "planted run.json.partial symlink" "bwscope cache … --json run.json" "exit 0, secret unchanged, mode 600" "exit $rc, hash $( [ "$(sha secret)" = "$h" ] && echo same || echo CHANGED ), mode $(stat -c %a secret)" $([ $rc = 0 ] && [ "$(sha secret)" = "$h" ] && [ "$(stat -c %a secret)" = 600 ] && echo 1 || echo 0)
chmod 640 run.json; timeout 60 "$BW" "${TINY[@]}" --json run.json >/dev/null 2>&1
custom "replaced file keeps its mode" "bwscope cache … --json run.json (mode 640)" "mode 640" "mode $(stat -c %a run.json)" $([ "$(stat -c %a run.json)" = 640 ] && echo 1 || echo 0)
chmod 444 run.json; h=$(sha run.json)
check "read-only target" 2 "read-only" -- "${TINY[@]}" --json run.json
custom "read-only target untouched" "sha256sum run.json" "unchanged" "$([ "$(sha run.json)" = "$h" ] && echo unchanged || echo CHANGED)" $([ "$(sha run.json)" = "$h" ] && echo 1 || echo 0)
check "--json into a missing directory" 2 "does not exist" -- "${TINY[@]}" --json /nonexistent-dir/r.json
check "--json is a directory" 2 "directory" -- "${TINY[@]}" --json /
timeout 60 "$BW" "${TINY[@]}" --json /dev/null --csv /dev/null >/dev/null 2>&1; rc=$?
custom "--json/--csv /dev/null written in place" "bwscope cache … --json /dev/null --csv /dev/null" "exit 0, /dev/null still a device" "exit $rc, $(stat -c %F /dev/null)" $([ $rc = 0 ] && [ -c /dev/null ] && echo 1 || echo 0)
cd ..

# ---- 6. nothing replaced before the first record ----
echo '{"earlier":1}' > good.json; echo earlier > good.csv; hj=$(sha good.json); hc=$(sha good.csv)
check "net run to a closed port" 2 "connection refused" -- net run 127.0.0.1:1 --timeout 2 --json good.json --csv good.csv
custom "…leaves the earlier JSON and CSV" "sha256sum good.json good.csv" "unchanged" "$([ "$(sha good.json)$(sha good.csv)" = "$hj$hc" ] && echo unchanged || echo CHANGED)" $([ "$(sha good.json)$(sha good.csv)" = "$hj$hc" ] && echo 1 || echo 0)

# ---- 7. conflicting outputs ----
check "--csv - --json -" 2 "both write to stdout" -- "${TINY[@]}" --csv - --json -
check "--csv F --json ./F" 2 "same file" -- "${TINY[@]}" --csv F --json ./F

# ---- 5. signals ----
for s in TERM HUP INT; do
  rm -f s.json s.csv
  "$BW" cache --kernel seq_read_64_scalar --sizes 4KiB..256KiB:+4KiB --samples 3 --min-sample-ms 20 --json s.json --csv s.csv >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 300); do [ "$(cat s.csv 2>/dev/null | wc -l)" -ge 3 ] && break; sleep 0.1; done
  kill -$s $pid; wait $pid; rc=$?
  n=$(jq '.records|length' s.json 2>/dev/null); c=$(( $(wc -l < s.csv) - 1 )); i=$(jq .interrupted s.json 2>/dev/null)
  want=$((128 + $(kill -l $s)))
  custom "SIG$s mid-run" "kill -$s <bwscope cache …>" "exit $want, interrupted, JSON = CSV" "exit $rc, interrupted $i, $n JSON / $c CSV records" $([ $rc = $want ] && [ "$i" = true ] && [ "$n" = "$c" ] && echo 1 || echo 0)
done

# ---- 10. readers ----
"$BW" "${TINY[@]}" --sizes 16KiB,32KiB --json run.json >/dev/null 2>&1 || "$BW" cache --kernel seq_read_64_scalar --sizes 16KiB,32KiB --samples 2 --min-sample-ms 1 --json run.json >/dev/null 2>&1
check "report /dev/zero" 2 "not a regular file" -- report /dev/zero
mkfifo fifo
check "report a FIFO (no hang)" 2 "not a regular file" -- report fifo
check "report a directory" 2 "directory" -- report .
truncate -s $((256*1024*1024+1)) big.json
check "a 256 MiB + 1 B run file" 2 "larger than the 256 MiB" -- plot big.json --list
check "missing file" 2 "cannot read" -- report nope.json
head -c 300 run.json > cut.json
check "truncated JSON" 2 "truncated" -- report cut.json
echo '{"a":1}' > other.json
check "JSON that is not a run" 2 "not a bwscope run" -- compare other.json run.json
jq '.schema_version=99' run.json > newer.json
check "newer schema" 2 "newer" -- report newer.json
jq '.records[0].gbps.best=-5' run.json > neg.json
check "negative bandwidth" 2 "gbps.best = -5 " -- report neg.json -f table
jq '.records[0].gbps.best=1e308' run.json > huge.json
check "bandwidth 1e308" 2 "gbps.best = 1e308 " -- compare huge.json run.json
out=$("$BW" "${TINY[@]}" --json - 2>/dev/null | "$BW" report - -f table 2>&1); rc=$?
custom "run piped through stdin" "bwscope cache … --json - \| bwscope report - -f table" "exit 0, a table" "exit $rc" $([ $rc = 0 ] && grep -q "GB/s" <<<"$out" && echo 1 || echo 0)
jq '.complete=false' run.json > killed.json
out=$("$BW" report killed.json -f table 2>/dev/null); custom "report of a run cut by SIGKILL" "bwscope report killed.json -f table" "marked incomplete" "$(head -1 <<<"$out" | cut -c1-60)" $(grep -q "incomplete run" <<<"$out" && echo 1 || echo 0)
jq '.interrupted=true' killed.json > stopped.json
out=$("$BW" compare run.json stopped.json 2>/dev/null); custom "compare with an interrupted run" "bwscope compare run.json stopped.json" "legend marks it" "$(head -1 <<<"$out" | cut -c40-100)" $(head -1 <<<"$out" | grep -q "interrupted run" && echo 1 || echo 0)
"$BW" plot killed.json -o k.svg >/dev/null 2>&1
custom "plot of an incomplete run" "bwscope plot killed.json -o k.svg" "title marked" "$(grep -o '\[incomplete run\]' k.svg | head -1)" $(grep -q '\[incomplete run\]' k.svg && echo 1 || echo 0)

# ---- 8. closed pipes (the reader is gone before bwscope writes) ----
pipe() { # name want args...
  local name=$1 want=$2; shift 2
  local rc; rc=$( (sleep 0.3; exec "$BW" "$@" 2>"$T/pipe.err") | true; echo "${PIPESTATUS[0]}" )
  row "$name" "bwscope $* | head -0" "exit $want, no panic" "exit $rc" $([ "$rc" = "$want" ] && ! grep -q panicked "$T/pipe.err" && echo 1 || echo 0)
}
pipe "compare into a closed pipe" 0 compare run.json run.json
pipe "plot --list into a closed pipe" 0 plot run.json --list
pipe "cache table into a closed pipe" 0 "${TINY[@]}"
pipe "kernels into a closed pipe" 0 kernels
pipe "completions into a closed pipe" 0 completions bash
pipe "man into a closed pipe" 0 man
pipe "streaming --csv - into a closed pipe" 141 cache --kernel seq_read_64_scalar --sizes 16KiB,32KiB,64KiB --samples 2 --csv -

# ---- 3/4. net serve ----
check "serve on all interfaces without a token" 2 "no-auth" -- net serve --bind 0.0.0.0 --port 0
check "--no-auth with --token-file" 2 "cannot be used with" -- net serve --no-auth --token-file x
line=$(timeout 2 "$BW" net serve --port 0 2>&1 | head -1)
custom "serve defaults to loopback and says so" "bwscope net serve --port 0" "127.0.0.1, auth off" "$(cut -c1-90 <<<"$line")" $(grep -q "listening on 127.0.0.1:.*auth off" <<<"$line" && echo 1 || echo 0)
echo the-right-shared-secret > tok; echo a-wrong-shared-secret > bad; chmod 600 tok bad
"$BW" net serve --port 0 --token-file tok 2>serve.err & spid=$!
for _ in $(seq 50); do port=$(grep -o '127.0.0.1:[0-9]*' serve.err 2>/dev/null | head -1 | cut -d: -f2); [ -n "$port" ] && break; sleep 0.1; done
err=$(timeout 20 "$BW" net run "127.0.0.1:$port" --token-file bad -s 1KiB 2>&1 >/dev/null); rc=$?
custom "wrong token" "bwscope net run … --token-file bad" "exit 2, said once" "exit $rc: $(head -c 110 <<<"$err")" $([ $rc = 2 ] && [ "$(grep -o 'authentication failed' <<<"$err" | wc -l)" = 1 ] && echo 1 || echo 0)
kill $spid 2>/dev/null; wait $spid 2>/dev/null
check "a 0 s test" 2 "--time" -- net run 127.0.0.1:1 --time 0

# ---- 11. output flags only where honoured ----
check "plot --csv" 2 "unexpected argument" -- plot run.json --csv x
check "info --units" 2 "unexpected argument" -- info --units GiB
check "--csv before kernels" 2 "takes --json only" -- --csv x kernels
check "--json before net serve" 2 "writes no run" -- --json x net serve
check "info --json -" 0 "" -- info --no-clock --json -

# ---- 12. wrong words and other validation ----
n=$("$BW" latency --pages 4k,thp --sizes 16KiB --samples 2 --min-sample-ms 1 --json - 2>/dev/null | jq -r '[.records[].extra.case_pages]|unique|join(",")')
custom "latency --pages 4k,thp (README)" "bwscope latency --pages 4k,thp …" "records for 4k and thp" "$n" $([ "$n" = "4k,thp" ] && echo 1 || echo 0)
check "memtype beyond memory states the rule" 2 "90 % of the .* use a smaller --size$" -- memtype --size 1TiB
out=$("$BW" compare run.json run.json); custom "compare footer rule = code = docs" "bwscope compare run.json run.json" "larger of the two spreads" "$(tail -1 <<<"$out" | cut -c1-70)" $(grep -q "larger of the two runs' own spread" <<<"$out" && echo 1 || echo 0)
check "--threads 0" 2 "--threads" -- cache --threads 0
check "more threads than cpus" 2 "--threads" -- cache --threads 9999
check "a cpu that does not exist" 2 "--cpus" -- cache --cpus 9999
check "unknown kernel" 2 "unknown kernel" -- cache --kernel nope
check "--samples 0" 2 "--samples" -- cache --samples 0
check "--min-sample-ms -1" 2 "min-sample-ms" -- cache --min-sample-ms=-1
check "--streams 0" 2 "--streams" -- net run 127.0.0.1 --streams 0
check "bad port" 2 "not a port" -- net run 127.0.0.1:x
check "--fail-if-slower -1" 2 "fail-if-slower" -- compare run.json run.json --fail-if-slower=-1
check "plot --width 0" 2 "--width" -- plot run.json -o x.svg --width 0
check "report into a missing directory" 2 "does not exist" -- report run.json -o /nonexistent-dir/r.html
check "survey into an unwritable folder" 2 "cannot write" -- --out /proc/bwscope-x
check "cores --pair naming one cpu twice" 2 "--pair" -- cores --pair 0,0
check "cores --exchange of an unknown word" 2 "--exchange" -- cores --exchange swap
check "cores --budget 0" 2 "--budget" -- cores --budget 0

# ---- round 3 (issue 23): hijack, completeness, clobbering, secrets ----
TWO=(cache --kernel seq_read_64_scalar --sizes 16KiB,32KiB --samples 2 --min-sample-ms 1)
mkdir r3 && cd r3
# item 5: secrets with bounds
truncate -s 1G tok; chmod 600 tok
check "token file: a sparse 1 GiB" 2 "larger than the 4096 bytes" -- net run 127.0.0.1:1 --token-file tok
check "token file: /dev/zero" 2 "not a regular file" -- net run 127.0.0.1:1 --token-file /dev/zero
head -c 32 /dev/zero > tok
check "token file: only zero bytes" 2 "only zero bytes" -- net serve --port 0 --token-file tok
echo s3cret > tok; chmod 644 tok
check "token file: mode 0644" 2 "chmod 600" -- fleet --dry-run --nodes 2 --token-file tok
# item 6: flags that do nothing
echo '{"bwscope_reference":1,"classes":[{"cpu":"*","bounds":{"clock_gz":99}}]}' > ref.json
check "reference: a misspelt metric" 2 "'clock_gz' is not a metric" -- fleet --dry-run --nodes 4 --reference ref.json
printf '\xef\xbb\xbf{"bwscope_reference":1,"classes":[{"cpu":"*","bounds":{"clock_ghz":1}}]}' > ref.json
check "reference: a UTF-8 BOM is accepted" 0 "" -- fleet --dry-run --nodes 4 --reference ref.json
cp ../run.json q.json
check "report of a plain run --node x" 2 "run of one machine" -- report q.json --node x
check "report of a plain run --scale-max" 2 "run of one machine" -- report q.json --scale-max 5 -f table
check "compare plain runs --node x" 2 "run of one machine" -- compare q.json q.json --node x
check "plot of a plain run --node x" 2 "run of one machine" -- plot q.json --node x --list
check "fleet --dry-run --nodes 0" 2 "0 nodes is no fleet" -- fleet --dry-run --nodes 0
# item 4: no file clobbered by its own reader
h=$(sha q.json)
check "report RUN.json -f md -o RUN.json" 2 "is the file being read" -- report q.json -f md -o q.json
check "report RUN.json -f csv -o ./RUN.json" 2 "is the file being read" -- report q.json -f csv -o ./q.json
ln q.json hard.json
check "report RUN.json -o a hard link of it" 2 "is the file being read" -- report q.json -o hard.json
custom "…the run is unchanged" "sha256sum q.json" "unchanged" "$([ "$(sha q.json)" = "$h" ] && echo unchanged || echo CHANGED)" $([ "$(sha q.json)" = "$h" ] && echo 1 || echo 0)
check "--openmetrics F --json F" 2 "same file as --json" -- "${TINY[@]}" --openmetrics x --json x
check "--openmetrics into a missing folder, before measuring" 2 "does not exist" -- cache --kernel seq_read_64_scalar --sizes 16KiB..1MiB:x2 --min-sample-ms 2000 --openmetrics /nonexistent-dir/m.prom
out=$("$BW" "${TINY[@]}" --openmetrics - 2>/dev/null)
custom "--openmetrics - is stdout" "bwscope cache … --openmetrics -" "metrics on stdout, no file '-'" "$(grep -c '^# TYPE' <<<"$out") TYPE lines, $( [ -e ./- ] && echo "a file '-'" || echo "no file '-'")" $(test "$(grep -c '^# TYPE' <<<"$out")" -gt 0 -a ! -e ./- && echo 1 || echo 0)
# item 7: checks that pass too early
check "--json results/ (no such folder)" 2 "ends in '/'" -- "${TINY[@]}" --json results/
custom "…leaves nothing" "ls results" "absent" "$( [ -e results ] && echo present || echo absent)" $([ ! -e results ] && echo 1 || echo 0)
mkdir sv && err=$( cd sv && ulimit -v 65536 && timeout 60 "$BW" 2>&1 >/dev/null ); rc=$?
custom "survey under ulimit -v 65536" "bwscope (survey)" "exit 2, names ulimit -v, no empty folder" "exit $rc: $(grep -m1 ^error <<<"$err" | cut -c1-100), $(ls -A sv | wc -l) entries" $([ $rc = 2 ] && grep -q 'ulimit -v' <<<"$err" && ! grep -q 'fewer threads' <<<"$err" && [ -z "$(ls -A sv)" ] && echo 1 || echo 0)
# item 2: --json into a FIFO or /dev/stdout
n=$("$BW" "${TWO[@]}" --json /dev/stdout 2>/dev/null | jq '.records|length')
custom "--json /dev/stdout into a pipe" "bwscope cache … --json /dev/stdout | jq" "2 records" "${n:-none} records" $([ "$n" = 2 ] && echo 1 || echo 0)
"$BW" "${TWO[@]}" --json /dev/stdout > so.json 2>/dev/null; rc=$?
custom "--json /dev/stdout into a file" "bwscope cache … --json /dev/stdout > f" "exit 0, 2 records" "exit $rc, $(jq '.records|length' so.json 2>/dev/null) records" $([ $rc = 0 ] && [ "$(jq '.records|length' so.json)" = 2 ] && echo 1 || echo 0)
mkfifo ff
"$BW" "${TWO[@]}" --json ff >/dev/null 2>&1 & pid=$!
docs=$(timeout 60 cat ff | jq -s length); wait $pid; rc=$?
custom "--json into a FIFO, one reader" "bwscope cache … --json ff & cat ff" "exit 0, one document" "exit $rc, ${docs:-0} document(s)" $([ $rc = 0 ] && [ "$docs" = 1 ] && echo 1 || echo 0)
"$BW" "${TINY[@]}" --json ff --csv ff.csv >/dev/null 2>ff.err & pid=$!
for _ in $(seq 300); do [ "$(cat ff.csv 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.1; done; sleep 0.5
t0=$(date +%s%N); kill -TERM $pid; wait $pid; rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
custom "--json into a FIFO nobody reads, then SIGTERM" "kill -TERM <bwscope … --json ff>" "ends at once, says why" "exit $rc after $ms ms: $(grep -m1 -o 'no reader opened the FIFO' ff.err)" $([ $ms -lt 3000 ] && grep -q 'no reader opened the FIFO' ff.err && echo 1 || echo 0)
# item 3: no run called complete that is not
( ulimit -f 16; exec "$BW" cache --kernel seq_read_64_scalar --sizes 1KiB..400KiB:+1KiB --samples 2 --min-sample-ms 1 --csv full.csv --json - 2>full.err ) | cat > full.json; rc=${PIPESTATUS[0]}
c=$(jq -r '.complete' full.json 2>/dev/null); n=$(jq '.records|length' full.json 2>/dev/null); rows=$(( $(wc -l < full.csv) - 1 ))
custom "a file that hits ulimit -f (a full disk) mid-run" "ulimit -f 16; bwscope cache … --csv full.csv --json -" "exit 2, complete false + reason, CSV = JSON" "exit $rc, complete $c, $n JSON / $rows CSV, reason: $(jq -r '.incomplete_reason' full.json 2>/dev/null | cut -c1-50)" $([ $rc = 2 ] && [ "$c" = false ] && [ "$n" = "$rows" ] && jq -e '.incomplete_reason|test("File too large")' full.json >/dev/null && echo 1 || echo 0)
"$BW" net serve --port 0 2>srv.err & spid=$!
for _ in $(seq 50); do port=$(grep -o '127.0.0.1:[0-9]*' srv.err | head -1 | cut -d: -f2); [ -n "$port" ] && break; sleep 0.1; done
"$BW" net run "127.0.0.1:$port" -m stream -t 1 -O 0.1 -s 64KiB,128KiB,256KiB --json lost.json >/dev/null 2>&1 & lpid=$!
for _ in $(seq 300); do [ -s lost.json ] && break; sleep 0.1; done; kill $spid; wait $spid 2>/dev/null; wait $lpid; rc=$?
custom "net run whose server is killed mid-sweep" "kill <net serve> during bwscope net run …" "exit 2, complete false, a reason" "exit $rc, complete $(jq .complete lost.json), $(jq '.records|length' lost.json) records" $([ $rc = 2 ] && [ "$(jq .complete lost.json)" = false ] && jq -e '.incomplete_reason != null' lost.json >/dev/null && echo 1 || echo 0)
out=$("$BW" report full.json -f table 2>/dev/null | head -1)
custom "report shows why a run is short" "bwscope report full.json -f table" "marked, with the reason" "$(cut -c1-70 <<<"$out")" $(grep -q "ended early (cannot write full.csv" <<<"$out" && echo 1 || echo 0)
# item 8: messages that mislead
{ printf '\xef\xbb\xbf'; cat q.json; } > bom.json
check "a run file with a UTF-8 BOM" 0 "" -- report bom.json -f table
echo '{"schema_version": 1,, }' > comma.json
err=$("$BW" report comma.json 2>&1); rc=$?
custom "a stray comma is not called truncated" "bwscope report comma.json" "exit 2, no 'truncated'" "exit $rc: $(cut -c1-90 <<<"$err")" $([ $rc = 2 ] && ! grep -q truncated <<<"$err" && echo 1 || echo 0)
"$BW" net serve --port 0 --max-bytes 1MiB 2>mb.err & spid=$!
for _ in $(seq 50); do port=$(grep -o '127.0.0.1:[0-9]*' mb.err | head -1 | cut -d: -f2); [ -n "$port" ] && break; sleep 0.1; done
"$BW" net run "127.0.0.1:$port" -m stream -d recv -t 2 -O 0.5 -s 64KiB --json mb.json >/dev/null 2>&1; kill $spid; wait $spid 2>/dev/null
why=$(jq -r '.records[0].reason' mb.json 2>/dev/null)
custom "a receive test cut by the server's --max-bytes" "bwscope net run … -d recv (server --max-bytes 1MiB)" "names --max-bytes" "$(cut -c1-90 <<<"$why")" $(grep -q -- '--max-bytes' <<<"$why" && echo 1 || echo 0)
( ulimit -n 20; exec "$BW" net serve --port 0 --timeout 3 ) 2>nf.err & spid=$!
for _ in $(seq 50); do port=$(grep -o '127.0.0.1:[0-9]*' nf.err | head -1 | cut -d: -f2); [ -n "$port" ] && break; sleep 0.1; done
custom "net serve under ulimit -n 20 says its room" "ulimit -n 20; bwscope net serve" "room for N streams (ulimit -n 20)" "$(grep -o 'room for [^)]*)' nf.err | head -1)" $(grep -q 'room for [0-9]* streams (ulimit -n 20)' nf.err && echo 1 || echo 0)
check "…a 16-stream leader is told the limit" 2 "ulimit -n 20" -- net run "127.0.0.1:$port" -m stream -P 16 -t 0.5 -O 0.1 -s 64KiB
python3 - "$port" <<'PY' 2>/dev/null
import socket, sys, time
ss = []
for i in range(40):
    try:
        s = socket.socket(); s.bind(("127.0.1.%d" % (2 + i // 4), 0)); s.connect(("127.0.0.1", int(sys.argv[1]))); ss.append(s)
    except OSError:
        pass
time.sleep(3)
PY
kill $spid; wait $spid 2>/dev/null
n=$(grep -c 'accept failed' nf.err)
custom "…out of descriptors: the log says so, once a second" "40 idle connections from 10 addresses for 3 s" "1 to 8 lines naming the limit" "$n lines: $(grep -m1 -o 'out of open files[^:]*' nf.err)" $([ "$n" -ge 1 ] && [ "$n" -le 8 ] && grep -q 'ulimit -n' nf.err && echo 1 || echo 0)
# item 1: a fleet that cannot be hijacked (ranks as Open MPI starts them)
rk() { local r=$1 n=$2 j=$3; shift 3; OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=$n OMPI_MCA_ess_base_jobid=$j timeout 60 "$BW" fleet --control tcp --suites none --schedule none --timeout 20 "$@"; }
mkdir -m 1777 shared att
rk 0 2 j1 --rendezvous att --out att-res >/dev/null 2>&1 & apid=$!
for _ in $(seq 100); do [ -e att/.bwscope-fleet-j1.json ] && break; sleep 0.1; done
cp att/.bwscope-fleet-j1.json shared/
if [ "$(id -u)" = 0 ]; then
  chown 1000:1000 shared/.bwscope-fleet-j1.json
  err=$(rk 1 2 j1 --rendezvous shared 2>&1 >/dev/null); rc=$?
  custom "a rank finds another user's rendezvous file" "PMI rank 1 … --rendezvous shared (file of uid 1000)" "exit 2, names the file and uid" "exit $rc: $(cut -c1-100 <<<"$err")" $([ $rc = 2 ] && grep -q 'belongs to uid 1000' <<<"$err" && echo 1 || echo 0)
  chown 0:0 shared/.bwscope-fleet-j1.json
fi
chmod 644 shared/.bwscope-fleet-j1.json
err=$(rk 1 2 j1 --rendezvous shared 2>&1 >/dev/null); rc=$?
custom "a rendezvous file of mode 0644" "bwscope fleet (rank 1) --rendezvous shared" "exit 2, names the mode" "exit $rc: $(cut -c1-100 <<<"$err")" $([ $rc = 2 ] && grep -q 'has mode 0644' <<<"$err" && echo 1 || echo 0)
rm shared/.bwscope-fleet-j1.json; mkfifo shared/.bwscope-fleet-j1.json
err=$(rk 1 2 j1 --rendezvous shared 2>&1 >/dev/null); rc=$?
custom "a FIFO at the rendezvous file (no hang)" "bwscope fleet (rank 1) --rendezvous shared" "exit 2 at once" "exit $rc: $(cut -c1-100 <<<"$err")" $([ $rc = 2 ] && grep -q 'not a regular file' <<<"$err" && echo 1 || echo 0)
rm shared/.bwscope-fleet-j1.json; ln -s "$PWD/att/.bwscope-fleet-j1.json" shared/.bwscope-fleet-j1.json
err=$(rk 1 2 j1 --rendezvous shared 2>&1 >/dev/null); rc=$?
custom "a symlink at the rendezvous file" "bwscope fleet (rank 1) --rendezvous shared" "exit 2" "exit $rc: $(cut -c1-100 <<<"$err")" $([ $rc = 2 ] && grep -q 'symbolic link' <<<"$err" && echo 1 || echo 0)
kill $apid 2>/dev/null; wait $apid 2>/dev/null
echo 'the fleet secret' > mine; echo 'another secret' > theirs; chmod 600 mine theirs
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
rk 0 2 j2 --coordinator "127.0.0.1:$port" --token-file theirs --out imp >/dev/null 2>&1 & ipid=$!; sleep 1
err=$(rk 1 2 j2 --coordinator "127.0.0.1:$port" --token-file mine 2>&1 >/dev/null); rc=$?
kill $ipid 2>/dev/null; wait $ipid 2>/dev/null
custom "an impostor rank 0 on the --coordinator port" "bwscope fleet (rank 1) --coordinator … --token-file mine" "exit 2, not joined" "exit $rc: $(cut -c1-100 <<<"$err")" $([ $rc = 2 ] && grep -q 'could not prove it holds the token' <<<"$err" && echo 1 || echo 0)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
err=$(rk 0 1 j3 --coordinator "127.0.0.1:$port" --out c 2>&1 >/dev/null); rc=$?
custom "--coordinator without --token-file" "bwscope fleet --coordinator …" "says it is unauthenticated" "exit $rc: $(grep -m1 -o 'warning: --coordinator[^:]*' <<<"$err")" $([ $rc = 0 ] && grep -q 'not authenticated' <<<"$err" && echo 1 || echo 0)
PMI_RANK=0 PMI_SIZE=2 timeout 60 "$BW" fleet --control tcp --suites none --schedule none --timeout 20 --out p1 >/dev/null 2>&1 & p1=$!
for _ in $(seq 100); do [ -e .bwscope-fleet-default.json ] && break; sleep 0.1; done
err=$(PMI_RANK=0 PMI_SIZE=2 timeout 60 "$BW" fleet --control tcp --suites none --schedule none --timeout 20 --out p2 2>&1 >/dev/null); rc=$?
PMI_RANK=1 PMI_SIZE=2 timeout 60 "$BW" fleet --control tcp --suites none --schedule none --timeout 20 >/dev/null 2>&1; wait $p1; rc1=$?
custom "a second rank 0 without a job name, same folder" "PMI_RANK=0 … bwscope fleet (twice)" "the second refused, the first completes" "exit $rc / first $rc1: $(cut -c1-80 <<<"$err")" $([ $rc = 2 ] && [ $rc1 = 0 ] && grep -q 'another fleet is starting' <<<"$err" && echo 1 || echo 0)
if command -v mpiexec.hydra >/dev/null; then
  for i in 1 2; do timeout 120 mpiexec.hydra -np 2 "$BW" fleet --control tcp --suites none --schedule none --timeout 30 --out hy$i >/dev/null 2>&1 & done; wait
  jobs=$(jq -r '.launch.job' hy1/fleet.json hy2/fleet.json 2>/dev/null | sort -u | wc -l)
  custom "two MPICH (Hydra) jobs at once in one folder" "mpiexec.hydra -np 2 bwscope fleet … (×2 at once)" "two fleets, two job names" "$jobs job names, $(jq -r '[.nodes[].status]|join(",")' hy1/fleet.json hy2/fleet.json 2>/dev/null | tr '\n' ' ')" $([ "$jobs" = 2 ] && [ "$(jq -r '.nodes[].status' hy1/fleet.json hy2/fleet.json | sort -u)" = ok ] && echo 1 || echo 0)
fi
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_MCA_ess_base_jobid=j4 timeout 60 "$BW" fleet --control tcp --schedule none --suites cache --timeout 20 >/dev/null 2>&1 &
err=$(rk 0 2 j4 --out j4 2>&1 >/dev/null); rc=$?; wait
custom "ranks started with other flags" "rank 0 --suites none, rank 1 --suites cache" "exit 2, names node.suites" "exit $rc: $(cut -c1-100 <<<"$err")" $([ $rc = 2 ] && grep -q 'node.suites' <<<"$err" && echo 1 || echo 0)
mkdir -m 777 out-shared; echo precious > victim; ln -s "$PWD/victim" out-shared/.bwscope-write-test
PMI_RANK=0 PMI_SIZE=1 timeout 60 "$BW" fleet --suites none --schedule none --out out-shared >/dev/null 2>&1
custom "a link planted as the fleet's write probe" "bwscope fleet --out shared-folder" "the link's target untouched" "$(cat victim)" $([ "$(cat victim)" = precious ] && echo 1 || echo 0)
cd ..

# ---- round 4 (issue 30): hostile tables, escapes, fleet bounds, stacks ----
mkdir r4 && cd r4
# item 3: a malformed SMBIOS table (a valid entry point before 8 zero bytes)
mkdir smb && head -c 8 /dev/zero > smb/DMI
printf '_SM3_\x00\x18\x03\x03\x00\x01\x00\x08\x00\x00\x00\x00\x00\x0f\x00\x00\x00\x00\x00' > smb/smbios_entry_point
python3 -c 'import sys; b=bytearray(open(sys.argv[1],"rb").read()); b[5]=(-sum(b))&255; open(sys.argv[1],"wb").write(b)' smb/smbios_entry_point
for c in "info --no-clock" "${TINY[*]}"; do
  out=$(BWSCOPE_SMBIOS_DIR=smb timeout 60 "$BW" $c --json - 2>smb.err); rc=$?
  note=$(jq -r '(.host // .).dram.note' <<<"$out" 2>/dev/null)
  custom "SMBIOS: a structure of length 0 ($(cut -d' ' -f1 <<<"$c"))" "BWSCOPE_SMBIOS_DIR=d bwscope $(cut -d' ' -f1 <<<"$c") … (DMI: 8 zero bytes)" "exit 0, DRAM peak unknown" "exit $rc: $(cut -c1-90 <<<"$note")" $([ $rc = 0 ] && ! grep -q panicked smb.err && grep -q 'DRAM peak unknown (corrupt SMBIOS table' <<<"$note" && echo 1 || echo 0)
done
# item 7: terminal escapes and formulas in a run file
jq '.records[0].kernel="k\u001b]0;pwned\u0007\u001b[2J" | .records[1].kernel="=HYPERLINK(\"http://x\")" | .host.cpu.model_name="CPU\u001b[2J"' ../run.json > esc.json
for f in table md csv; do
  "$BW" report esc.json -f $f > esc.$f 2>&1; rc=$?
  custom "a run file with terminal escapes, report -f $f" "bwscope report esc.json -f $f" "exit 0, no ESC or BEL byte" "exit $rc, $(tr -cd '\033\007' < esc.$f | wc -c) ESC/BEL bytes" $([ $rc = 0 ] && [ "$(tr -cd '\033\007' < esc.$f | wc -c)" = 0 ] && echo 1 || echo 0)
done
cell=$(grep -o "'=HYPERLINK[^,]*" esc.csv | head -1)
custom "…a kernel named =HYPERLINK(…) in the CSV" "bwscope report esc.json -f csv" "the cell starts with '" "${cell:-a bare formula}" $([ -n "$cell" ] && ! grep -qE ',"?=HYPERLINK' esc.csv && echo 1 || echo 0)
# item 8: fleet job sizes no launcher produces, rank 0 of a large job
err=$(OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=4294967295 timeout 60 "$BW" fleet --suites info --schedule none --timeout 3 2>&1 >/dev/null); rc=$?
custom "a fleet of 4,294,967,295 ranks" "OMPI_COMM_WORLD_SIZE=4294967295 bwscope fleet" "exit 2, names the variable" "exit $rc: $(cut -c1-90 <<<"$err")" $([ $rc = 2 ] && grep -q 'OMPI_COMM_WORLD_SIZE=4294967295 is more ranks' <<<"$err" && echo 1 || echo 0)
check "fleet --dry-run --nodes 1000000" 2 "at most 262144" -- fleet --dry-run --nodes 1000000
t0=$(date +%s%N)
OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=30000 OMPI_MCA_ess_base_jobid=r4big timeout 120 "$BW" fleet --suites info --schedule none --timeout 3 --out big >/dev/null 2>&1
s8=$(( ($(date +%s%N) - t0) / 1000000000 )); n=$(jq '.nodes|length' big/fleet.json 2>/dev/null)
custom "rank 0 of 30,000 ranks, none joins" "OMPI_COMM_WORLD_SIZE=30000 bwscope fleet --timeout 3" "done in well under 30 s" "${s8} s, ${n:-no} nodes in fleet.json" $([ "$s8" -lt 30 ] && [ "$n" = 30000 ] && echo 1 || echo 0)
OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=30000 OMPI_MCA_ess_base_jobid=r4term "$BW" fleet --suites info --schedule none --timeout 60 --out term >/dev/null 2>&1 & pid=$!
for _ in $(seq 200); do [ -e .bwscope-fleet-r4term.json ] && break; sleep 0.1; done
t0=$(date +%s%N); kill -TERM $pid; wait $pid; rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
custom "…the first SIGTERM to it" "kill -TERM <rank 0 of 30,000>" "exit 130 at once, interrupted" "exit $rc after $ms ms, interrupted $(jq .interrupted term/fleet.json 2>/dev/null)" $([ $rc = 130 ] && [ $ms -lt 15000 ] && [ "$(jq .interrupted term/fleet.json)" = true ] && echo 1 || echo 0)
# item 9: the ranks of a stopped rank 0
r9() { OMPI_COMM_WORLD_RANK=$1 OMPI_COMM_WORLD_SIZE=2 OMPI_MCA_ess_base_jobid=r4stop exec "$BW" fleet --control tcp --suites cache --samples 50 --schedule none --timeout 5 "${@:2}"; }
r9 0 --out stop >/dev/null 2>&1 & p0=$!
for _ in $(seq 200); do [ -e .bwscope-fleet-r4stop.json ] && break; sleep 0.1; done
( r9 1 >/dev/null 2>r9.err ) & p1=$!
( sleep 120; kill $p1 ) 2>/dev/null & w9=$!
for _ in $(seq 300); do [ -e .bwscope-fleet-r4stop.json ] || break; sleep 0.05; done
kill -STOP $p0; t0=$(date +%s); wait $p1; rc=$?; s9=$(( $(date +%s) - t0 )); kill -CONT $p0; kill -KILL $p0 $w9; wait $p0 $w9 2>/dev/null
custom "rank 0 stopped (SIGSTOP) after rank 1 joined" "kill -STOP <rank 0>; rank 1 at --timeout 5" "rank 1 ends within ~5 s, says why" "exit $rc after $s9 s: $(grep -o 'rank 0 has been silent for [0-9]* s' r9.err)" $([ $rc != 0 ] && [ $rc != 143 ] && [ $s9 -le 15 ] && grep -q 'rank 0 has been silent' r9.err && echo 1 || echo 0)
# item 13: refused fleets leave no folder
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_MCA_ess_base_jobid=r4mix timeout 60 "$BW" fleet --control tcp --schedule none --suites cache --timeout 20 >/dev/null 2>&1 &
err=$(OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 OMPI_MCA_ess_base_jobid=r4mix timeout 60 "$BW" fleet --control tcp --schedule none --suites none --timeout 20 --out mixed 2>&1 >/dev/null); rc=$?; wait
custom "a fleet refused for mixed flags, --out mixed" "rank 0 --suites none, rank 1 --suites cache" "exit 2, no folder mixed" "exit $rc, mixed $( [ -e mixed ] && echo present || echo absent)" $([ $rc = 2 ] && [ ! -e mixed ] && echo 1 || echo 0)
PMI_RANK=0 PMI_SIZE=2 timeout 60 "$BW" fleet --control tcp --suites none --schedule none --timeout 8 --out p1 >/dev/null 2>&1 & p1=$!
for _ in $(seq 100); do [ -e .bwscope-fleet-default.json ] && break; sleep 0.1; done
err=$(PMI_RANK=0 PMI_SIZE=2 timeout 60 "$BW" fleet --control tcp --suites none --schedule none --timeout 8 --out p2/nested 2>&1 >/dev/null); rc=$?; kill $p1; wait $p1 2>/dev/null
custom "a second rank 0 refused, --out p2/nested" "PMI_RANK=0 … bwscope fleet (twice)" "exit 2, no folder p2" "exit $rc, p2 $( [ -e p2 ] && echo present || echo absent)" $([ $rc = 2 ] && [ ! -e p2 ] && echo 1 || echo 0)
# item 10: the server's log of failed handshakes, and its room
"$BW" net serve --port 0 --timeout 3 2>fl.err & spid=$!
for _ in $(seq 50); do port=$(grep -o '127.0.0.1:[0-9]*' fl.err | head -1 | cut -d: -f2); [ -n "$port" ] && break; sleep 0.1; done
n=$(python3 - "$port" <<'PY' 2>/dev/null
import socket, struct, sys, time
t0, n = time.time(), 0
while time.time() - t0 < 5:
    try:
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.connect(("127.0.0.1", int(sys.argv[1]))); s.send(b"GET / HTTP/1.0\r\n\r\n"); s.close(); n += 1
    except OSError:
        pass
print(n)
PY
)
sleep 1.5; kill $spid; wait $spid 2>/dev/null
l=$(( $(wc -l < fl.err) - 1 )); q=$(grep -c ' ?:' fl.err)
custom "5 s of HTTP requests that reset, to net serve" "${n:-?} connections to bwscope net serve" "≤ 6 lines a second, every peer named" "$l lines, $q naming the peer ?" $([ "$l" -le 40 ] && [ "$q" = 0 ] && grep -q 'more failed handshakes' fl.err && echo 1 || echo 0)
( ulimit -n 20; exec "$BW" net serve --port 0 --timeout 3 ) 2>room.err & spid=$!
for _ in $(seq 50); do port=$(grep -o '127.0.0.1:[0-9]*' room.err | head -1 | cut -d: -f2); [ -n "$port" ] && break; sleep 0.1; done
room=$(grep -o 'room for [0-9]* streams' room.err | grep -o '[0-9]*')
err=$(timeout 60 "$BW" net run "127.0.0.1:$port" -m stream -P "${room:-1}" -t 0.3 -O 0.1 -s 64KiB 2>&1 >/dev/null); rc=$?; kill $spid; wait $spid 2>/dev/null
custom "…under ulimit -n 20, a leader asks for the room it announced" "bwscope net run … -P <room>" "exit 0" "room for ${room:-?} streams, exit $rc$(grep -m1 -o 'can take [0-9]* now' <<<"$err" | sed 's/^/: /')" $([ -n "$room" ] && [ $rc = 0 ] && echo 1 || echo 0)
# item 12: compare across machines
jq '.host.env.hostname="node17" | .host.cpu.model_name="Intel Xeon Platinum 8480+"' ../run.json > other-host.json
out=$("$BW" compare ../run.json other-host.json 2>&1); rc=$?
custom "compare of runs from two machines" "bwscope compare run.json other-host.json" "exit 0, says the machines differ" "exit $rc: $(grep -m1 -o 'these runs come from different machines ([^:]*' <<<"$out")" $([ $rc = 0 ] && grep -q 'different machines (host names and CPU models differ' <<<"$out" && echo 1 || echo 0)
# item 14: a misspelt BWSCOPE_DISABLE_ISA
err=$(BWSCOPE_DISABLE_ISA=avx512 timeout 60 "$BW" info --no-clock 2>&1 >/dev/null); rc=$?
custom "BWSCOPE_DISABLE_ISA=avx512 (for avx512f)" "BWSCOPE_DISABLE_ISA=avx512 bwscope info" "exit 2, names it and the known ones" "exit $rc: $(cut -c1-90 <<<"$err")" $([ $rc = 2 ] && grep -q "^error: BWSCOPE_DISABLE_ISA: 'avx512' is not a feature" <<<"$err" && grep -q 'avx512f' <<<"$err" && echo 1 || echo 0)
# item 15: impossible records, cpus that do not exist
jq '.records[0].threads=0' ../run.json > t0.json
check "a record with threads: 0" 2 "threads = 0 is not a possible value" -- report t0.json -f table
jq '.records[0].size_bytes=0' ../run.json > s0.json
check "a record with size_bytes: 0" 2 "size_bytes = 0 is not a possible value" -- plot s0.json --list
check "--cpus 0-999999999" 2 "cpus [0-9]+-999999999 are offline" -- cache --cpus 0-999999999
check "--cpu-nodes 0-999999999" 2 "-999999999 do not exist" -- numa --cpu-nodes 0-999999999
# item 11: a tiny stack
out=$(bash -c "ulimit -Ss 64; exec '$BW' --help" 2>&1); rc=$?
custom "--help under a 64 KiB soft stack limit" "ulimit -Ss 64; bwscope --help" "exit 0, the help" "exit $rc: $(head -1 <<<"$out" | cut -c1-60)" $([ $rc = 0 ] && grep -q Usage <<<"$out" && echo 1 || echo 0)
for c in --help kernels; do
  err=$(bash -c "ulimit -s 64; exec '$BW' $c" 2>&1 >/dev/null); rc=$?
  custom "$c under ulimit -s 64 (hard limit too)" "ulimit -s 64; bwscope $c" "exit 2, one line naming ulimit -s" "exit $rc: $(cut -c1-90 <<<"$err")" $([ $rc = 2 ] && [ "$(wc -l <<<"$err")" = 1 ] && grep -q '^error: ulimit -s' <<<"$err" && echo 1 || echo 0)
done
cd ..

# ---- round 5 (issue 30): files others plant, read or share ----
mkdir r5 && cd r5
# item 1: links planted at the knee store's old temporary names
mkdir -m 1777 sh
XDG_CACHE_HOME=sh timeout 120 "$BW" info --probe-knees --no-clock >/dev/null 2>&1
store=$(ls sh/bwscope/knees-*.json 2>/dev/null | head -1)
echo "do not touch" > victim; v0=$(sha victim)
python3 -c 'import os, sys; n = os.getpid() + 1; [os.symlink(sys.argv[2], f"{sys.argv[1]}.{p}") for p in range(n, n + 2000)]' "$store" "$PWD/victim"
XDG_CACHE_HOME=sh timeout 120 "$BW" info --probe-knees --no-clock >/dev/null 2>&1; rc=$?
custom "knee store: links at <store>.json.<pid> for the next 2000 pids" "XDG_CACHE_HOME=sh bwscope info --probe-knees" "exit 0, victim untouched, store 0600" "exit $rc, victim $( [ "$(sha victim)" = "$v0" ] && echo untouched || echo OVERWRITTEN), store $(stat -c %a "$store")" $([ $rc = 0 ] && [ "$(sha victim)" = "$v0" ] && [ "$(stat -c %a "$store")" = 600 ] && echo 1 || echo 0)
rm -f "$store".[0-9]*
# item 2: a store others may change, or another user's
ign() { XDG_CACHE_HOME=sh timeout 60 "$BW" "${TINY[@]}" --json - 2>/dev/null | jq -r '[(.warnings[] | select(.kind=="knee_store_ignored") | .reason), (if .host.knees then "USED" else empty end)] | join("; ")'; }
chmod 666 "$store"; got=$(ign)
custom "knee store of mode 0666" "XDG_CACHE_HOME=sh bwscope cache … --json -" "not used, knee_store_ignored" "${got:-nothing}" $(grep -q 'others may change it (mode 0666)' <<<"$got" && ! grep -q USED <<<"$got" && echo 1 || echo 0)
chmod 644 "$store"
if [ "$(id -u)" = 0 ]; then
  chown 65534:65534 "$store"; got=$(ign)
  custom "knee store owned by another user (uid 65534)" "XDG_CACHE_HOME=sh bwscope cache … --json -" "not used, knee_store_ignored" "${got:-nothing}" $(grep -q 'belongs to uid 65534' <<<"$got" && ! grep -q USED <<<"$got" && echo 1 || echo 0)
  chown 0:0 "$store"
fi
# item 4: a FIFO or /dev/zero as the store or the firmware table
cp "$store" store.bak; rm "$store"; mkfifo "$store"
err=$(XDG_CACHE_HOME=sh timeout 30 "$BW" info --no-clock 2>&1 >/dev/null); rc=$?
custom "knee store is a FIFO" "XDG_CACHE_HOME=sh bwscope info" "exit 0 at once, says so" "exit $rc: $(grep -o 'it is not a regular file' <<<"$err" | head -1)" $([ $rc = 0 ] && grep -q 'not a regular file' <<<"$err" && echo 1 || echo 0)
rm "$store"; ln -s /dev/zero "$store"
err=$( (ulimit -v 4194304; XDG_CACHE_HOME=sh timeout 30 "$BW" info --no-clock) 2>&1 >/dev/null); rc=$?
custom "knee store is a link to /dev/zero" "XDG_CACHE_HOME=sh bwscope info (ulimit -v 4 GiB)" "exit 0 at once, says so" "exit $rc: $(grep -o 'it is a symbolic link' <<<"$err" | head -1)" $([ $rc = 0 ] && grep -q 'symbolic link' <<<"$err" && echo 1 || echo 0)
rm "$store"; cp store.bak "$store"
mkdir smb; cp ../r4/smb/smbios_entry_point smb/; mkfifo smb/DMI
for what in FIFO "link to /dev/zero"; do
  [ "$what" = FIFO ] || { rm smb/DMI; ln -s /dev/zero smb/DMI; }
  out=$( (ulimit -v 4194304; BWSCOPE_SMBIOS_DIR=smb timeout 30 "$BW" info --no-clock --json -) 2>/dev/null); rc=$?
  note=$(jq -r '.dram.note' <<<"$out" 2>/dev/null)
  custom "SMBIOS DMI is a $what" "BWSCOPE_SMBIOS_DIR=smb bwscope info (ulimit -v 4 GiB)" "exit 0 at once, DRAM peak unknown" "exit $rc: $(cut -c1-90 <<<"$note")" $([ $rc = 0 ] && grep -q 'not a regular file' <<<"$note" && echo 1 || echo 0)
done
# item 5: report from stdin into the file stdin reads
cp ../run.json r.json; h=$(sha r.json)
err=$(timeout 60 "$BW" report - -f md -o r.json < r.json 2>&1 >/dev/null); rc=$?
custom "report - -o the file stdin reads" "bwscope report - -f md -o r.json < r.json" "exit 2, the run untouched" "exit $rc, $( [ "$(sha r.json)" = "$h" ] && echo untouched || echo CLOBBERED): $(cut -c1-70 <<<"$err")" $([ $rc = 2 ] && [ "$(sha r.json)" = "$h" ] && echo 1 || echo 0)
# item 6: two runs, one --json; two fleets, one second
timeout 120 "$BW" cache --kernel seq_read_64_scalar --sizes 16KiB --samples 40 --min-sample-ms 100 --json x.json --csv x.csv >/dev/null 2>&1 & p=$!
for _ in $(seq 200); do [ -e .x.json.bwscope-lock ] && break; sleep 0.05; done
err=$(timeout 60 "$BW" "${TINY[@]}" --json x.json --csv y.csv 2>&1 >/dev/null); rc=$?; wait $p; rc1=$?
custom "two runs given the same --json at once" "bwscope cache … --json x.json (twice)" "the second exits 2, the first 0" "exit $rc then $rc1: $(cut -c1-80 <<<"$err")" $([ $rc = 2 ] && [ $rc1 = 0 ] && [ ! -e y.csv ] && grep -q 'another bwscope run is writing it' <<<"$err" && echo 1 || echo 0)
fl() { OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 OMPI_MCA_ess_base_jobid=r5f$1 timeout 60 "$BW" fleet --control tcp --suites none --schedule none --timeout 10 >/dev/null 2>&1; }
fl 1 & fl 2 & fl 3 & wait
n=$(ls -d bwscope-fleet/*/ | wc -l); j=$(ls bwscope-fleet/*/fleet.json | wc -l)
custom "three fleets started in the same second" "bwscope fleet & bwscope fleet & bwscope fleet" "three folders, a fleet.json in each" "$n folders, $j fleet.json" $([ "$n" = 3 ] && [ "$j" = 3 ] && echo 1 || echo 0)
# the hostile hour: what a second user plants beside our files
echo precious > victim2; ln -s "$PWD/victim2" .h.json.bwscope-lock
err=$(timeout 60 "$BW" "${TINY[@]}" --json h.json 2>&1 >/dev/null); rc=$?
custom "a link planted at an output's lock file" "bwscope cache … --json h.json" "exit 2, the link's target untouched" "exit $rc, $(cat victim2): $(grep -o 'it is a symbolic link[^(]*' <<<"$err")" $([ $rc = 2 ] && [ "$(cat victim2)" = precious ] && [ ! -e h.json ] && echo 1 || echo 0)
rm .h.json.bwscope-lock; mkfifo .h.json.bwscope-lock
err=$(timeout 30 "$BW" "${TINY[@]}" --json h.json 2>&1 >/dev/null); rc=$?
custom "a FIFO planted at an output's lock file" "bwscope cache … --json h.json" "exit 2 at once" "exit $rc: $(grep -o 'is not a regular file[^;]*' <<<"$err")" $([ $rc = 2 ] && echo 1 || echo 0)
rm .h.json.bwscope-lock
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  mkdir -m 1777 tmp1777
  setpriv --reuid 65534 --regid 65534 --clear-groups flock tmp1777/.x.json.bwscope-lock sleep 5 & fp=$!
  for _ in $(seq 100); do [ -e tmp1777/.x.json.bwscope-lock ] && break; sleep 0.05; done
  err=$(timeout 60 "$BW" "${TINY[@]}" --json tmp1777/x.json 2>&1 >/dev/null); rc=$?; kill $fp 2>/dev/null; wait $fp 2>/dev/null
  custom "another user holds the lock of /tmp-like x.json" "setpriv --reuid 65534 flock …; bwscope … --json x.json" "exit 2, names the user" "exit $rc: $(grep -o 'another bwscope run of uid 65534' <<<"$err")" $([ $rc = 2 ] && grep -q 'run of uid 65534' <<<"$err" && echo 1 || echo 0)
  mkdir -p sh2/bwscope; chown 65534:65534 sh2/bwscope
  err=$(XDG_CACHE_HOME=sh2 timeout 120 "$BW" info --probe-knees --no-clock 2>&1 >/dev/null); rc=$?
  custom "knee store folder owned by another user" "XDG_CACHE_HOME=sh2 bwscope info --probe-knees" "exit 0, nothing stored there, says why" "exit $rc, $(ls sh2/bwscope | wc -l) files: $(grep -o 'the folder belongs to uid 65534' <<<"$err")" $([ $rc = 0 ] && [ "$(ls sh2/bwscope | wc -l)" = 0 ] && grep -q 'belongs to uid 65534' <<<"$err" && echo 1 || echo 0)
  mkdir elsewhere; ln -s "$PWD/elsewhere" tmp1777/bwscope-fleet; chown -h 65534:65534 tmp1777/bwscope-fleet
  err=$(cd tmp1777 && OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 OMPI_MCA_ess_base_jobid=r5l timeout 60 "$BW" fleet --control tcp --suites none --schedule none --timeout 10 2>&1 >/dev/null); rc=$?
  custom "bwscope-fleet planted as another user's link in a sticky folder" "cd /tmp-like; bwscope fleet" "exit 2, nothing written where it points" "exit $rc, $(ls elsewhere | wc -l) entries there" $([ $rc = 2 ] && [ "$(ls elsewhere | wc -l)" = 0 ] && echo 1 || echo 0)
fi
cd ..

# ---- round 6 (issue 42): names from other machines, contend, counts ----
mkdir r6 && cd r6
hostile() { python3 -c 'import sys; t = sys.stdin.read(); sys.exit(any((c < " " and c not in "\n\t") or c in "\x7f\u202e\u2066\u200b\u2028" or "\x80" <= c <= "\x9f" for c in t))'; }
# item 1: a rank whose host name holds a newline and escapes, lost in the network phase
# (rank 1 without `timeout`: unshare and python exec it, so $p1 is bwscope)
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
  OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 OMPI_MCA_ess_base_jobid=r6h timeout 90 "$BW" fleet --control tcp --suites info --schedule shift --step-time 3 --timeout 5 --out fd >r0.out 2>r0.err & p0=$!
  for _ in $(seq 200); do [ -e .bwscope-fleet-r6h.json ] && break; sleep 0.1; done
  OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_MCA_ess_base_jobid=r6h unshare --uts python3 -c 'import os, socket, sys; socket.sethostname(sys.argv[1]); os.execv(sys.argv[2], sys.argv[2:])' "$(printf 'x\nvictim-node-07\033]0;pwned\007')" "$BW" fleet --control tcp --suites info --schedule shift --step-time 3 --timeout 5 >/dev/null 2>&1 & p1=$!
  for _ in $(seq 300); do [ -e .bwscope-fleet-r6h.json ] || break; sleep 0.1; done
  sleep 1.5; kill -KILL $p1; wait $p0 2>/dev/null; wait $p1 2>/dev/null
  forged=$(grep -cx 'victim-node-07' fd/drain.txt 2>/dev/null); vf=$(grep -c '^victim-node-07' fd/verdicts.txt 2>/dev/null)
  esc=$(cat fd/drain.txt fd/verdicts.txt r0.out r0.err 2>/dev/null | hostile && echo none || echo SOME)
  custom "a rank's host name 'x\\nvictim-node-07' + escapes, lost in the network phase" "unshare --uts …; bwscope fleet (rank 1 killed)" "no forged line in drain.txt/verdicts.txt, no escape on rank 0's terminal" "drain.txt: $(wc -l <fd/drain.txt 2>/dev/null) line(s), $forged forged; verdicts.txt $vf forged; escapes: $esc" $([ -e fd/drain.txt ] && [ "$forged" = 0 ] && [ "$vf" = 0 ] && [ "$esc" = none ] && echo 1 || echo 0)
fi
# item 2: contend's probe that cannot start; a panic under ulimit -v
if [ "$(cat /proc/sys/vm/nr_hugepages)" = 0 ]; then
  check "contend: the probe cannot start (no huge pages), the flow can" 0 "" -- contend --net loopback --probe latency --memory hugetlb-2M --samples 2 --min-sample-ms 50
fi
err=$( (ulimit -v 60000; RUST_BACKTRACE=1 timeout 60 "$BW" contend --cpu cpus:0 --size 1MiB --probe latency --samples 2 --min-sample-ms 50) 2>&1 >/dev/null); rc=$?
custom "contend under ulimit -v 60000 with RUST_BACKTRACE=1" "(ulimit -v 60000; RUST_BACKTRACE=1 bwscope contend --cpu cpus:0 --size 1MiB --probe latency)" "ends, no panic" "exit $rc$(grep -m1 -o 'could not start[^:]*' <<<"$err" | sed 's/^/: /')" $([ $rc != 124 ] && [ $rc != 101 ] && ! grep -q panicked <<<"$err" && echo 1 || echo 0)
# item 3: a flow to a stopped transponder
"$BW" net serve --port 0 2>st.err & sp=$!
for _ in $(seq 50); do port=$(grep -o '127.0.0.1:[0-9]*' st.err | head -1 | cut -d: -f2); [ -n "$port" ] && break; sleep 0.1; done
kill -STOP $sp
out=$(timeout 90 "$BW" contend --net "127.0.0.1:$port" --samples 2 --min-sample-ms 100 --json - 2>/dev/null); rc=$?
kill -CONT $sp; kill $sp; wait $sp 2>/dev/null
v=$(jq -r '[.records[] | select(.extra.agent_kind=="net") | .extra.valid] | map(tostring) | join(",")' <<<"$out" 2>/dev/null)
why=$(jq -r '[.records[] | select(.extra.agent_kind=="net") | .reason // empty][0]' <<<"$out" 2>/dev/null | cut -c1-80)
custom "contend --net to a stopped (SIGSTOP) transponder" "bwscope contend --net 127.0.0.1:PORT" "the flow's records invalid, saying why" "exit $rc, valid: ${v:-?}: $why" $([ -n "$v" ] && ! grep -q true <<<"$v" && echo 1 || echo 0)
# item 4: counts from outside
for spec in 4294967295@0 18446744073709551615@0; do
  err=$( (ulimit -v 4000000; timeout 30 "$BW" contend --cpu $spec) 2>&1 >/dev/null); rc=$?
  custom "contend --cpu $spec under ulimit -v 4 GB" "bwscope contend --cpu $spec" "exit 2, names --cpu" "exit $rc: $(cut -c1-90 <<<"$err")" $([ $rc = 2 ] && grep -q '^error: --cpu' <<<"$err" && echo 1 || echo 0)
done
check "numa --load 18446744073709551615@0 --oversubscribe" 2 "^error: --load" -- numa --load 18446744073709551615@0 --oversubscribe
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && [ -x /usr/bin/time ] && [ -e /sys/devices/system/node/node0/cpulist ]; then
  truncate -s 1G big
  err=$(unshare -m sh -c "mount --bind '$PWD/big' /sys/devices/system/node/node0/cpulist && exec /usr/bin/time -f 'peak %M KB' timeout 120 '$BW' info --no-clock --json -" 2>&1 >/dev/null); rc=$?
  kb=$(grep -o 'peak [0-9]* KB' <<<"$err" | grep -o '[0-9]*'); rm -f big
  custom "a 1 GiB file bind-mounted over node0/cpulist" "unshare -m; mount --bind big …/node0/cpulist; bwscope info" "exit 0, not read whole (peak < 200 MB)" "exit $rc, peak ${kb:-?} KB" $([ $rc = 0 ] && [ -n "$kb" ] && [ "$kb" -lt 200000 ] && echo 1 || echo 0)
fi
# item 5: a transponder's words; bidi controls in a run file
python3 - >tp.port 2>/dev/null <<'PY' &
import socket, sys
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); l.bind(("127.0.0.1", 0)); l.listen(8)
print(l.getsockname()[1], flush=True)
msg = ("bad \x1b]0;pwned\x07\x1b[2J\u202e\u2066\u200b\u2028" + "x" * 60000).encode()
l.settimeout(60)
for _ in range(4):
    try:
        c, _ = l.accept()
    except OSError:
        break
    c.settimeout(2)
    try:
        c.recv(64)
    except OSError:
        pass
    c.sendall(len(msg).to_bytes(4, "little") + bytes([10]) + msg); c.close()
PY
tpid=$!
for _ in $(seq 50); do [ -s tp.port ] && break; sleep 0.1; done; port=$(cat tp.port)
for cmd in "net run 127.0.0.1:$port --timeout 3" "contend --net 127.0.0.1:$port --samples 2 --min-sample-ms 50"; do
  err=$(timeout 60 "$BW" $cmd 2>&1); rc=$?
  long=$(awk '{ if (length($0) > m) m = length($0) } END { print m+0 }' <<<"$err")
  custom "a transponder's Error frame with escapes, bidi and 60 KB: ${cmd%% 127*}" "bwscope $cmd" "no escape or bidi control, no 60 KB line" "exit $rc, longest line $long, escapes: $(hostile <<<"$err" && echo none || echo SOME)" $(hostile <<<"$err" && [ "$long" -lt 8000 ] && ! grep -q panicked <<<"$err" && echo 1 || echo 0)
done
kill $tpid 2>/dev/null; wait $tpid 2>/dev/null
jq '.records[0].kernel="seq_read\u202e\u2066\u200b\u2028x" | .host.cpu.model_name="CPU\u202eevil"' ../run.json > bidi.json
out=$("$BW" report bidi.json -f table 2>&1); rc=$?
custom "a run file with bidi and zero-width characters, report -f table" "bwscope report bidi.json -f table" "exit 0, none of U+202E U+2066 U+200B U+2028" "exit $rc, $(hostile <<<"$out" && echo none || echo SOME)" $([ $rc = 0 ] && hostile <<<"$out" && echo 1 || echo 0)
# item 7: output names of 242-255 bytes
name=$(printf 'a%.0s' $(seq 245)).json
err=$(timeout 60 "$BW" "${TINY[@]}" --json "$name" 2>&1 >/dev/null); rc=$?
custom "an output name of 250 bytes" "bwscope cache … --json a…a.json (250 bytes)" "exit 0, the file written" "exit $rc$( [ -f "$name" ] && echo ', written')$(grep -m1 '^error' <<<"$err" | cut -c1-60 | sed 's/^./: &/')" $([ $rc = 0 ] && [ -f "$name" ] && echo 1 || echo 0)
# item 8: the smaller ones
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
  mkdir ro
  err=$(unshare -m sh -c "mount -t tmpfs tmpfs ro && echo old > ro/r.json && chmod 644 ro/r.json && mount -o remount,ro ro && exec timeout 60 '$BW' ${TINY[*]} --json ro/r.json" 2>&1 >/dev/null); rc=$?
  custom "a 0644 file on a read-only mount" "bwscope cache … --json ro/r.json" "exit 2, says read-only file system, no chmod hint" "exit $rc: $(cut -c1-100 <<<"$err")" $([ $rc = 2 ] && grep -q 'read-only file system' <<<"$err" && ! grep -q chmod <<<"$err" && echo 1 || echo 0)
fi
check "contend slices of 0.1 ms" 2 "^error: --min-sample-ms" -- contend --cpu 1@0 --min-sample-ms 0.1
out=$("$BW" contend --help 2>&1)
custom "contend takes --token-file" "bwscope contend --help" "lists --token-file" "$(grep -c -- '--token-file' <<<"$out") mention(s)" $(grep -q -- '--token-file' <<<"$out" && echo 1 || echo 0)
# (exec, no `timeout`: $p0 must be bwscope itself for SIGSTOP)
fl8() { OMPI_COMM_WORLD_RANK=$1 OMPI_COMM_WORLD_SIZE=2 OMPI_MCA_ess_base_jobid=r6f exec "$BW" fleet --control tcp --suites none --schedule shift --step-time 3 --timeout 5 "${@:2}"; }
fl8 0 --out rf >/dev/null 2>f0.err & p0=$!
for _ in $(seq 200); do [ -e .bwscope-fleet-r6f.json ] && break; sleep 0.1; done
fl8 1 >/dev/null 2>f1.err & p1=$!
for _ in $(seq 400); do grep -q "network phase over" f0.err && break; sleep 0.05; done
sleep 0.5; kill -STOP $p0; t0=$(date +%s); wait $p1; rc=$?; s8=$(( $(date +%s) - t0 )); kill -CONT $p0; kill -KILL $p0; wait $p0 2>/dev/null
said=$(grep -o 'rank 0 has been silent for [0-9]*' f1.err | grep -o '[0-9]*$')
custom "rank 0 stopped (SIGSTOP) while rank 1 is in a flow" "kill -STOP <rank 0> in the network phase; rank 1 at --timeout 5 --step-time 3" "rank 1 ends within about --timeout plus one step (< 9 s), saying the true silence" "exit $rc after $s8 s: silent for ${said:-?} s" $([ $rc != 0 ] && [ $s8 -lt 9 ] && [ -n "$said" ] && [ $((said + 2)) -ge $s8 ] && echo 1 || echo 0)
for r in $(seq 1 15); do
  OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=16 OMPI_MCA_ess_base_jobid=r6n timeout 60 "$BW" fleet --control tcp --schedule none --suites info --timeout 20 >/dev/null 2>&1 &
done
err=$( (ulimit -n 32; OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=16 OMPI_MCA_ess_base_jobid=r6n exec timeout 60 "$BW" fleet --control tcp --schedule none --suites info --timeout 20) 2>&1 >/dev/null); rc=$?
kill $(jobs -p) 2>/dev/null; wait 2>/dev/null
custom "rank 0 of 16 under a hard ulimit -n 32" "(ulimit -n 32; bwscope fleet) with 15 ranks joining" "exit 2, says how many it needs" "exit $rc: $(grep -m1 '^error' <<<"$err" | cut -c1-100)" $([ $rc = 2 ] && grep -q '^error: ulimit -n: .*needs about 112' <<<"$err" && echo 1 || echo 0)
cd ..

# ---- round 7 (issue 49): the history store, watch, signals, folders ----
mkdir r7 && cd r7
FIX="$ROOT/tests/fixtures/cache-quick.json"
# runs N STORE: N runs of the fixture a day apart imported into STORE
runs() { for i in $(seq 1 "$1"); do jq ".started_at=\"2026-01-$(printf %02d "$i")T10:00:00Z\"" "$FIX" > "in$i.json"; done; BWSCOPE_HISTORY="$2" timeout 60 "$BW" history import in*.json >/dev/null 2>&1; rm -f in*.json; }
hb() { BWSCOPE_HISTORY="$1" timeout 60 "$BW" "${@:2}"; }
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && command -v python3 >/dev/null; then
  chmod 755 .; mkdir -m 1777 sh; runs 2 "$PWD/sh/h.sqlite3"; h=$(sha sh/h.sqlite3)
  mkdir att; runs 1 "$PWD/att/h.sqlite3"
  python3 - "$PWD/att" <<'PY'
import shutil, sqlite3, sys, os
d = sys.argv[1]; c = sqlite3.connect(d + "/h.sqlite3")
c.execute("UPDATE runs SET cpu_model_name = 'EVIL planted CPU'"); c.commit()
c.execute("PRAGMA wal_autocheckpoint = 0"); c.execute("PRAGMA journal_mode = WAL"); c.execute("VACUUM")
shutil.copy(d + "/h.sqlite3-wal", d + "/wal"); os.chmod(d + "/wal", 0o644)
PY
  setpriv --reuid 65534 --regid 65534 --clear-groups cp att/wal sh/h.sqlite3-wal
  out=$(hb "$PWD/sh/h.sqlite3" history 2>&1); rc=$?
  custom "another user's -wal planted beside root's store in a sticky folder" "setpriv --reuid 65534 cp wal h.sqlite3-wal; bwscope history" "exit 2 naming the -wal, store unchanged, no planted run shown" "exit $rc, store $([ "$(sha sh/h.sqlite3)" = "$h" ] && echo unchanged || echo CHANGED): $(grep -o 'h.sqlite3-wal belongs to uid 65534' <<<"$out")" $([ $rc = 2 ] && [ "$(sha sh/h.sqlite3)" = "$h" ] && ! grep -q EVIL <<<"$out" && grep -q 'wal belongs to uid 65534' <<<"$out" && echo 1 || echo 0)
  rm -f sh/h.sqlite3-wal
fi
runs 2 "$PWD/h.sqlite3"; h=$(sha h.sqlite3)
for a in "history --json h.sqlite3" "history show headline/DRAM\ read --csv h.sqlite3-wal" "${TINY[*]} --json h.sqlite3"; do
  err=$(eval hb "$PWD/h.sqlite3" $a 2>&1 >/dev/null); rc=$?
  custom "an output that is the store" "bwscope $a" "exit 2, the store untouched" "exit $rc, $([ "$(sha h.sqlite3)" = "$h" ] && echo untouched || echo CLOBBERED): $(cut -c1-60 <<<"$err")" $([ $rc = 2 ] && [ "$(sha h.sqlite3)" = "$h" ] && echo 1 || echo 0)
done
runs 17 "$PWD/d.sqlite3"; pages=$(( $(stat -c %s d.sqlite3) / 4096 )); part=0; refused=0
for p in $(seq 1 $((pages - 1))); do
  cp d.sqlite3 x.sqlite3; head -c 3000 /dev/urandom | dd of=x.sqlite3 bs=1 seek=$((p * 4096 + 8)) conv=notrunc status=none
  o=$(hb "$PWD/x.sqlite3" history show 'headline/DRAM read' 2>/dev/null); rc=$?
  [ $rc = 2 ] && refused=$((refused + 1)); [ $rc = 0 ] && ! grep -q '17 runs' <<<"$o" && part=$((part + 1))
  rm -f x.sqlite3*
done
custom "every page of a 17-run store overwritten in turn" "dd … x.sqlite3; bwscope history show 'headline/DRAM read'" "the whole series or exit 2, never part of it" "$refused of $((pages - 1)) pages refused, $part partial" $([ $part = 0 ] && [ $refused -gt 0 ] && echo 1 || echo 0)
cp h.sqlite3 s.sqlite3
python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('UPDATE runs SET cpu_model_name = ?', ('CPU\x1b]0;pwned\x07\r\u202e\u2066\u2028' + 'y' * 1000000,)); c.commit()" s.sqlite3
for a in "history" "history --csv -" "history --json -"; do
  o=$(eval hb "$PWD/s.sqlite3" $a 2>&1); rc=$?
  long=$(awk '{ if (length($0) > m) m = length($0) } END { print m+0 }' <<<"$o")
  custom "a 1 MB CPU name with escapes and bidi controls in the store" "bwscope $a" "exit 0, no escape or bidi control, bounded lines" "exit $rc, longest line $long, escapes: $(hostile <<<"$o" && echo none || echo SOME)" $([ $rc = 0 ] && hostile <<<"$o" && [ "$long" -lt 3000 ] && echo 1 || echo 0)
done
cp h.sqlite3 n.sqlite3
python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE rows SET best = 1e308 WHERE rowid = (SELECT w.rowid FROM rows w JOIN cases c ON c.id = w.case_id WHERE c.key = 'headline/DRAM read' LIMIT 1)\"); c.commit()" n.sqlite3
err=$(hb "$PWD/n.sqlite3" history show 'headline/DRAM read' 2>&1 >/dev/null); rc=$?
custom "rows.best = 1e308 in the store" "bwscope history show 'headline/DRAM read'" "exit 2, naming the row" "exit $rc: $(grep -o 'run [0-9]*, case [^:]*: best = 1e308' <<<"$err")" $([ $rc = 2 ] && grep -q 'best = 1e308' <<<"$err" && echo 1 || echo 0)
jq '.nodes[0].run.records[0].gbps.best = 1e308' "$ROOT/tests/fixtures/runs/2026-11-24-54fbad1/fleet.json" > fleet.json
check "a fleet file's node run with gbps.best = 1e308" 2 "node vm:0 .rank 0.: record 1" -- report fleet.json --node vm:0 -f table
err=$(BWSCOPE_HISTORY_TIMEOUT_MS=2147483648 hb "$PWD/h.sqlite3" history 2>&1 >/dev/null); rc=$?
custom "BWSCOPE_HISTORY_TIMEOUT_MS=2147483648" "bwscope history" "exit 2 naming the variable, no panic" "exit $rc: $(grep -o 'BWSCOPE_HISTORY_TIMEOUT_MS=[^;]*' <<<"$err" | cut -c1-80)" $([ $rc = 2 ] && ! grep -q panicked <<<"$err" && echo 1 || echo 0)
o=$(BWSCOPE_HISTORY_TIMEOUT_MS=2147483648 hb "$PWD/h.sqlite3" "${TINY[@]}" --json - 2>/dev/null); rc=$?
custom "a run with BWSCOPE_HISTORY_TIMEOUT_MS=2147483648" "bwscope cache … --json -" "exit 0, complete: true" "exit $rc, complete: $(jq .complete <<<"$o" 2>/dev/null)" $([ $rc = 0 ] && [ "$(jq .complete <<<"$o" 2>/dev/null)" = true ] && echo 1 || echo 0)
jq '.started_at="2026-11-28T12:39:00Z"' "$FIX" > a.json; hb "$PWD/t.sqlite3" history import a.json >/dev/null 2>&1
o=$(hb "$PWD/t.sqlite3" history forget --before 2026-11-28T14:00:00+05:00 2>&1); rc=$?
custom "forget --before 14:00 at +05:00 a run of 12:39 UTC" "bwscope history forget --before 2026-11-28T14:00:00+05:00" "exit 0, forgot 0 runs" "exit $rc: $o" $([ $rc = 0 ] && [ "$o" = "forgot 0 runs" ] && echo 1 || echo 0)
for bad in 9999-99-99 2026-13-45 2026-11-29x "2026-11-28 13:00"; do
  BWSCOPE_HISTORY="$PWD/t.sqlite3" check "forget --before '$bad'" 2 "^error: --before" -- history forget --before "$bad"
done
BWSCOPE_HISTORY="$PWD/h.sqlite3" timeout 60 "$BW" history 2>e19 | true; rc=${PIPESTATUS[0]}
custom "bwscope history into a pipe closed at once" 'bwscope history \| true' "exit 0, no panic" "exit $rc$(grep -m1 -o 'panicked' e19 | sed 's/^/: /')" $([ $rc = 0 ] && ! grep -q panicked e19 && echo 1 || echo 0)
err=$(hb /dev/null history 2>&1); rc=$?
custom "--history /dev/null" "BWSCOPE_HISTORY=/dev/null bwscope history" "exit 2, advice for a non-store, no 'move it away'" "exit $rc: $(cut -c1-100 <<<"$err")" $([ $rc = 2 ] && grep -q -- '--no-history' <<<"$err" && ! grep -q 'move' <<<"$err" && ! grep -q 'this run' <<<"$err" && echo 1 || echo 0)
python3 -c "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1]); c.execute('BEGIN EXCLUSIVE'); time.sleep(3)" h.sqlite3 & lp=$!; sleep 0.5
err=$(BWSCOPE_HISTORY_TIMEOUT_MS=200 hb "$PWD/h.sqlite3" history import "$FIX" 2>&1); rc=$?; wait $lp
custom "a store another process holds locked" "bwscope history import RUN.json" "exit 2, wait (never move it away)" "exit $rc: $(grep -o 'do not move the file away' <<<"$err")" $([ $rc = 2 ] && grep -q 'do not move the file away' <<<"$err" && echo 1 || echo 0)
n=$(hb "$PWD/h.sqlite3" history --machine % --json - 2>/dev/null | jq length)
custom "--machine %" "bwscope history --machine % --json -" "0 runs (a key is compared as text)" "$n runs" $([ "$n" = 0 ] && echo 1 || echo 0)
BWSCOPE_HISTORY="$PWD/h.sqlite3" check "--suite nosuch" 2 "no suite .nosuch.; the suites are cache" -- history --suite nosuch
check "watch --cpu 99" 2 "^error: --cpu:" -- watch --cpu 99 --count 1
check "watch --size 1TiB" 2 "^error: --size:.*smaller --size" -- watch --size 1TiB --count 1
if command -v python3 >/dev/null; then
  rc=$(python3 - "$BW" <<'PY'
import os, signal, subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "watch", "--every", "1s"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN), env=dict(os.environ, BWSCOPE_HISTORY="off"))
time.sleep(0.05); p.send_signal(signal.SIGINT)
try: print(p.wait(timeout=30))
except subprocess.TimeoutExpired: p.kill(); print("still running after 30 s")
PY
)
  custom "SIGINT 50 ms into a watch started with SIGINT ignored (a script's background job)" "bwscope watch & kill -INT" "exit 130" "exit $rc" $([ "$rc" = 130 ] && echo 1 || echo 0)
fi
mkdir xd && (cd xd && env -u BWSCOPE_HISTORY XDG_DATA_HOME=rel/dir HOME="$PWD/../nohome" timeout 60 "$BW" "${TINY[@]}" >/dev/null 2>&1); rc=$?
custom "a relative XDG_DATA_HOME and a HOME that does not exist" "XDG_DATA_HOME=rel/dir HOME=…/nohome bwscope cache …" "exit 0, nothing made under either" "exit $rc, $(find xd nohome -mindepth 1 2>/dev/null | wc -l) entries made" $([ $rc = 0 ] && [ ! -e xd/rel ] && [ ! -e nohome ] && echo 1 || echo 0)
cd ..

if [ "${CARGO_TESTS:-0}" = 1 ]; then
  (cd "$ROOT" && cargo test -q --test robustness --test fuzz >"$T/cargo.log" 2>&1); rc=$?
  [ $rc = 0 ] || tail -30 "$T/cargo.log" >&2
  custom "slow-drip lock-out, fuzzers and the rest (cargo)" "cargo test --test robustness --test fuzz" "exit 0" "exit $rc" $([ $rc = 0 ] && echo 1 || echo 0)
fi

echo
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
