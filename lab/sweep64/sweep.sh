#!/usr/bin/env bash
# lab/sweep64: the sm_90 module's candidates above 16 heads timed again at
# small batches for its tables (gpu/selection_inputs.py): every ws_*
# configuration beside the wsc_* ones and the batch-1 tl.dot ones (lab/wsa's
# set), per cache at H 32 and 64 and as the whole call at H 64 and 128
# beside FlashMLA, batches 1, 8, 16 and 32, topk (extra cache) 512 and
# 2048, CUDA-graph replay; the checks of every ws_* configuration first.
# Those tiers' rows are lab/vpf's (eighteenth session), from before the
# narrow kernel's combine signal and the bf16 combine at 128 registers,
# which moved split calls (lab/creg: 0.93-0.99x at 8 and 32 splits, 2-split
# calls unchanged); from B 64 the tables pick 1 and 2 splits and keep
# lab/vpf's rows. After `cp -r ../shared/peers/flashmla .peers-flashmla`,
# from the repository root, carrying .peers-flashmla:
#   OUT=$OUT bash lab/sweep64/sweep.sh      # $OUT/sweep.tar.gz
set -u
source lab/prologue.sh sweep64
( b=$W/flashmla-build; mkdir -p "$b"; OUT=$b MAX_JOBS=8 bash .peers-flashmla/build.sh >"$W/flashmla-build.txt" 2>&1 ) &
WS=$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"(ws_[a-z0-9_]+)\": Config', open('kernels/sm90/sparse_mla_mma.py').read())))))")
V=$WS,wsc_h64_t64_k2_w8_s2,wsc_h64_t64_k4_w8_s2,wsc_h64_t64_k8_w8_s2,mma_h16_t16_k32_w8_s1,mma_h16_t64_k32_w8_s1
echo "sm90: $V" | tee -a "$W/steps.txt"
P=(--heads 32,64 --batches 1,8,16,32 --topks 512,2048 --peers none)
WC=(--whole-heads 64,128 --whole-batches 1,8,16,32 --extra-topks 512,2048)
S=(env TRITON_CACHE_DIR=/tmp/c-sweep64 python3 kernels/sm90/harness.py)
bg check timeout 200 "${S[@]}" --variants "$WS" --no-timing --peers none --out "$W/check-sm90.json"
part() { echo "$1" | tr , '\n' | awk -v k="$2" -v n="$3" 'NR % n == k' | paste -sd, -; }
for k in 0 1 2 3 4 5; do
  bg warm-$k timeout 200 "${S[@]}" --variants "$(part "$V" $k 6)" --warm-only --no-check "${P[@]}" "${WC[@]}"
done
wait
log "phase 1 done"; cat "$W/exits.txt"; tail -1 "$W/check.log"; tail -2 "$W/flashmla-build.txt"
export PYTHONPATH=$PWD/.peers-flashmla/src${PYTHONPATH:+:$PYTHONPATH}
timeout 150 "${S[@]}" --variants "$V" --no-check "${P[@]}" --no-whole-call --out "$W/time-sm90.json" >"$W/time-sm90.log" 2>&1
log "per cache exit $?"
timeout 150 "${S[@]}" --variants "$V" --no-check --heads 16 --batches 1 --topks 512 --peers flashmla "${WC[@]}" --out "$W/whole-sm90.json" >"$W/whole-sm90.log" 2>&1
log "whole call exit $?"
tar -czf "$OUT/sweep.tar.gz" -C "$W" --exclude=flashmla-build .
log total
