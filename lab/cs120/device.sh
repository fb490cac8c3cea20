#!/usr/bin/env bash
# lab/cs120 on the lent GPU: the column-split 64-head tile (lab copy cs,
# pp_h64_t16_k<K>_w8_s<N>, 2 or 3 K slots) checked on every harness case, then timed per
# cache beside the shipped one-partition tile (pp_h64_t32_k<K>_w8_s1, same
# process) at H 64, B 1, 16, 64, 128, topk 512 and 2048, DISABLE_MMA_V3=1,
# CUDA-graph replay; and the sm_90 module's own selection on the same
# shapes (its MMA v3 left on), for the ratio. From the repository
# root, after `python3 lab/cs120/prepare.py`, carrying lab/cs120/cs:
#   OUT=$OUT bash lab/cs120/device.sh    # table last; $OUT/cs120.tgz
set -u
source lab/prologue.sh cs120
CS=lab/cs120/cs/harness.py
V=$(for n in 2 3; do for k in 1 2 4 8; do printf 'pp_h64_t16_k%s_w8_s%s,' $k $n; done; done | sed 's/,$//')
B=pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k4_w8_s1,pp_h64_t32_k8_w8_s1
P=(--heads 64 --batches 1,16,64,128 --topks 512,2048 --no-whole-call --peers none)
cs() { env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-cs120 timeout "$@"; }
bg check cs 300 python3 $CS --variants "$V" --no-timing --peers none --out "$W/check-cs.json"
bg warm-cs cs 300 python3 $CS --variants "$V,$B" --warm-only --no-check "${P[@]}"
bg warm-90 env TRITON_CACHE_DIR=/tmp/c-cs120-90 timeout 300 python3 kernels/sm90/harness.py --variants selected --warm-only --no-check "${P[@]}"
wait
log "phase 1 done"; cat "$W/exits.txt"; tail -3 "$W/check.log"
cs 200 python3 $CS --variants "$V,$B" --no-check "${P[@]}" --out "$W/time-cs.json" >"$W/time-cs.log" 2>&1
log "cs timing exit $?"
env TRITON_CACHE_DIR=/tmp/c-cs120-90 timeout 120 python3 kernels/sm90/harness.py --variants selected --no-check "${P[@]}" --out "$W/time-sm90.json" >"$W/time-sm90.log" 2>&1
log "sm90 timing exit $?"
tar -czf "$OUT/cs120.tgz" -C "$W" .
python3 lab/cs120/table.py "$W" | tee "$OUT/table.txt"
log total
