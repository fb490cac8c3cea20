#!/usr/bin/env bash
# lab/sweep16: the sm_90 module's 16-head candidates timed again for its
# tables (gpu/selection_inputs.py): every ws_h16_* configuration and every
# mma_h16_* one (the batch-1 picks), per cache and as the whole call at
# H 16, batches 1, 8, 16, 32, 64 and 128, topk (extra cache) 512 and 2048,
# CUDA-graph replay; the checks of every ws_h16_* configuration first. The
# tables' 16-head rows at topk 2048 came from lab/wst's sweep (ninth
# session): lab/dqp's and lab/vpf's sweeps stopped at their time limits
# before them, and the narrow kernel and its combine changed since. From
# the repository root:
#   OUT=$OUT bash lab/sweep16/sweep.sh      # $OUT/sweep.tar.gz
set -u
source lab/prologue.sh sweep16
V=$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"((?:ws|mma)_h16_[a-z0-9_]+)\": Config', open('kernels/sm90/sparse_mla_mma.py').read())))))")
WS=$(echo "$V" | tr , '\n' | grep '^ws_' | paste -sd, -)
echo "sm90: $V" | tee -a "$W/steps.txt"
P=(--heads 16 --batches 1,8,16,32,64,128 --topks 512,2048 --peers none)
WC=(--whole-heads 16 --whole-batches 1,8,16,32,64,128 --extra-topks 512,2048)
S=(env TRITON_CACHE_DIR=/tmp/c-sweep16 python3 kernels/sm90/harness.py)
bg check timeout 200 "${S[@]}" --variants "$WS" --no-timing --peers none --out "$W/check-sm90.json"
part() { echo "$1" | tr , '\n' | awk -v k="$2" -v n="$3" 'NR % n == k' | paste -sd, -; }
for k in 0 1 2 3 4 5; do
  bg warm-$k timeout 200 "${S[@]}" --variants "$(part "$V" $k 6)" --warm-only --no-check "${P[@]}" "${WC[@]}"
done
wait
log "phase 1 done"; cat "$W/exits.txt"; tail -1 "$W/check.log"
timeout 200 "${S[@]}" --variants "$V" --no-check "${P[@]}" --no-whole-call --out "$W/time-sm90.json" >"$W/time-sm90.log" 2>&1
log "per cache exit $?"
timeout 230 "${S[@]}" --variants "$V" --no-check --heads 16 --batches 1 --topks 512 "${WC[@]}" --peers none --out "$W/whole-sm90.json" >"$W/whole-sm90.log" 2>&1
log "whole call exit $?"
tar -czf "$OUT/sweep.tar.gz" -C "$W" .
log total
