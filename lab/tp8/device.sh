#!/usr/bin/env bash
# lab/tp8: the shipped modules at 8 heads a rank (DeepSeek-V4-Flash's 64
# heads under tensor parallelism 8), beside 16, on the lent GPU. Each
# module's harness with --variants selected (its own entry points and
# tables, nothing else): every correctness case (the 8-head ones included),
# then per cache (topk 512, 2048) and the whole call (window 128 + extra 512,
# 2048) at B 1, 16, 64, 128 under CUDA-graph replay, the timed shapes
# checked too. The sm_120 module with DISABLE_MMA_V3=1 (mma.sync, as on an
# sm_120 card). From the repository root, nothing to carry:
#   OUT=$OUT bash lab/tp8/device.sh     # $OUT/*.json, logs.tgz, summary.txt
# CHECK_ONLY=1 runs the correctness cases alone.
set -u
cd "$(dirname "$0")/../.."
source lab/prologue.sh tp8
cp "$W/gpu.txt" "$OUT/"
H90=(env TRITON_CACHE_DIR=/tmp/c-tp8-90 python3 kernels/sm90/harness.py --variants selected --peers none)
H120=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-tp8-120 python3 kernels/sm120/harness.py --variants selected --peers none)
SHAPES=(--heads 8,16 --batches 1,16,64,128 --topks 512,2048 --whole-heads 8,16
  --whole-batches 1,16,64,128 --extra-topks 512,2048)
# Correctness and compilation in parallel (one Triton cache a module).
bg sm90-check "${H90[@]}" --no-timing --out "$OUT/sm90-check.json"
bg sm120-check "${H120[@]}" --no-timing --out "$OUT/sm120-check.json"
wait
if [ -n "${CHECK_ONLY:-}" ]; then
  python3 lab/tp8/summary.py "$OUT" | tee "$OUT/summary.txt"
  tar -C "$W" -czf "$OUT/logs.tgz" .
  exit 0
fi
bg sm90-warm "${H90[@]}" --warm-only --no-check "${SHAPES[@]}"
bg sm120-warm "${H120[@]}" --warm-only --no-check "${SHAPES[@]}"
wait
# Timings one process at a time.
timeout 200 "${H90[@]}" --no-check "${SHAPES[@]}" --out "$OUT/sm90-time.json" >"$W/sm90-time.log" 2>&1
log "sm90 timing exit $?"
timeout 200 "${H120[@]}" --no-check "${SHAPES[@]}" --out "$OUT/sm120-time.json" >"$W/sm120-time.log" 2>&1
log "sm120 timing exit $?"
python3 lab/tp8/summary.py "$OUT" | tee "$OUT/summary.txt"
# The run tool brings back at most 8 files: the logs as one.
tar -C "$W" -czf "$OUT/logs.tgz" .
