#!/usr/bin/env bash
# lab/qreg16's sweep: the sm_120 module once its 16-head tile keeps six of
# Q's column groups in registers, each 16-head pipelined configuration (the
# kernel that changed) per cache at 16 and 32 heads (batches 1, 16, 64, 128;
# topk 512 and 2048) and as the whole call at 16 heads (window 128 + extra
# 512 or 2048), CUDA-graph replay, DISABLE_MMA_V3=1, their checks first.
# For the sm_120 and sm_89 tables (gpu/selection_inputs.py), beside
# lab/onesm's rows of the configurations that did not change. From the
# repository root:
#   bash lab/qreg16/sweep.sh      # $OUT/sweep.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/qreg16}
W=/tmp/qreg16-sweep
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
V=$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"(pp_h16_[a-z0-9_]+)\": Config', open('kernels/sm120/sparse_mla_mma.py').read())))))")
echo "sm120: $V" | tee -a "$W/steps.txt"
P=(--heads 16,32 --batches 1,16,64,128 --topks 512,2048 --peers none)
WC=(--whole-heads 16 --whole-batches 1,16,64,128 --extra-topks 512,2048)
S=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-qreg16 python3 kernels/sm120/harness.py)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg check "${S[@]}" --variants "$V" --no-timing --out "$W/check-sm120.json"
part() { echo "$1" | tr , '\n' | awk -v k="$2" -v n="$3" 'NR % n == k' | paste -sd, -; }
for k in 0 1 2 3 4; do
  bg warm-$k "${S[@]}" --variants "$(part "$V" $k 5)" --warm-only --no-check "${P[@]}" "${WC[@]}"
done
wait
log "phase 1 done"; cat "$W/exits.txt"
timeout 90 "${S[@]}" --variants "$V" --no-check "${P[@]}" --no-whole-call --out "$W/time-sm120.json" >"$W/time-sm120.log" 2>&1; log "per cache exit $?"
timeout 70 "${S[@]}" --variants "$V" --no-check --heads 16 --batches 1 --topks 512 --peers none "${WC[@]}" --out "$W/whole-sm120.json" >"$W/whole-sm120.log" 2>&1; log "whole call exit $?"
python3 lab/qreg16/summary.py "$W" | tee "$W/summary.txt"
tar -czf "$OUT/sweep.tar.gz" -C "$W" .
log total
