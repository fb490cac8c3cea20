#!/usr/bin/env bash
# One device call: probe.py's host times on both shipped modules, then
# gpu/splits.py inside green contexts of 72 and 104 multiprocessors on
# both (the module finds the count itself; the entry also timed as told
# the whole GPU's, what it ran before). Results in one tarball, the
# device's file count being limited.
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/lab-greenctx}
W=/tmp/lab-greenctx-work
rm -rf "$W" && mkdir -p "$W" "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$W/gpu.txt" 2>&1
python3 -c 'import torch, triton; print(torch.__version__, triton.__version__)' >> "$W/gpu.txt"
timeout 100 python3 lab/greenctx/probe.py sm90 "$W/host-sm90.json" > "$W/host-sm90.txt" 2>&1
DISABLE_MMA_V3=1 timeout 100 python3 lab/greenctx/probe.py sm120 "$W/host-sm120.json" > "$W/host-sm120.txt" 2>&1
for n in 72 104; do
  timeout 170 python3 gpu/splits.py sm90 "$W/sm90-g$n.json" --sms $n > "$W/sm90-g$n.txt" 2>&1
  DISABLE_MMA_V3=1 timeout 170 python3 gpu/splits.py sm120 "$W/sm120-g$n.json" --sms $n > "$W/sm120-g$n.txt" 2>&1
done
tar -czf "$OUT/greenctx.tgz" -C "$W" .
cat "$W"/host-*.txt
grep -h -E '^(device_sms|calibration|FAIL|sm)' "$W"/sm*-g*.txt
grep -h -c 'told' "$W"/sm*-g*.txt
