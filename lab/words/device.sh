#!/usr/bin/env bash
# One device call for the pipelined family's word gather (lab/words/NOTES.md):
# the sm_120 module of this tree (DISABLE_MMA_V3=1, mma.sync) beside the
# sm_120 module of the commit before (lab/words/base) and the sm_90 module,
# in one run. Correctness of every pipelined configuration, per cache and as
# the whole call; then CUDA-graph timing of every pipelined configuration
# (new and old) and of the sm_90 module's selection, per cache; the whole
# call of the new module's selection. Full results under $OUT; a short table
# last. From the repository root: bash lab/words/device.sh
set -u
OUT=${OUT:-/tmp/words}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$OUT/gpu.txt"
PP=pp_h16_t64_k16_w8_s1,pp_h16_t64_k1_w8_s1,pp_h16_t64_k2_w8_s1,pp_h16_t64_k32_w8_s1,pp_h16_t64_k8_w8_s1,pp_h64_t32_k16_w8_s1,pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k32_w8_s1,pp_h64_t32_k8_w8_s1
PER=(--heads 64,16 --batches 1,16,64,128 --topks 512,2048 --no-whole-call --peers none)
NEW=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-new python3 kernels/sm120/harness.py)
OLD=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-old python3 lab/words/base/harness.py)
S90=(env TRITON_CACHE_DIR=/tmp/c-90 python3 kernels/sm90/harness.py --variants selected)
# phase 1, in parallel: correctness (new module, every pipelined config and
# its entry points) and warm compiles of what phase 2 times
( "${NEW[@]}" --variants "$PP" --no-timing --peers none --out "$OUT/new-check.json" >"$OUT/new-check.log" 2>&1; echo "new-check exit $?" >>"$OUT/exits.txt" ) &
( "${NEW[@]}" --variants selected --no-timing --peers none --out "$OUT/new-check-sel.json" >"$OUT/new-check-sel.log" 2>&1; echo "new-check-sel exit $?" >>"$OUT/exits.txt" ) &
( "${NEW[@]}" --variants "$PP" --warm-only --no-check "${PER[@]}" >"$OUT/warm-new.log" 2>&1; echo "warm-new exit $?" >>"$OUT/exits.txt" ) &
( "${OLD[@]}" --variants "$PP" --warm-only --no-check "${PER[@]}" >"$OUT/warm-old.log" 2>&1; echo "warm-old exit $?" >>"$OUT/exits.txt" ) &
( "${S90[@]}" --warm-only --no-check "${PER[@]}" >"$OUT/warm-90.log" 2>&1; echo "warm-90 exit $?" >>"$OUT/exits.txt" ) &
( "${NEW[@]}" --variants selected --warm-only --no-check --batches '' --whole-heads 64,16 --peers none >"$OUT/warm-new-whole.log" 2>&1; echo "warm-new-whole exit $?" >>"$OUT/exits.txt" ) &
wait
log "phase 1 done"; cat "$OUT/exits.txt"
# phase 2, one process at a time
timeout 150 "${S90[@]}" --no-check "${PER[@]}" --out "$OUT/t90.json" >"$OUT/t90.log" 2>&1; log "t90 exit $?"
timeout 150 "${NEW[@]}" --variants "$PP" --no-check "${PER[@]}" --out "$OUT/tnew.json" >"$OUT/tnew.log" 2>&1; log "tnew exit $?"
timeout 150 "${OLD[@]}" --variants "$PP" --no-check "${PER[@]}" --out "$OUT/told.json" >"$OUT/told.log" 2>&1; log "told exit $?"
timeout 90 "${NEW[@]}" --variants selected --no-check --batches '' --whole-heads 64,16 --peers none --out "$OUT/tnew-whole.json" >"$OUT/tnew-whole.log" 2>&1; log "tnew-whole exit $?"
python3 lab/words/summary.py "$OUT" | tee "$OUT/summary.txt"
log total
