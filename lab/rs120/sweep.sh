#!/usr/bin/env bash
# lab/rs120/sweep.sh: the shipped sm_120 module's 64-head configurations,
# the role-split tile (pp_h64_t16_*_w16_s3, in the module since the
# thirty-fourth session but in no table) beside the one-partition tile
# (pp_h64_t32_*_w8_s1) its tables choose today, on the H200 with
# DISABLE_MMA_V3=1: checks first, then per cache at H 32 and 64 and as the
# whole call at H 64, batches 1, 16, 64 and 128 (the tables' buckets),
# topk (extra cache) 512 and 2048, CUDA-graph replay. Its rows go to
# gpu/selection_inputs.py; `mlagen select` then takes the role split where
# it wins. From the repository root:
#   OUT=$OUT bash lab/rs120/sweep.sh      # $OUT/sweep.tar.gz, table last
set -u
source lab/prologue.sh rs120sweep
export DISABLE_MMA_V3=1
V=$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"(pp_h64_[a-z0-9_]+)\": Config', open('kernels/sm120/sparse_mla_mma.py').read())))))")
echo "sm120: $V" | tee -a "$W/steps.txt"
P=(--heads 32,64 --batches 1,16,64,128 --topks 512,2048 --peers none)
WC=(--whole-heads 64 --whole-batches 1,16,64,128 --extra-topks 512,2048)
S=(env TRITON_CACHE_DIR=/tmp/c-rs120sweep python3 kernels/sm120/harness.py)
# A hand-over that never completes hangs the program: every step has a limit.
bg check timeout 200 "${S[@]}" --variants "$V" --no-timing --peers none --out "$W/check-sm120.json"
part() { echo "$1" | tr , '\n' | awk -v k="$2" -v n="$3" 'NR % n == k' | paste -sd, -; }
for k in 0 1 2 3 4 5 6 7; do
  bg warm-$k timeout 200 "${S[@]}" --variants "$(part "$V" $k 8)" --warm-only --no-check "${P[@]}" "${WC[@]}"
done
wait
log "phase 1 done"; cat "$W/exits.txt"; tail -1 "$W/check.log"
timeout 170 "${S[@]}" --variants "$V" --no-check "${P[@]}" --no-whole-call --out "$W/time-sm120.json" >"$W/time-sm120.log" 2>&1
log "per cache exit $?"
timeout 120 "${S[@]}" --variants "$V" --no-check --heads 64 --batches 1 --topks 512 "${WC[@]}" --peers none --out "$W/whole-sm120.json" >"$W/whole-sm120.log" 2>&1
log "whole call exit $?"
tar -czf "$OUT/sweep.tar.gz" -C "$W" .
python3 lab/rs120/sweep_table.py "$W" | tee "$OUT/table.txt"
log total
