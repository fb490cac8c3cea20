#!/usr/bin/env bash
# One device call: lab/splits36/probe.py on both copies (carry
# lab/splits36/sm90 and lab/splits36/sm120).
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/lab-splits36}
mkdir -p "$OUT"
timeout 200 python3 lab/splits36/probe.py sm90 "$OUT/sm90.json" > "$OUT/sm90.txt" 2>&1
DISABLE_MMA_V3=1 timeout 200 python3 lab/splits36/probe.py sm120 "$OUT/sm120.json" > "$OUT/sm120.txt" 2>&1
tail -n 25 "$OUT/sm90.txt" "$OUT/sm120.txt"
