#!/usr/bin/env bash
# Second device call: lab/regret/probe.py above B 128 (more programs than
# the H200 has multiprocessors even with one split: the fit's multi-wave
# choices), both shipped modules.
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/lab-regret2}
mkdir -p "$OUT"
B=136,160,200,264
timeout 280 python3 lab/regret/probe.py sm90 "$OUT/sm90-large.json" $B > "$OUT/sm90-large.txt" 2>&1
DISABLE_MMA_V3=1 timeout 280 python3 lab/regret/probe.py sm120 "$OUT/sm120-large.json" $B > "$OUT/sm120-large.txt" 2>&1
tail -n 20 "$OUT/sm90-large.txt" "$OUT/sm120-large.txt"
