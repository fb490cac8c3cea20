#!/usr/bin/env bash
# lab/creg's device call: the bf16 combine at maxnreg 64 and 128 (prepare.py)
# against base, both modules through their own selections (the sm_120 one
# with DISABLE_MMA_V3=1), per cache and as the whole call at 16 and 64
# heads, B 1, 16, 64, topk (extra cache) 512 and 2048, CUDA-graph replay.
# The harness's correctness cases for r128 first; then two timing passes,
# copies alternating. From the repository root, carrying the six copies:
#   OUT=$OUT bash lab/creg/device.sh     # $OUT/creg.tar.gz, table last
set -u
source lab/prologue.sh creg
T=(--variants selected --no-check --heads 16,64 --batches 1,16,64 --topks 512,2048
  --whole-heads 16,64 --whole-batches 1,16,64 --extra-topks 512,2048 --peers none)
h() {
  local env=(env TRITON_CACHE_DIR=/tmp/c-creg-$1)
  case $1 in *120) env+=(DISABLE_MMA_V3=1) ;; esac
  echo "${env[@]}" python3 lab/creg/$1/harness.py
}
for t in 90 120; do
  bg check-r128_$t timeout 300 $(h r128_$t) --variants selected --no-timing --peers none --out "$W/check-r128_$t.json"
  for c in base r64_ r128_; do bg warm-$c$t timeout 300 $(h $c$t) "${T[@]}" --warm-only; done
done
wait
log "phase 1 done"; cat "$W/exits.txt"
for rep in 1 2; do
  for t in 90 120; do
    for c in base r64_ r128_; do
      timeout 120 $(h $c$t) "${T[@]}" --out "$W/time-$c$t-$rep.json" >"$W/time-$c$t-$rep.log" 2>&1
      log "time $c$t $rep exit $?"
    done
  done
done
python3 lab/ratios.py "$W" r64 r128 | tee "$W/summary.txt"
tar -czf "$OUT/creg.tar.gz" -C "$W" --exclude '*.log' .
log total
