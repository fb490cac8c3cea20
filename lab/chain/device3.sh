#!/usr/bin/env bash
# lab/chain's third call: the sm_120 module's stamped copies, stamp120 (the
# shipped rule: 64-head tiles signal in two splits) and stamp120s (in every
# split), at 64 heads B 8, 16, 32 and 64 and 16 heads B 16, topk 512;
# placement.py's table last. From the repository root after
# `python3 lab/chain/prepare.py a42b63e` (results3/), carrying
# lab/chain/{base120,stamp120,stamp120s}:
#   OUT=$OUT bash lab/chain/device3.sh     # $OUT/chain3.tar.gz
set -u
source lab/prologue.sh chain3
export DISABLE_MMA_V3=1 SHAPES=64:512:8,64:512:16,64:512:32,64:512:64,16:512:16
for c in stamp120 stamp120s; do
  timeout 200 python3 lab/chain/probe.py 120 "$W/$c.json" $c >"$W/$c.txt" 2>&1
  log "$c exit $?"
done
python3 lab/chain/placement.py "$W/stamp120.json" "$W/stamp120s.json" | tee "$W/placement.txt"
tar -czf "$OUT/chain3.tar.gz" -C "$W" .
log total
