#!/usr/bin/env bash
# lab/cheads' device call (prepare.py's copies): the harness's correctness
# cases for the split configurations of hp90, hp120 and hps120; then both
# modules through their own selections (the sm_120 ones with
# DISABLE_MMA_V3=1), per cache and as the whole call at 16 and 64 heads,
# B 1, 16, 64, topk (extra cache) 512 and 2048, CUDA-graph replay, two
# passes, copies alternating. From the repository root, carrying the copies:
#   OUT=$OUT bash lab/cheads/device.sh     # $OUT/cheads.tar.gz, table last
set -u
source lab/prologue.sh cheads
V90=ws_h16_t64_k8_w4_s3,ws_h16_t64_k2_w4_s3,ws_h64_t64_k8_w8_s2
V120=pp_h16_t64_k8_w8_s1,pp_h16_t64_k32_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k8_w8_s1
T=(--variants selected --no-check --heads 16,64 --batches 1,16,64 --topks 512,2048
  --whole-heads 16,64 --whole-batches 1,16,64 --extra-topks 512,2048 --peers none)
h() {
  local env=(env TRITON_CACHE_DIR=/tmp/c-cheads-$1)
  case $1 in *120) env+=(DISABLE_MMA_V3=1) ;; esac
  echo "${env[@]}" python3 lab/cheads/$1/harness.py
}
bg check-hp90 timeout 300 $(h hp90) --variants $V90 --no-timing --peers none --out "$W/check-hp90.json"
bg check-hp120 timeout 300 $(h hp120) --variants $V120 --no-timing --peers none --out "$W/check-hp120.json"
bg check-hps120 timeout 300 $(h hps120) --variants $V120 --no-timing --peers none --out "$W/check-hps120.json"
for c in base90 hp90 base120 hp120 hps120; do bg warm-$c timeout 300 $(h $c) "${T[@]}" --warm-only; done
wait
log "phase 1 done"; cat "$W/exits.txt"
for rep in 1 2; do
  for c in base90 hp90 base120 hp120 hps120; do
    timeout 120 $(h $c) "${T[@]}" --out "$W/time-$c-$rep.json" >"$W/time-$c-$rep.log" 2>&1
    log "time $c $rep exit $?"
  done
done
python3 lab/ratios.py "$W" hp hps | tee "$W/summary.txt"
tar -czf "$OUT/cheads.tar.gz" -C "$W" --exclude '*.log' .
log total
