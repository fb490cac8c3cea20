#!/usr/bin/env bash
# lab/timedcheck: the harness's check of every timed shape (per cache), run
# on a GPU for the first time. Each shipped module's harness, as emitted,
# with --no-check (so every verdict in the file is the timed shapes' own):
#   1. --variants selected at H 16 and 64, topk 512 and 2048, B 1, 16, 64
#      and 128 (the module's entry points, as SGLang calls them);
#   2. every sm_120 configuration at B 128 (the largest shapes, beyond
#      every correctness case) at H 64 and 16, topk 2048 (sm_90's are too
#      many to compile in one call).
# sm_120's with DISABLE_MMA_V3=1 (mma.sync, as on an sm_120 card). From the
# repository root: OUT=$OUT bash lab/timedcheck/device.sh
set -u
OUT=${OUT:-/tmp/timedcheck}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  date -u
} | tee "$OUT/gpu.txt"
COMMON=(--no-check --no-whole-call --layers 0 --peers none --reps-ms 20)
run() { # name env... -- harness args...
  local name=$1; shift
  timeout "${LIM:-150}" env "$@" > "$OUT/$name.log" 2>&1
  echo "$name exit $?"
}
run sm90-selected TRITON_CACHE_DIR=/tmp/c90 python3 kernels/sm90/harness.py "${COMMON[@]}" \
  --variants selected --heads 16,64 --topks 512,2048 --batches 1,16,64,128 --out "$OUT/sm90-selected.json"
run sm120-selected DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c120 python3 kernels/sm120/harness.py "${COMMON[@]}" \
  --variants selected --heads 16,64 --topks 512,2048 --batches 1,16,64,128 --out "$OUT/sm120-selected.json"
LIM=250 run sm120-all DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c120 python3 kernels/sm120/harness.py "${COMMON[@]}" \
  --heads 64,16 --topks 2048 --batches 128 --out "$OUT/sm120-all.json"
tail -n 2 "$OUT"/*.log
python3 lab/timedcheck/table.py "$OUT"/*.json | tee "$OUT/table.txt"
