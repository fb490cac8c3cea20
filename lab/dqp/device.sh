#!/usr/bin/env bash
# lab/dqp's call (sixteenth session): lab/fp8's bisection copies first, then
# each of lab/dqp's copies against base through lab/wsab.sh (narrow kernels
# at splits 1 and 8, the 64-head role split and cluster merge at H 64 and
# 128). After `python3 lab/dqp/prepare.py` and `python3 lab/fp8/prepare.py`,
# from the repository root, carrying lab/dqp and lab/fp8:
#   bash lab/dqp/device.sh     # $OUT/fp8-debug.txt, $OUT/<copy>/*.tar.gz
set -u
OUT=${OUT:-/tmp/dqp}
mkdir -p "$OUT"
DISABLE_MMA_V3=1 timeout 120 python3 lab/fp8/debug.py base f8 f8g1 f8qd >"$OUT/fp8-debug.txt" 2>&1
echo "fp8 debug exit $?"; tail -12 "$OUT/fp8-debug.txt"
for c in ${COPIES:-shift dqps}; do
  mkdir -p "$OUT/$c"
  LAB=lab/dqp OTHER=$c KS="1 8" OUT="$OUT/$c" bash lab/wsab.sh 2>&1 | tail -40
done
