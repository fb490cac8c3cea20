#!/usr/bin/env bash
# One device call: check and time every lab candidate beside the shipped
# sm_120 and sm_90 modules, on the lent H200.
#
#   run: bash lab/sm120/device.sh        ($OUT set by the device tool)
#
# 1. Correctness (and compiling every timed specialisation) in parallel
#    processes: the lab configurations and the sm_120 module with
#    DISABLE_MMA_V3=1 (mma.sync, as on sm_120), the sm_90 module without it.
# 2. Timing, one process at a time on an otherwise idle GPU: the sm_90 module
#    (normal environment), then the lab + sm_120 module (DISABLE_MMA_V3=1).
# 3. One merged JSON and the short table, printed last.
set -u
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/k1-out}
mkdir -p "$OUT" /tmp/k1w
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
START=$(date +%s)
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
  $PY -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} >"$OUT/gpu.txt" 2>&1

CONFIGS=$($PY bench.py plan | tail -1 | sed 's/.*configurations: //')
IFS=, read -r -a NAMES <<<"$CONFIGS"
GROUPS_N=${GROUPS_N:-12}
# Wall-clock plan (the call's limit is 300 s): checks at most 150 s, each
# timing process starts no new shape past its deadline.
CHECK_LIMIT=${CHECK_LIMIT:-150}
pids=()
for ((g = 0; g < GROUPS_N; g++)); do
  sel=()
  for ((i = g; i < ${#NAMES[@]}; i += GROUPS_N)); do sel+=("${NAMES[i]}"); done
  [ ${#sel[@]} -eq 0 ] && continue
  list=$(IFS=,; echo "${sel[*]}")
  DISABLE_MMA_V3=1 timeout $CHECK_LIMIT $PY bench.py check --configs "$list" --json /tmp/k1w/check_$g.json \
    >/tmp/k1w/check_$g.log 2>&1 &
  pids+=($!)
done
DISABLE_MMA_V3=1 timeout $CHECK_LIMIT $PY bench.py check --configs base_sm120 --json /tmp/k1w/check_base120.json \
  >/tmp/k1w/check_base120.log 2>&1 &
pids+=($!)
DISABLE_MMA_V3=1 timeout $CHECK_LIMIT $PY bench.py check --configs pipe_decode --json /tmp/k1w/check_sel.json \
  >/tmp/k1w/check_sel.log 2>&1 &
pids+=($!)
env -u DISABLE_MMA_V3 timeout $CHECK_LIMIT $PY bench.py check --configs base_sm90 --json /tmp/k1w/check_base90.json \
  >/tmp/k1w/check_base90.log 2>&1 &
pids+=($!)
for p in "${pids[@]}"; do wait "$p"; done
echo "checks done after $(( $(date +%s) - START )) s"
cat /tmp/k1w/check_*.log >"$OUT/check.log"
grep -c " ok$" "$OUT/check.log" | sed 's/^/ok rows: /'
grep -E "FAIL|Error|error" "$OUT/check.log" | head -20

env -u DISABLE_MMA_V3 $PY bench.py time --modules base_sm90 --json "$OUT/time_sm90.json" \
  --deadline $((START + ${SM90_DEADLINE:-200})) \
  >"$OUT/time.log" 2>&1
echo "sm90 timing done after $(( $(date +%s) - START )) s"
DISABLE_MMA_V3=1 $PY bench.py time --modules base_sm120,pipe_decode,pp --json "$OUT/time_lab.json" \
  --deadline $((START + ${LAB_DEADLINE:-265})) \
  >>"$OUT/time.log" 2>&1
echo "lab timing done after $(( $(date +%s) - START )) s"
tail -3 "$OUT/time.log"
$PY summary.py --checks '/tmp/k1w/check_*.json' \
  --times "$OUT/time_lab.json,$OUT/time_sm90.json" --out "$OUT/run.json"
