#!/usr/bin/env bash
# One device call: lab/balanced/probe.py on the whole H200 and in a green
# context of 104 SMs (carry lab/balanced/bal).
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/lab-balanced}
mkdir -p "$OUT"
export DISABLE_MMA_V3=1
timeout 300 python3 lab/balanced/probe.py "$OUT/h200.json" > "$OUT/h200.txt" 2>&1
timeout 150 python3 lab/balanced/probe.py "$OUT/sms104.json" --sms 104 --batches 40,56,72,96 > "$OUT/sms104.txt" 2>&1
tail -n 45 "$OUT/h200.txt"; tail -n 20 "$OUT/sms104.txt"
