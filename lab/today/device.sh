#!/usr/bin/env bash
# lab/today: issue 26's "today" in the same run as now. The sm_90 and
# sm_120 modules as they were when the issue was filed (prepare.py) beside
# the shipped ones, per cache, H 16 and 64, topk 512 and 2048, B 1, 16, 64
# and 128, each module through its own sparse_decode; the sm_120 ones with
# DISABLE_MMA_V3=1 (mma.sync, as on sm_120). After
# `python3 lab/today/prepare.py`, from the repository root, carrying
# lab/today/old-sm90 and lab/today/old-sm120:
#   bash lab/today/device.sh     # $OUT/*.json and *.log, the table last
set -u
OUT=${OUT:-/tmp/today}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  date -u
} | tee "$OUT/gpu.txt"
TRITON_CACHE_DIR=/tmp/c-today-90 timeout 270 python3 lab/today/ab.py sm90 "$OUT/sm90.json" >"$OUT/sm90.log" 2>&1
echo "sm90 exit $?"
DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-today-120 timeout 270 python3 lab/today/ab.py sm120 "$OUT/sm120.json" >"$OUT/sm120.log" 2>&1
echo "sm120 exit $?"
tail -n 3 "$OUT"/*.log
python3 lab/today/summary.py "$OUT"/sm90.json "$OUT"/sm120.json | tee "$OUT/summary.txt"
