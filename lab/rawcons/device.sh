#!/usr/bin/env bash
# lab/rawcons' device call, from the repository root, carrying
# lab/rawcons/base, lab/rawcons/raw and lab/rawcons/rawp (python3
# lab/rawcons/prepare.py):
#   OUT=$OUT bash lab/rawcons/device.sh
# First the consumer loops alone (bench.py, with its check), then the raw
# kernels (raw; rawp, its consumer pipelined) against the shipped one
# through the harness (lab/narrowab.sh:
# correctness cases, then per cache and whole call at H 16).
set -u
mkdir -p "$OUT"
timeout 200 python3 lab/rawcons/bench.py "$OUT/bench.json" --check >"$OUT/bench.log" 2>&1
echo "bench exit $?"
tail -14 "$OUT/bench.log"
for c in ${COPIES:-raw rawp}; do
  LAB=lab/rawcons OTHER=$c OTHER_STAGES=2 bash lab/narrowab.sh | tail -14
done
