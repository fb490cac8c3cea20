#!/usr/bin/env bash
# One device call: lab/fixed/probe.py on both shipped modules.
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/lab-fixed}
mkdir -p "$OUT"
python3 lab/fixed/probe.py sm90 "$OUT/sm90.json" 2>&1 | tee "$OUT/sm90.txt"
DISABLE_MMA_V3=1 python3 lab/fixed/probe.py sm120 "$OUT/sm120.json" 2>&1 | tee "$OUT/sm120.txt"
