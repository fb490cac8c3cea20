#!/usr/bin/env bash
# One device call: lab/coldstart/probe.py on both shipped modules, each in
# a process of its own with an empty Triton cache.
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/lab-coldstart}
mkdir -p "$OUT"
nproc > "$OUT/cpus.txt"
timeout 200 python3 lab/coldstart/probe.py sm90 "$OUT/sm90.json" > "$OUT/sm90.txt" 2>&1
DISABLE_MMA_V3=1 timeout 200 python3 lab/coldstart/probe.py sm120 "$OUT/sm120.json" > "$OUT/sm120.txt" 2>&1
tail -n 30 "$OUT/sm90.txt" "$OUT/sm120.txt"
