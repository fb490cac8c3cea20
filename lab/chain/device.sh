#!/usr/bin/env bash
# lab/chain's device call: probe.py on the sm_90 module (base90, stamp90)
# and on the sm_120 module (base120, stamp120, DISABLE_MMA_V3=1), one after
# the other. From the repository root, carrying lab/chain/{base,stamp}{90,120}:
#   OUT=$OUT bash lab/chain/device.sh     # $OUT/chain.tar.gz, tables last
set -u
source lab/prologue.sh chain
timeout 280 python3 lab/chain/probe.py 90 "$W/sm90.json" >"$W/sm90.txt" 2>&1
log "sm90 exit $?"
DISABLE_MMA_V3=1 timeout 280 python3 lab/chain/probe.py 120 "$W/sm120.json" >"$W/sm120.txt" 2>&1
log "sm120 exit $?"
tar -czf "$OUT/chain.tar.gz" -C "$W" .
cat "$W/sm90.txt" "$W/sm120.txt" | grep -v "^ *c_\|_min \|_max " | tail -150
log total
