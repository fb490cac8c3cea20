#!/usr/bin/env bash
# lab/lazy120 on the lent GPU: the pipelined tiles with the accumulators'
# rescale skipped in tiles where no row's maximum grew by more than 2^8
# (lab/lazy120/lazy.patch on the shipped module, prepare.sh) beside the shipped sm_120 module
# (kernels/sm120), DISABLE_MMA_V3=1: checks of both lazy tiles on every
# harness case, then per cache at the tables' split counts (k8, k2, k1 at
# B 16, 64, 128), H 64 (pp_h64_t32) and 16 (pp_h16_t64), topk 512 and
# 2048, CUDA-graph replay, timed shipped, lazy, shipped again. From the
# repository root:
#   OUT=$OUT bash lab/lazy120/device.sh    # table last; $OUT/lazy120.tgz
set -u
source lab/prologue.sh lazy120
L=$(bash lab/lazy120/prepare.sh) || exit 1
V=pp_h64_t32_k8_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k1_w8_s1,pp_h16_t64_k8_w8_s1,pp_h16_t64_k2_w8_s1,pp_h16_t64_k1_w8_s1
P=(--heads 64,16 --batches 16,64,128 --topks 512,2048 --no-whole-call --peers none)
run() { env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-$1 timeout "${@:2}"; }
bg check-lazy run lazy 200 python3 $L/harness.py --variants pp_h64_t32_k2_w8_s1,pp_h16_t64_k2_w8_s1 --no-timing --peers none --out "$W/check-lazy.json"
bg warm-lazy run lazy 200 python3 $L/harness.py --variants "$V" --warm-only --no-check "${P[@]}"
bg warm-base run base 200 python3 kernels/sm120/harness.py --variants "$V" --warm-only --no-check "${P[@]}"
wait
log "phase 1 done"; cat "$W/exits.txt"
for step in base:kernels/sm120 lazy:$L base2:kernels/sm120; do
  n=${step%%:*} d=${step#*:}
  run ${n%2} 120 python3 $d/harness.py --variants "$V" --no-check "${P[@]}" --out "$W/time-$n.json" >"$W/time-$n.log" 2>&1
  log "$n timing exit $?"
done
python3 lab/lazy120/table.py "$W" | tee "$W/table.txt"
log total
tar -C "$W" -czf "$OUT/lazy120.tgz" .
