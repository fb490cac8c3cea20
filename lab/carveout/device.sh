#!/usr/bin/env bash
# lab/carveout: the shipped modules' calls with every kernel at the default
# shared-memory carveout preference and at the maximum (probe.py). From the
# repository root:
#   OUT=$OUT bash lab/carveout/device.sh      # $OUT/*.json, the table last
set -u
source lab/prologue.sh carveout
python3 lab/carveout/probe.py sm90 "$OUT/sm90.json" 2>&1 | tee "$W/sm90.txt"
DISABLE_MMA_V3=1 python3 lab/carveout/probe.py sm120 "$OUT/sm120.json" 2>&1 | tee "$W/sm120.txt"
cp "$W/gpu.txt" "$OUT/"
log total
