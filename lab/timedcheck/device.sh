#!/usr/bin/env bash
# lab/timedcheck: the harness's check of every timed shape (per cache), run
# on a GPU for the first time. Each shipped module's harness, as emitted,
# with --no-check (so every verdict in the file is the timed shapes' own):
#   1. --variants selected at H 16 and 64, topk 512 and 2048, B 1, 16, 64
#      and 128 (the module's entry points, as SGLang calls them);
#   2. every sm_120 configuration at B 128 (the largest shapes, beyond
#      every correctness case) at H 64 and 16, topk 2048.
# sm_120's with DISABLE_MMA_V3=1 (mma.sync, as on an sm_120 card). First,
# warm-only processes in parallel fill Triton's caches (the configurations
# split eight ways), so that the timed runs compile nothing. From the
# repository root: OUT=$OUT bash lab/timedcheck/device.sh (WITH_ALL=0: the
# entry points only, part 1, in about half the time; BATCHES=1,128 fewer
# batches for part 1)
# First run: results/2026-12-07-h100/ (an H100; NOTES.md, 2026-12-07,
# fifty-seventh session).
set -u
WITH_ALL=${WITH_ALL:-1}
BATCHES=${BATCHES:-1,16,64,128}
OUT=${OUT:-/tmp/timedcheck}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  date -u
} | tee "$OUT/gpu.txt"
COMMON=(--no-check --no-whole-call --layers 0 --peers none --reps-ms 20)
SEL=(--variants selected --heads 16,64 --topks 512,2048 --batches "$BATCHES")
ALL=(--heads 64,16 --topks 2048 --batches 128)
H90=(env TRITON_CACHE_DIR=/tmp/c90 python3 kernels/sm90/harness.py "${COMMON[@]}")
H120=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c120 python3 kernels/sm120/harness.py "${COMMON[@]}")
run() { # name limit command...
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  echo "$name exit $?"
}
# The sm_120 configurations, eight groups.
DISABLE_MMA_V3=1 python3 -c '
import importlib.util, sys
spec = importlib.util.spec_from_file_location("m", "kernels/sm120/sparse_mla_mma.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
names = sorted(m.CONFIGS)
for i in range(8):
    print(",".join(names[i::8]))
' > "$OUT/groups.txt" 2> "$OUT/groups.log"
echo "$(wc -w < "$OUT/groups.txt") groups of sm_120 configurations"
T0=$(date +%s)
run warm-sm90 150 "${H90[@]}" "${SEL[@]}" --warm-only --out /dev/null &
run warm-sm120 150 "${H120[@]}" "${SEL[@]}" --warm-only --out /dev/null &
i=0
[ "$WITH_ALL" = 1 ] || : > "$OUT/groups.txt"
while read -r g; do
  i=$((i + 1))
  run "warm-all-$i" 150 "${H120[@]}" "${ALL[@]}" --variants "$g" --warm-only --out /dev/null &
done < "$OUT/groups.txt"
wait
echo "warm: $(($(date +%s) - T0)) s"
run sm90-selected 120 "${H90[@]}" "${SEL[@]}" --out "$OUT/sm90-selected.json"
run sm120-selected 120 "${H120[@]}" "${SEL[@]}" --out "$OUT/sm120-selected.json"
[ "$WITH_ALL" = 1 ] && run sm120-all 150 "${H120[@]}" "${ALL[@]}" --out "$OUT/sm120-all.json"
echo "total: $(($(date +%s) - T0)) s"
tail -n 2 "$OUT"/sm*.log
python3 lab/timedcheck/table.py "$OUT"/sm*.json | tee "$OUT/table.txt"
