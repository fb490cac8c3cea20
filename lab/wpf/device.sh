#!/usr/bin/env bash
# lab/wpf on the lent GPU (DISABLE_MMA_V3=1): the copies of prepare.py
# (git-ignored; carry the ones named). Checks: each of CHECK on every
# harness case through its entry points and every 16-head pipelined
# configuration; then time.py with WHOLE and CACHE. From the repository
# root:
#   OUT=$OUT bash lab/wpf/device.sh       # $OUT/wpf.tgz, the table last
#   # (first call: base, card, g3, g2 carried, the defaults below)
#   CHECK="one blk" WHOLE=base,card,one,blk CACHE=base,one,blk OUT=$OUT bash lab/wpf/device.sh
#   # (second call: base, card, one, blk carried)
set -u
source lab/prologue.sh wpf
H16=pp_h16_t64_k1_w8_s1,pp_h16_t64_k2_w8_s1,pp_h16_t64_k3_w8_s1,pp_h16_t64_k4_w8_s1,pp_h16_t64_k6_w8_s1,pp_h16_t64_k8_w8_s1,pp_h16_t64_k16_w8_s1,pp_h16_t64_k32_w8_s1
CHECK=${CHECK:-g3 g2}
WHOLE=${WHOLE:-base,card,g3,g2}
CACHE=${CACHE:-base,g3,g2}
export DISABLE_MMA_V3=1
for c in $CHECK; do
  bg check-$c env TRITON_CACHE_DIR=/tmp/c-$c timeout 300 python3 lab/wpf/$c/harness.py --variants selected --no-timing --peers none --out "$W/check-$c.json"
  bg check-$c-h16 env TRITON_CACHE_DIR=/tmp/c-$c-h16 timeout 300 python3 lab/wpf/$c/harness.py --variants "$H16" --no-timing --peers none --out "$W/check-$c-h16.json"
done
wait
log "checks done"; cat "$W/exits.txt"
TRITON_CACHE_DIR=/tmp/c-time timeout 400 python3 lab/wpf/time.py "$W/time.json" "$WHOLE" "$CACHE" >"$W/time.log" 2>&1
log "time exit $?"
tail -n 2 "$W"/check-*.log
grep -E '^(cache|whole)' "$W/time.log"
log total
tar -C "$W" -czf "$OUT/wpf.tgz" .
