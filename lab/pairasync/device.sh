#!/usr/bin/env bash
# lab/pairasync: lab/pair's head pairs (wsp_*) with each remote half sent by
# st.async (complete_tx on the other program's ready barrier), against the
# shipped sm_90 module's configurations and FlashMLA, at H 128, per cache
# and as the whole call, CUDA-graph replay; the harness's correctness cases
# first (the 64-head ones, which a pair refuses, are recorded as declined).
# After `python3 lab/pair/prepare.py && python3 lab/pairasync/prepare.py`
# and `cp -r ../shared/peers/flashmla .peers-flashmla`, from the repository
# root, carrying lab/pairasync/pair and .peers-flashmla:
#   bash lab/pairasync/device.sh     # $OUT/pairasync.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/pairasync}
W=/tmp/pairasync-work
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
H=(env TRITON_CACHE_DIR=/tmp/c-pairasync python3 lab/pairasync/pair/harness.py)
T=(--heads 128 --batches 1,16,64,128 --topks 512,2048 --whole-heads 128 --whole-batches 1,16,64,128)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg check timeout 150 "${H[@]}" --variants "$P" --no-timing --peers none --out "$W/check.json"
bg warm-p timeout 200 "${H[@]}" --variants "$P" --warm-only --no-check --peers none "${T[@]}"
bg warm-b timeout 200 "${H[@]}" --variants "$B" --warm-only --no-check --peers none "${T[@]}"
wait
log "phase 1 done"; cat "$W/exits.txt"; tail -2 "$W/flashmla-build.txt"
export PYTHONPATH=$PWD/.peers-flashmla/src${PYTHONPATH:+:$PYTHONPATH}
timeout 300 "${H[@]}" --variants "$P,$B" --no-check --peers flashmla "${T[@]}" --out "$W/time.json" >"$W/time.log" 2>&1
log "time exit $?"
python3 lab/pair/summary.py "$W" | tee "$W/summary.txt"
tar -czf "$OUT/pairasync.tar.gz" -C "$W" .
log total
