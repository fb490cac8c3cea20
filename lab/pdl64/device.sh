#!/usr/bin/env bash
# lab/pdl64's device call: base, late and end (prepare.py), the sm_120
# module's pp_h64_t32_k8_w8_s1 per cache at 64 heads, topk 512, B 8, 16
# and 32 (64, 128 and 256 decode programs on the H200's 132 SMs), and as
# the whole call at B 16 (extra 512); CUDA-graph replay, DISABLE_MMA_V3=1;
# the harness's correctness cases for late and end first, then two timing
# passes, copies alternating. From the repository root, carrying
# lab/pdl64/{base,late,end}:
#   OUT=$OUT bash lab/pdl64/device.sh     # $OUT/pdl64.tar.gz, table last
set -u
source lab/prologue.sh pdl64
export DISABLE_MMA_V3=1
V=pp_h64_t32_k8_w8_s1
T=(--variants $V --no-check --heads 64 --batches 8,16,32 --topks 512 --peers none
  --whole-heads 64 --whole-batches 16 --extra-topks 512)
h() { echo env TRITON_CACHE_DIR=/tmp/c-pdl64-$1 python3 lab/pdl64/$1/harness.py; }
for c in late end; do
  bg check-$c timeout 200 $(h $c) --variants $V --no-timing --peers none --out "$W/check-$c.json"
done
for c in base late end; do bg warm-$c timeout 200 $(h $c) "${T[@]}" --warm-only; done
wait
log "phase 1 done"; cat "$W/exits.txt"
for rep in 1 2; do
  for c in base late end; do
    timeout 100 $(h $c) "${T[@]}" --out "$W/time-$c-$rep.json" >"$W/time-$c-$rep.log" 2>&1
    log "time $c $rep exit $?"
  done
done
python3 lab/pdl64/summary.py "$W" | tee "$W/summary.txt"
tar -czf "$OUT/pdl64.tar.gz" -C "$W" --exclude '*.log' .
log total
