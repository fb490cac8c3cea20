#!/usr/bin/env bash
# lab/pdl120's device call: `late` against `base` (prepare.py), the sm_120
# module's pipelined configurations at 16 and 64 heads, split and not, per
# cache and as the whole call, B 16, 64, 128, topk (extra cache) 512 and
# 2048, CUDA-graph replay, DISABLE_MMA_V3=1 (mma.sync on the H200). The
# harness's correctness cases for `late` first; then two timing passes
# each, alternating copies. From the repository root, carrying
# lab/pdl120/base and lab/pdl120/late:
#   OUT=$OUT bash lab/pdl120/device.sh     # $OUT/pdl120.tar.gz, table last
set -u
source lab/prologue.sh pdl120
export DISABLE_MMA_V3=1
H16=pp_h16_t64_k1_w8_s1,pp_h16_t64_k2_w8_s1,pp_h16_t64_k8_w8_s1
H64=pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k8_w8_s1
T=(--batches 16,64,128 --topks 512,2048 --peers none --whole-batches 16,64,128)
h() { echo env TRITON_CACHE_DIR=/tmp/c-pdl120-$1 python3 lab/pdl120/$1/harness.py; }
bg check-late timeout 300 $(h late) --variants "$H16,$H64" --no-timing --peers none --out "$W/check-late.json"
for c in base late; do
  bg warm-$c timeout 300 $(h $c) --variants "$H16,$H64" --warm-only --no-check "${T[@]}" --heads 16,64 --whole-heads 16,64
done
wait
log "phase 1 done"; cat "$W/exits.txt"
for rep in 1 2; do
  for c in base late; do
    for hv in 16:$H16 64:$H64; do
      timeout 150 $(h $c) --variants "${hv#*:}" --no-check "${T[@]}" --heads ${hv%%:*} --whole-heads ${hv%%:*} \
        --out "$W/time-$c-$rep-h${hv%%:*}.json" >"$W/time-$c-$rep-h${hv%%:*}.log" 2>&1
      log "time $c $rep h${hv%%:*} exit $?"
    done
  done
done
python3 lab/pdl120/summary.py "$W" | tee "$W/summary.txt"
tar -czf "$OUT/pdl120.tar.gz" -C "$W" .
log total
