#!/usr/bin/env bash
# lab/pair: head pairs (wsp_*: two 64-head programs of a cluster share each
# tile, each gathering and dequantising half of it into both K rings)
# against the shipped sm_90 module's configurations and FlashMLA, at H 128,
# per cache and as the whole call, CUDA-graph replay; the harness's
# correctness cases first (they stop at the first 64-head case, which a
# pair refuses: NOTES.md). After `python3 lab/pair/prepare.py` and
# `cp -r ../shared/peers/flashmla .peers-flashmla`, from the repository
# root, carrying lab/pair/pair and .peers-flashmla:
#   bash lab/pair/device.sh     # $OUT/pair.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/pair}
W=/tmp/pair-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
( b=$W/flashmla-build; mkdir -p "$b"; OUT=$b MAX_JOBS=8 bash .peers-flashmla/build.sh >"$W/flashmla-build.txt" 2>&1 ) &
BUILD=$!
P=wsp_h64_t64_k1_w8_s2,wsp_h64_t64_k2_w8_s2,wsp_h64_t64_k4_w8_s2,wsp_h64_t64_k8_w8_s2
B=ws_h64_t64_k1_w8_s2,ws_h64_t64_k2_w8_s2,ws_h64_t64_k4_w8_s2,ws_h64_t64_k8_w8_s2,wsc_h64_t64_k2_w8_s2
H=(env TRITON_CACHE_DIR=/tmp/c-pair python3 lab/pair/pair/harness.py)
T=(--heads 128 --batches 1,16,64,128 --topks 512,2048 --whole-heads 128 --whole-batches 1,16,64,128)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg check "${H[@]}" --variants "$P" --no-timing --peers none --out "$W/check.json"
bg warm-p "${H[@]}" --variants "$P" --warm-only --no-check --peers none "${T[@]}"
bg warm-b "${H[@]}" --variants "$B" --warm-only --no-check --peers none "${T[@]}"
wait
log "phase 1 done"; cat "$W/exits.txt"; tail -2 "$W/flashmla-build.txt"
export PYTHONPATH=$PWD/.peers-flashmla/src${PYTHONPATH:+:$PYTHONPATH}
timeout 300 "${H[@]}" --variants "$P,$B" --no-check --peers flashmla "${T[@]}" --out "$W/time.json" >"$W/time.log" 2>&1
log "time exit $?"
python3 lab/pair/summary.py "$W" | tee "$W/summary.txt"
tar -czf "$OUT/pair.tar.gz" -C "$W" .
log total
