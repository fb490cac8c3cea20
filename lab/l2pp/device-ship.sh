#!/usr/bin/env bash
# lab/l2pp, second call: the modules as emitted with the prefetch (the
# 16-head pipelined tile's) checked and timed against the module before
# it (lab/l2pp/base, prepare.py; carry it). DISABLE_MMA_V3=1. Checks: the
# sm_120 module's entry points and every 16-head pipelined configuration
# on every harness case; the sm_89, sm_86 and sm_80 modules' entry points
# (the same template). Timing: ship.py (per cache and whole call, H 16
# and 64, one call a graph and as layers). From the repository root:
#   OUT=$OUT bash lab/l2pp/device-ship.sh     # $OUT/ship.tgz, the table last
set -u
source lab/prologue.sh l2pp-ship
H16=pp_h16_t64_k1_w8_s1,pp_h16_t64_k2_w8_s1,pp_h16_t64_k3_w8_s1,pp_h16_t64_k4_w8_s1,pp_h16_t64_k6_w8_s1,pp_h16_t64_k8_w8_s1,pp_h16_t64_k16_w8_s1,pp_h16_t64_k32_w8_s1
export DISABLE_MMA_V3=1
bg check-sm120 env TRITON_CACHE_DIR=/tmp/c-120 timeout 300 python3 kernels/sm120/harness.py --variants selected --no-timing --peers none --out "$W/check-sm120.json"
bg check-sm120-h16 env TRITON_CACHE_DIR=/tmp/c-120b timeout 300 python3 kernels/sm120/harness.py --variants "$H16" --no-timing --peers none --out "$W/check-sm120-h16.json"
for t in sm89 sm86 sm80; do
  bg check-$t env TRITON_CACHE_DIR=/tmp/c-$t timeout 300 python3 kernels/$t/harness.py --variants selected --no-timing --peers none --out "$W/check-$t.json"
done
wait
log "checks done"; cat "$W/exits.txt"
TRITON_CACHE_DIR=/tmp/c-ship timeout 400 python3 lab/l2pp/ship.py sm120 "$W/ship.json" >"$W/ship.log" 2>&1
log "ship exit $?"
tail -n 2 "$W"/check-*.log
grep -E '^(cache|whole)' "$W/ship.log"
log total
tar -C "$W" -czf "$OUT/ship.tgz" .
