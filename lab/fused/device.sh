#!/usr/bin/env bash
# Helper K2's device call for the whole-call prototypes (lab/fused/): checks,
# then times, every candidate (device_check.py, two processes so that a
# kernel fault in the checks cannot take the timings with it), then prints
# the failures and the short table last. JSON reports, table and logs under $OUT.
#   bash lab/fused/device.sh
# CHECK_LIMIT, TIME_LIMIT: seconds for each step; TIME_BUDGET: seconds after
# which the timing step starts no new shape.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/k2-fused}
mkdir -p "$OUT"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  echo "cpus $(nproc)"
} 2>&1 | tee "$OUT/gpu.txt"
timeout "${CHECK_LIMIT:-100}" python3 lab/fused/device_check.py --out "$OUT" --name check \
  --skip time ${CHECK_ARGS:-} > "$OUT/check.log" 2>&1
echo "check exit $?"
timeout "${TIME_LIMIT:-120}" python3 lab/fused/device_check.py --out "$OUT" --name time \
  --skip compile,check --budget "${TIME_BUDGET:-105}" ${TIME_ARGS:-} > "$OUT/time.log" 2>&1
echo "time exit $?"
grep -hE "FAIL|compil|graph replay|budget|Error|Traceback|check:|exit" "$OUT/check.log" "$OUT/time.log" | head -50
python3 lab/fused/device_check.py --table "$OUT/check.json" "$OUT/time.json" | tee "$OUT/table.txt"
