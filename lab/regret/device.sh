#!/usr/bin/env bash
# One device call: lab/regret/probe.py on both shipped modules.
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/lab-regret}
mkdir -p "$OUT"
timeout 270 python3 lab/regret/probe.py sm90 "$OUT/sm90.json" > "$OUT/sm90.txt" 2>&1
DISABLE_MMA_V3=1 timeout 270 python3 lab/regret/probe.py sm120 "$OUT/sm120.json" > "$OUT/sm120.txt" 2>&1
tail -n 60 "$OUT/sm90.txt" "$OUT/sm120.txt"
