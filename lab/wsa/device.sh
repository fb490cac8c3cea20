#!/usr/bin/env bash
# lab/wsa: FlashMLA's split of the consumer warps (wsa_*: a score group that
# computes each whole score tile, its softmax and the left half of P.V, and
# a value group that computes the right half from P in shared memory)
# against the shipped sm_90 module's configurations and FlashMLA, at H 64
# and 128, per cache and as the whole call, CUDA-graph replay; the
# harness's correctness cases first. After `python3 lab/wsa/prepare.py` and
# `cp -r ../shared/peers/flashmla .peers-flashmla`, from the repository
# root, carrying lab/wsa/wsa and .peers-flashmla:
#   bash lab/wsa/device.sh     # $OUT/wsa.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/wsa}
W=/tmp/wsa-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
( b=$W/flashmla-build; mkdir -p "$b"; OUT=$b MAX_JOBS=8 bash .peers-flashmla/build.sh >"$W/flashmla-build.txt" 2>&1 ) &
P=wsa_h64_t64_k1_w4_s2,wsa_h64_t64_k2_w4_s2,wsa_h64_t64_k4_w4_s2,wsa_h64_t64_k8_w4_s2
B=ws_h64_t64_k1_w8_s2,ws_h64_t64_k2_w8_s2,ws_h64_t64_k4_w8_s2,ws_h64_t64_k8_w8_s2,wsc_h64_t64_k2_w8_s2
H=(env TRITON_CACHE_DIR=/tmp/c-wsa python3 lab/wsa/wsa/harness.py)
T=(--heads 64,128 --batches 1,16,64,128 --topks 512,2048 --whole-heads 64,128 --whole-batches 16,64,128)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg check timeout 200 "${H[@]}" --variants "$P" --no-timing --peers none --out "$W/check.json"
bg warm-p timeout 200 "${H[@]}" --variants "$P" --warm-only --no-check --peers none "${T[@]}"
bg warm-b timeout 200 "${H[@]}" --variants "$B" --warm-only --no-check --peers none "${T[@]}"
wait
log "phase 1 done"; cat "$W/exits.txt"; tail -2 "$W/flashmla-build.txt"
tail -3 "$W/check.log"
if grep -q "check exit 124" "$W/exits.txt"; then
  log "the check hung: no timing"; tar -czf "$OUT/wsa.tar.gz" -C "$W" .; exit 1
fi
export PYTHONPATH=$PWD/.peers-flashmla/src${PYTHONPATH:+:$PYTHONPATH}
timeout 330 "${H[@]}" --variants "$P,$B" --no-check --peers flashmla "${T[@]}" --out "$W/time.json" >"$W/time.log" 2>&1
log "time exit $?"
python3 lab/pair/summary.py "$W" wsa_ | tee "$W/summary.txt"
tar -czf "$OUT/wsa.tar.gz" -C "$W" .
log total
