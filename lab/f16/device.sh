#!/usr/bin/env bash
# lab/f16, first call: the probe's operands against torch; base and f16
# (prepare.py) at 64 heads, B 16, 64, 128, topk 512 and 2048, the 64-head
# configurations the sm_120 tables pick there; f16 checked first (every
# harness case of those configurations, per cache and as the whole call);
# then the sm_90 module's own selection at the same shapes, for the ratio.
# From the repository root after prepare.py, carrying lab/f16/base and
# lab/f16/f16 (git-ignored). Results in $OUT.
export OUT=${OUT:-/tmp/f16}
mkdir -p "$OUT"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$OUT/gpu.txt"
python3 lab/f16/probe.py --run 2>&1 | tail -3 | tee "$OUT/probe.txt"
V=pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k8_w8_s1 HEADS=64 \
  bash "$(dirname "$0")/../abtest.sh" f16 lab/f16 base f16
S90=(env TRITON_CACHE_DIR=/tmp/c-90 python3 kernels/sm90/harness.py --variants selected
  --heads 64 --batches 16,64,128 --topks 512,2048 --no-whole-call --peers none --no-check)
"${S90[@]}" --warm-only >/dev/null 2>&1
timeout 120 "${S90[@]}" --out "$OUT/sm90.json" >"$OUT/sm90.log" 2>&1
python3 - "$OUT/sm90.json" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["timing"]:
    print(f"sm_90 {t['variant']:22s} {t['topk']:5d} {t['batch']:4d} {t['graph_us']:7.1f}")
PY
