#!/usr/bin/env bash
# lab/heads: the shipped modules' candidate configurations per cache at
# H 64, 32 and 16 (batches 1, 16, 64, 128; topk 512 and 2048), CUDA-graph
# replay, in one process per module, for the selections keyed by heads
# (issue 26, item 3); the sm_120 module with DISABLE_MMA_V3=1. Correctness
# of every timed configuration first. From the repository root:
#   bash lab/heads/device.sh        # $OUT/heads.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/heads}
W=/tmp/heads-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
# Every configuration a selection picks at some shape today, the 16-head
# tl.dot kernels that mask no rows, and the whole pipelined family.
V90=mma_h16_t16_k16_w8_s1,mma_h16_t16_k32_w8_s1,mma_h16_t64_k16_w8_s1,mma_h16_t64_k32_w8_s1
V90=$V90,$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"(wsc?_h[a-z0-9_]+)\": Config', open('kernels/sm90/sparse_mla_mma.py').read())))))")
V120=mma_h16_t16_k32_w4_s1,mma_h16_t16_k32_w8_s1,mma_h16_t32_k32_w4_s1
V120=$V120,$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"(pp_[a-z0-9_]+)\": Config', open('kernels/sm120/sparse_mla_mma.py').read())))))")
echo "sm90: $V90" | tee -a "$W/steps.txt"
echo "sm120: $V120" | tee -a "$W/steps.txt"
B=(--heads 64,32,16 --batches 1,16,64,128 --topks 512,2048 --no-whole-call --peers none)
S90=(env TRITON_CACHE_DIR=/tmp/c-90 python3 kernels/sm90/harness.py)
S120=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-120 python3 kernels/sm120/harness.py)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg check-90 "${S90[@]}" --variants "$V90" --no-timing --peers none --out "$W/check-sm90.json"
bg check-120 "${S120[@]}" --variants "$V120" --no-timing --peers none --out "$W/check-sm120.json"
# Triton's cache filled by three processes a module, each compiling a third
# of the configurations.
third() { echo "$1" | tr , '\n' | awk -v k="$2" 'NR % 3 == k' | paste -sd, -; }
for k in 0 1 2; do
  bg warm-90-$k "${S90[@]}" --variants "$(third "$V90" $k)" --warm-only --no-check "${B[@]}"
  bg warm-120-$k "${S120[@]}" --variants "$(third "$V120" $k)" --warm-only --no-check "${B[@]}"
done
wait
log "phase 1 done"; cat "$W/exits.txt"
timeout 200 "${S90[@]}" --variants "$V90" --no-check "${B[@]}" --out "$W/time-sm90.json" >"$W/time-sm90.log" 2>&1; log "time-sm90 exit $?"
timeout 200 "${S120[@]}" --variants "$V120" --no-check "${B[@]}" --out "$W/time-sm120.json" >"$W/time-sm120.log" 2>&1; log "time-sm120 exit $?"
python3 lab/heads/summary.py "$W" | tee "$W/summary.txt"
tar -czf "$OUT/heads.tar.gz" -C "$W" .
log total
