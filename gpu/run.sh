#!/usr/bin/env bash
# One device call: validate and time every configuration of the given
# targets' shipped modules (kernels/<dir>/sparse_mla_mma.py) on the lent GPU,
# and calibrate the budget model against the compiler there. Usage (on the
# device machine): bash gpu/run.sh sm90 [sm120]
# Writes $OUT/<dir>.json and logs; prints a short table last.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/mlagen-gpu}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' | tee -a "$OUT/gpu.txt"
rc=0
for d in "$@"; do
  python3 "kernels/$d/harness.py" --out "$OUT/$d.json" 2>&1 | tee "$OUT/$d.log" | grep -v "^mma\|^ws\|^simt\|^sparse_decode" || rc=1
  if [ -f "calib/$d.budget.json" ]; then
    python3 calib/calibrate.py --budget "calib/$d.budget.json" --kernel "kernels/$d/sparse_mla_mma.py" \
      --known "calib/known-$d.txt" --json "$OUT/$d.calib.json" --jobs 8 > "$OUT/$d.calib.log" 2>&1 || rc=1
    tail -1 "$OUT/$d.calib.log"
  fi
done
python3 gpu/summary.py "$OUT"/*.json 2>/dev/null || true
exit $rc
