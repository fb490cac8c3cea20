#!/usr/bin/env bash
# lab/h32: base's 64-head pipelined configurations against h32's 32-head
# ones (two programs an SM) at 64 heads, B 16, 64, 128, topk 512 and 2048;
# h32's new configurations checked first (every harness case, per cache and
# as the whole call); the sm_90 module's selection timed in the same run.
# DISABLE_MMA_V3=1. From the repository root after prepare.py, carrying
# lab/h32/base and lab/h32/h32 (git-ignored). Results in $OUT.
export OUT=${OUT:-/tmp/h32}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$OUT/gpu.txt"
VB=pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k8_w8_s1
VN=pp_h32_t16_k1_w4_s1,pp_h32_t16_k2_w4_s1,pp_h32_t16_k4_w4_s1,pp_h32_t16_k8_w4_s1
T=(--heads 64 --batches 16,64,128 --topks 512,2048 --no-whole-call --peers none)
run() { env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-$1 python3 lab/h32/$1/harness.py "${@:2}"; }
S90=(env TRITON_CACHE_DIR=/tmp/c-90 python3 kernels/sm90/harness.py --variants selected --no-check "${T[@]}")
(run h32 --variants "$VN" --no-timing --out "$OUT/h32-check.json" >"$OUT/h32-check.log" 2>&1; echo "h32 check exit $?" >>"$OUT/exits.txt") &
(run base --variants "$VB" --warm-only --no-check "${T[@]}" >/dev/null 2>&1) &
(run h32 --variants "$VN" --warm-only --no-check "${T[@]}" >/dev/null 2>&1) &
("${S90[@]}" --warm-only >/dev/null 2>&1) &
wait
cat "$OUT/exits.txt"
for rep in 1 2; do
  timeout 90 bash -c "$(declare -f run); run base --variants $VB --no-check ${T[*]} --out $OUT/base-t$rep.json" >"$OUT/base-t$rep.log" 2>&1
  timeout 90 bash -c "$(declare -f run); run h32 --variants $VN --no-check ${T[*]} --out $OUT/h32-t$rep.json" >"$OUT/h32-t$rep.log" 2>&1
done
timeout 90 "${S90[@]}" --out "$OUT/sm90.json" >"$OUT/sm90.log" 2>&1
python3 lab/h32/summary.py "$OUT" | tee "$OUT/summary.txt"
