#!/usr/bin/env bash
# lab/flush: do_bench's dirty L2 flush inside the timed call (probe.py). After
# `python3 lab/today/prepare.py`, from the repository root, carrying
# lab/today/old-sm90:
#   OUT=... bash lab/flush/device.sh
set -u
OUT=${OUT:-/tmp/flush}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  date -u
} | tee "$OUT/gpu.txt"
TRITON_CACHE_DIR=/tmp/c-flush-90 timeout 200 python3 lab/flush/probe.py kernels/sm90 now "$OUT/sm90.json" \
  --old lab/today/old-sm90 2>&1 | tee "$OUT/sm90.log"
DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-flush-120 timeout 200 python3 lab/flush/probe.py kernels/sm120 now \
  "$OUT/sm120.json" 2>&1 | tee "$OUT/sm120.log"
