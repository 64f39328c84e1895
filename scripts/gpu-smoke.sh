#!/usr/bin/env bash
# GPU smoke test for `bwscope transfer --backend cuda`, for a machine with an
# NVIDIA GPU and driver (this project's CI has none). Runs the default sweep,
# keeps the JSON as a reference result and checks the shape of the numbers:
#   1. every case ran and verified (no error records, verified == true);
#   2. pinned H2D >= pageable H2D at sizes >= 64 MiB (best of samples);
#   3. pinned-wc behaves write-combined: CPU read << CPU write;
#   4. no H2D/D2H value above the PCIe link's theoretical rate (+5 %).
# Usage: scripts/gpu-smoke.sh [OUT.json] [extra bwscope flags...]
# Needs jq. Exit 0 all checks pass, 1 a check failed, 2 no usable GPU.
set -euo pipefail

BW=${BWSCOPE:-${CARGO_TARGET_DIR:-$(dirname "$0")/../target}/release/bwscope}
OUT=${1:-gpu-smoke.json}
shift || true
command -v jq >/dev/null || { echo "gpu-smoke: needs jq"; exit 2; }

"$BW" transfer --backend cuda --json "$OUT" "$@"

status=$(jq -r '.records[0].status' "$OUT")
if [ "$status" = skipped ]; then
    echo "gpu-smoke: no CUDA device: $(jq -r '.records[0].reason' "$OUT")"; exit 2
fi
name=$(jq -r '.options.device.name' "$OUT")
case "$name" in *stand-in*) echo "gpu-smoke: '$name' is the test stand-in, not a GPU"; exit 2 ;; esac

fail=0
check() { # description, jq expression yielding true/false
    if [ "$(jq -r "$2" "$OUT")" = true ]; then echo "PASS  $1"; else echo "FAIL  $1"; fail=1; fi
}
check "no error records" '[.records[] | select(.status == "error")] | length == 0'
check "every measured case verified" '[.records[] | select(.status == "ok" and (.extra.direction | test("^cpu-") | not)) | .extra.verified] | all'
check "pinned H2D >= pageable H2D at >= 64 MiB" '
  [.records[] | select(.extra.direction == "h2d" and .size_bytes >= 67108864)] as $r
  | [$r[] | select(.extra.host_kind == "pinned")] as $p
  | ($p | length) > 0 and ([ $p[] | . as $x | ($r[] | select(.extra.host_kind == "pageable" and .size_bytes == $x.size_bytes) | .gbps.best) <= $x.gbps.best ] | all)'
check "pinned-wc: CPU read << CPU write (behaves_wc)" '[.records[] | select(.extra.host_kind == "pinned-wc" and .extra.direction == "cpu-read") | .extra.behaves_wc] == [true]'
check "pinned: CPU reads cached (not WC)" '[.records[] | select(.extra.host_kind == "pinned" and .extra.direction == "cpu-read") | .extra.behaves_wc] == [false]'
if [ "$(jq -r '.options.pci.theoretical_gbps // "null"' "$OUT")" = null ]; then
    echo "SKIP  H2D/D2H below the link rate (no PCIe link in sysfs)"
else check "H2D/D2H below the link rate" '
  [.records[] | select((.extra.direction == "h2d" or .extra.direction == "d2h") and .extra.link_theoretical_gbps != null)
   | .gbps.best <= .extra.link_theoretical_gbps * 1.05] | all'
fi
echo
jq -r '"device: \(.options.device.name) pci \(.options.device.pci_bus_id) link \(.options.pci.link_speed_gts) GT/s x\(.options.pci.link_width) = \(.options.pci.theoretical_gbps) GB/s"' "$OUT"
jq -r '.records[] | select(.status == "ok" and .size_bytes == 268435456 and .gbps != null)
       | "  \(.extra.host_kind // "-")\t\(.extra.direction)\t\(.gbps.best * 100 | round / 100) GB/s"' "$OUT"
echo "reference result kept in $OUT"
exit $fail
