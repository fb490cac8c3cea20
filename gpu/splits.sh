#!/usr/bin/env bash
# One device call: gpu/splits.py on both shipped modules over the whole
# GPU, then the sm_120 module inside green contexts of 72 and 104 of its
# multiprocessors (standing in for GPUs of about an A10's and an A100's
# size; at 72 also with only the green stream current), then the sm_89,
# sm_86 and sm_80 modules launched as their GPUs launch (no
# griddepcontrol). gpu/shipped.sh runs the first two as well.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/mlagen-splits}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
python3 -c 'import torch, triton; print(torch.__version__, triton.__version__)' >> "$OUT/gpu.txt"
python3 gpu/splits.py sm90 "$OUT/sm90.json" 2>&1 | tee "$OUT/sm90.txt"
DISABLE_MMA_V3=1 python3 gpu/splits.py sm120 "$OUT/sm120.json" 2>&1 | tee "$OUT/sm120.txt"
for n in 72 104; do
  DISABLE_MMA_V3=1 timeout 170 python3 gpu/splits.py sm120 "$OUT/sm120-g$n.json" --sms $n 2>&1 | tail -n 40 | tee "$OUT/sm120-g$n.txt"
done
# Only the green stream current, as SGLang's PD multiplexing runs decode.
DISABLE_MMA_V3=1 timeout 170 python3 gpu/splits.py sm120 "$OUT/sm120-g72-stream.json" --sms 72 --stream-only 2>&1 | tail -n 40 | tee "$OUT/sm120-g72-stream.txt"
for t in sm89 sm86 sm80; do
  DISABLE_MMA_V3=1 timeout 170 python3 gpu/splits.py $t "$OUT/$t-nopdl.json" --no-pdl > "$OUT/$t-nopdl.txt" 2>&1
done
grep -h -E '^(calibration|per cache|whole call|sm)' "$OUT"/*.txt
