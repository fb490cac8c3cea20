#!/usr/bin/env bash
# lab/ov and lab/bounds in one call: first lab/bounds/bench.py (the
# tensor-core loops alone, about 30 s), then ov and ovw against base as
# lab/narrowab.sh runs them. After `python3 lab/ov/prepare.py`, from the
# repository root, carrying lab/ov/base, lab/ov/ov and lab/ov/ovw:
#   bash lab/ov/device.sh     # $OUT/bounds.json, $OUT/ov.tar.gz, $OUT/ovw.tar.gz
OUT=${OUT:-/tmp/ov}
mkdir -p "$OUT"
timeout 120 python3 lab/bounds/bench.py "$OUT/bounds.json" >"$OUT/bounds.log" 2>&1
echo "bounds exit $?"
LAB=lab/ov OTHER=ov bash lab/narrowab.sh
LAB=lab/ov OTHER=ovw bash lab/narrowab.sh
python3 - "$OUT/bounds.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    extra = f" {r['hmma_per_us_per_sm']:.0f} HMMA/us/SM {r['tflops_gpu']:.0f} TF" if "tflops_gpu" in r else ""
    print(f"{r['loop']:16s} w{r['num_warps']:<2d} programs {r['programs']:4d} {r['us_per_iter']:.3f} us/iter{extra}")
PY
