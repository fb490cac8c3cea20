#!/usr/bin/env bash
# lab/sweep120: the sm_120 module's pipelined configurations (pp_*) timed
# again for its tables (gpu/selection_inputs.py), on the H200 with
# DISABLE_MMA_V3=1: per cache at H 16, 32 and 64 and as the whole call at
# H 16 and 64, batches 1, 16, 64 and 128 (the table's buckets), topk
# (extra cache) 512 and 2048, CUDA-graph replay; their checks first. The
# tables' pp rows are lab/onesm's (fifth session) and lab/qreg16's (eighth);
# since then the tiles signal their combine (twentieth and twenty-first
# sessions) and the bf16 combine runs at 128 registers (twenty-first). The
# tl.dot configurations did not change and keep their rows. From the
# repository root:
#   OUT=$OUT bash lab/sweep120/sweep.sh      # $OUT/sweep.tar.gz
set -u
source lab/prologue.sh sweep120
export DISABLE_MMA_V3=1
V=$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"(pp_h[0-9]+_[a-z0-9_]+)\": Config', open('kernels/sm120/sparse_mla_mma.py').read())))))")
echo "sm120: $V" | tee -a "$W/steps.txt"
P=(--heads 16,32,64 --batches 1,16,64,128 --topks 512,2048 --peers none)
WC=(--whole-heads 16,64 --whole-batches 1,16,64,128 --extra-topks 512,2048)
S=(env TRITON_CACHE_DIR=/tmp/c-sweep120 python3 kernels/sm120/harness.py)
bg check timeout 150 "${S[@]}" --variants "$V" --no-timing --peers none --out "$W/check-sm120.json"
part() { echo "$1" | tr , '\n' | awk -v k="$2" -v n="$3" 'NR % n == k' | paste -sd, -; }
for k in 0 1 2 3 4; do
  bg warm-$k timeout 150 "${S[@]}" --variants "$(part "$V" $k 5)" --warm-only --no-check "${P[@]}" "${WC[@]}"
done
wait
log "phase 1 done"; cat "$W/exits.txt"; tail -1 "$W/check.log"
timeout 100 "${S[@]}" --variants "$V" --no-check "${P[@]}" --no-whole-call --out "$W/time-sm120.json" >"$W/time-sm120.log" 2>&1
log "per cache exit $?"
timeout 100 "${S[@]}" --variants "$V" --no-check --heads 16 --batches 1 --topks 512 "${WC[@]}" --peers none --out "$W/whole-sm120.json" >"$W/whole-sm120.log" 2>&1
log "whole call exit $?"
tar -czf "$OUT/sweep.tar.gz" -C "$W" .
log total
