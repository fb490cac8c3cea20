#!/usr/bin/env bash
# Helper K3a's one device call: the emitted harness's correctness checks (no
# timing) on the lent H200, for every configuration of kernels/sm90 (normal
# environment) and kernels/sm120 (DISABLE_MMA_V3=1: mma.sync, as on sm_120),
# per cache and whole call, plus a few configurations of kernels/sm80 (the
# cache read as bytes: the e4m3 bits decoded by the module itself); then the
# SASS of the sm120 build (HMMA, no HGMMA), one merged JSON, the short table.
#
#   bash lab/port/device.sh          ($OUT set by the device tool)
#
# The harness compiles every specialisation it meets on first use, so the
# configurations run in parallel, a few to a process (16 cores), each
# process with a deadline; its JSON is written when it ends.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/k3a-out}
W=/tmp/k3a-work
mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
START=$(date +%s)
# Seconds from the start by which every harness process has ended.
LIMIT=${LIMIT:-270}
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  $PY -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  echo "cpus $(nproc)"
} >"$W/gpu.txt" 2>&1

# shard DIR ENV PER NAMES...: one harness process for every PER names.
jobs_file=$W/jobs.txt
: >"$jobs_file"
shard() {
  local dir=$1 env=$2 per=$3
  shift 3
  local names=("$@") i
  for ((i = 0; i < ${#names[@]}; i += per)); do
    local sel=("${names[@]:i:per}")
    local list
    list=$(IFS=,; echo "${sel[*]}")
    echo "$dir $env $list" >>"$jobs_file"
  done
}
# configs DIR FAMILY: the names of one family's configurations in CONFIGS.
configs() { $PY -c "
import importlib.util, sys
spec = importlib.util.spec_from_file_location('b', 'kernels/$1/sparse_mla_mma.py')
b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)
print(' '.join(n for n, c in b.CONFIGS.items() if c.family == '$2'))"; }
# The Gluon configurations compile slowest: first, two to a process.
shard sm90 normal 2 $(configs sm90 ws)
shard sm120 mmav2 2 $(configs sm120 pp)
shard sm90 normal 4 $(configs sm90 mma) simt_baseline
shard sm120 mmav2 4 $(configs sm120 mma)
# sm_80: one configuration of each family and code path that fits there.
SM80=$($PY -c "
import importlib.util
spec = importlib.util.spec_from_file_location('b', 'kernels/sm80/sparse_mla_mma.py')
b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)
want = ['mma_h16_t16_k4_w4_s1', 'mma_h16_t32_k1_w4_s2', 'pp_h16_t64_k1_w8_s1', 'pp_h16_t64_k8_w8_s1']
print(' '.join(n for n in want if n in b.CONFIGS))")
echo "$SM80" >"$W/wanted-sm80.txt"
shard sm80 mmav2 4 $SM80
echo "$(wc -l <"$jobs_file") harness processes" >>"$W/gpu.txt"

run_job() {
  local dir=$1 env=$2 list=$3
  local tag
  tag=$(echo "$list" | md5sum | cut -c1-8)
  local envs=(TRITON_CACHE_DIR=/tmp/k3a-cache-$dir)
  [ "$env" = mmav2 ] && envs+=(DISABLE_MMA_V3=1)
  # Every process ends by the common deadline, however late it started.
  local left=$((DEADLINE - $(date +%s)))
  if [ "$left" -lt 20 ]; then
    echo "$dir $list not started: deadline" >>"$W/exits.txt"
    return
  fi
  env "${envs[@]}" timeout "$left" $PY kernels/$dir/harness.py --no-timing \
    --variants "$list" --out "$W/$dir-$tag.json" >"$W/$dir-$tag.log" 2>&1
  echo "$dir $list exit $?" >>"$W/exits.txt"
}
export -f run_job
DEADLINE=$((START + LIMIT))
export PY W DEADLINE
xargs -P "$(nproc)" -L 1 bash -c 'run_job "$0" "$1" "$2"' <"$jobs_file"
echo "harness done after $(($(date +%s) - START)) s" >>"$W/gpu.txt"

# The sm120 build's machine code: every cubin the H200 compiled for it.
$PY gpu/sass_scan.py /tmp/k3a-cache-sm120 >"$W/sass-sm120.json" 2>"$W/sass.log"
cat "$W"/*.log >"$OUT/harness.log" 2>/dev/null
$PY lab/port/summary.py --work "$W" --out "$OUT/gpu-check.json" | tee "$OUT/table.txt"
cp "$W/gpu.txt" "$W/exits.txt" "$OUT/" 2>/dev/null
echo "total $(($(date +%s) - START)) s"
