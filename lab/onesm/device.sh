#!/usr/bin/env bash
# lab/onesm: the sm_120 module as shipped from this commit on (its
# pipelined family launched at maxnreg 255, one program an SM as on an
# sm_120 or sm_89 card), every candidate configuration per cache at H 16,
# 32 and 64 and as the whole call at H 16 and 64 (window 128 + extra 512 or
# 2048), batches 1, 16, 64, 128, CUDA-graph replay, DISABLE_MMA_V3=1; the
# checks of every configuration first. For the sm_120 and sm_89 tables
# (gpu/selection_inputs.py). From the repository root:
#   bash lab/onesm/device.sh      # $OUT/onesm.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/onesm}
W=/tmp/onesm-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
V=mma_h16_t16_k32_w4_s1,mma_h16_t16_k32_w8_s1,mma_h16_t32_k32_w4_s1
V=$V,$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"(pp_[a-z0-9_]+)\": Config', open('kernels/sm120/sparse_mla_mma.py').read())))))")
echo "sm120: $V" | tee -a "$W/steps.txt"
P=(--heads 16,32,64 --batches 1,16,64,128 --topks 512,2048 --peers none)
WC=(--whole-heads 16,64 --whole-batches 1,16,64,128 --extra-topks 512,2048)
S=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-onesm python3 kernels/sm120/harness.py)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg check "${S[@]}" --variants "$V" --no-timing --out "$W/check-sm120.json"
part() { echo "$1" | tr , '\n' | awk -v k="$2" -v n="$3" 'NR % n == k' | paste -sd, -; }
for k in 0 1 2 3 4 5; do
  bg warm-$k "${S[@]}" --variants "$(part "$V" $k 6)" --warm-only --no-check "${P[@]}" "${WC[@]}"
done
wait
log "phase 1 done"; cat "$W/exits.txt"
timeout 150 "${S[@]}" --variants "$V" --no-check "${P[@]}" --no-whole-call --out "$W/time-sm120.json" >"$W/time-sm120.log" 2>&1; log "per cache exit $?"
timeout 200 "${S[@]}" --variants "$V" --no-check --heads 16 --batches 1 --topks 512 --peers none "${WC[@]}" --out "$W/whole-sm120.json" >"$W/whole-sm120.log" 2>&1; log "whole call exit $?"
python3 lab/onesm/summary.py "$W" | tee "$W/summary.txt"
tar -czf "$OUT/onesm.tar.gz" -C "$W" .
log total
