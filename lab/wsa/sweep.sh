#!/usr/bin/env bash
# lab/wsa sweep: the sm_90 module once its warp-specialised variants without
# a cluster merge run the role-split consumers (_ws_split_kernel), for its
# tables (gpu/selection_inputs.py): every ws_* configuration (the changed
# kernels) beside the configurations its tables chose besides them (wsc_*,
# the B 1 tl.dot ones), per cache at H 64, 32 and 16 and as the whole call
# at H 16, 64 and 128 beside FlashMLA, batches 1, 8, 16, 32, 64, 128,
# CUDA-graph replay; the checks of every ws_* configuration first. After
# `cp -r ../shared/peers/flashmla .peers-flashmla`, from the repository
# root, carrying .peers-flashmla:
#   bash lab/wsa/sweep.sh      # $OUT/sweep.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/wsa-sweep}
W=/tmp/wsa-sweep-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
( b=$W/flashmla-build; mkdir -p "$b"; OUT=$b MAX_JOBS=8 bash .peers-flashmla/build.sh >"$W/flashmla-build.txt" 2>&1 ) &
WS=$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"(ws_[a-z0-9_]+)\": Config', open('kernels/sm90/sparse_mla_mma.py').read())))))")
V=$WS,wsc_h64_t64_k2_w8_s2,wsc_h64_t64_k4_w8_s2,wsc_h64_t64_k8_w8_s2,mma_h16_t16_k32_w8_s1,mma_h16_t64_k32_w8_s1
echo "sm90: $V" | tee -a "$W/steps.txt"
P=(--heads 64,32,16 --batches 1,8,16,32,64,128 --topks 512,2048 --peers none)
WC=(--whole-heads 16,64,128 --whole-batches 1,8,16,32,64,128 --extra-topks 512,2048)
S=(env TRITON_CACHE_DIR=/tmp/c-sweep python3 kernels/sm90/harness.py)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg check timeout 200 "${S[@]}" --variants "$WS" --no-timing --peers none --out "$W/check-sm90.json"
part() { echo "$1" | tr , '\n' | awk -v k="$2" -v n="$3" 'NR % n == k' | paste -sd, -; }
for k in 0 1 2 3 4 5; do
  bg warm-$k timeout 200 "${S[@]}" --variants "$(part "$V" $k 6)" --warm-only --no-check "${P[@]}" "${WC[@]}"
done
wait
log "phase 1 done"; cat "$W/exits.txt"; tail -1 "$W/check.log"
export PYTHONPATH=$PWD/.peers-flashmla/src${PYTHONPATH:+:$PYTHONPATH}
timeout 170 "${S[@]}" --variants "$V" --no-check "${P[@]}" --no-whole-call --out "$W/time-sm90.json" >"$W/time-sm90.log" 2>&1; log "per cache exit $?"
timeout 230 "${S[@]}" --variants "$V" --no-check --heads 16 --batches 1 --topks 512 --peers flashmla "${WC[@]}" --out "$W/whole-sm90.json" >"$W/whole-sm90.log" 2>&1; log "whole call exit $?"
tar -czf "$OUT/sweep.tar.gz" -C "$W" .
log total
