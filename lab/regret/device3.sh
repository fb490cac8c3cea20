#!/usr/bin/env bash
# Third device call: lab/regret/probe.py at batches neither earlier call
# timed, after fit_splits took a program cost per kernel (its constants
# read off the first two calls' rows and B 128's): out-of-sample.
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/lab-regret3}
mkdir -p "$OUT"
B=36,44,52,60,80,120,144,180
timeout 280 python3 lab/regret/probe.py sm90 "$OUT/sm90-fresh.json" $B > "$OUT/sm90-fresh.txt" 2>&1
DISABLE_MMA_V3=1 timeout 280 python3 lab/regret/probe.py sm120 "$OUT/sm120-fresh.json" $B > "$OUT/sm120-fresh.txt" 2>&1
tail -n 1 "$OUT/sm90-fresh.txt" "$OUT/sm120-fresh.txt"
grep -h ' x 1\.0[2-9]\| x 1\.[1-9]' "$OUT"/*-fresh.txt | grep -v 'fitted .* x 1\.0[01] ' | head -40
