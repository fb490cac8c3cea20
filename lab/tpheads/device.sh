#!/usr/bin/env bash
# lab/tpheads: what the heads guard is worth on the lent GPU. SGLang hands the
# sm_120 route a rank's query heads padded to 64 under tensor parallelism;
# patched, with the gate set on a 12.x GPU, the rank's own (16 at TP 4, 8 at
# TP 8). The shipped sm_120 module (DISABLE_MMA_V3=1: mma.sync, as on an
# sm_120 card) through its own entry points and tables: every correctness
# case (the padded and the 8-head ones included), then the whole call as
# SGLang makes it (window 128 + extra 512 or 2048) at 64, 16 and 8 heads,
# B 1, 16, 64, 128, under CUDA-graph replay. From the repository root:
#   OUT=$OUT bash lab/tpheads/device.sh     # $OUT/*.json, logs.tgz, summary.txt
# TIME_ONLY=1 skips the correctness cases (the timed shapes are still run
# through the module's own entry points).
set -u
cd "$(dirname "$0")/../.."
source lab/prologue.sh tpheads
cp "$W/gpu.txt" "$OUT/"
H120=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-tpheads-120 python3 kernels/sm120/harness.py --variants selected --peers none)
SHAPES=(--heads 64 --batches 1 --topks 512 --whole-heads 64,16,8
  --whole-batches 1,16,64,128 --extra-topks 512,2048)
if [ -z "${TIME_ONLY:-}" ]; then
  bg sm120-check "${H120[@]}" --no-timing --out "$OUT/sm120-check.json"
  wait
fi
"${H120[@]}" --warm-only --no-check "${SHAPES[@]}" >"$W/sm120-warm.log" 2>&1
log "sm120 warm exit $?"
timeout 240 "${H120[@]}" --no-check "${SHAPES[@]}" --out "$OUT/sm120-time.json" >"$W/sm120-time.log" 2>&1
log "sm120 timing exit $?"
python3 lab/tpheads/summary.py "$OUT" | tee "$OUT/summary.txt"
# The run tool brings back at most 8 files: the logs as one.
tar -C "$W" -czf "$OUT/logs.tgz" .
