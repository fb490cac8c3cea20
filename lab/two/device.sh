#!/usr/bin/env bash
# lab/two: the narrow 16-head kernel at two programs an SM (copy p2: one K
# buffer, 4 producer warps, launch bound 128) against the shipped narrow
# configurations (copy base: two or three K buffers, 8 producer warps, one
# program an SM), per cache at H 16, B 16, 64, 128, topk 512 and 2048,
# CUDA-graph replay. The harness's correctness cases first for p2's
# configurations. After `python3 lab/two/prepare.py`, from the repository
# root, carrying lab/two/base and lab/two/p2:
#   bash lab/two/device.sh     # $OUT/two.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/two}
W=/tmp/two-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  date -u
} | tee "$W/gpu.txt"
KS="1 2 4 8 16"
VB=$(for k in $KS; do for s in 2 3; do printf 'ws_h16_t64_k%s_w4_s%s,' $k $s; done; done)
VP=$(for k in $KS; do printf 'ws_h16_t64_k%s_w4_s1,' $k; done)
VB=${VB%,} VP=${VP%,}
T=(--heads 16 --batches 16,64,128 --topks 512,2048 --no-whole-call --peers none)
h() { echo env TRITON_CACHE_DIR=/tmp/c-two-$1 python3 lab/two/$1/harness.py; }
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
[ "${CHECK:-1}" = 1 ] && bg check-p2 timeout 240 $(h p2) --variants "$VP" --no-timing --peers none --out "$W/check-p2.json"
bg warm-base timeout 240 $(h base) --variants "$VB" --warm-only --no-check "${T[@]}"
bg warm-p2 timeout 240 $(h p2) --variants "$VP" --warm-only --no-check "${T[@]}"
wait
log "phase 1 done"; cat "$W/exits.txt"
for rep in 1 2; do
  timeout 120 $(h base) --variants "$VB" --no-check "${T[@]}" --out "$W/time-base-$rep.json" >"$W/time-base-$rep.log" 2>&1
  log "time base $rep exit $?"
  timeout 120 $(h p2) --variants "$VP" --no-check "${T[@]}" --out "$W/time-p2-$rep.json" >"$W/time-p2-$rep.log" 2>&1
  log "time p2 $rep exit $?"
done
python3 lab/two/summary.py "$W" | tee "$W/summary.txt"
tar -czf "$OUT/two.tar.gz" -C "$W" .
cat "$W/summary.txt" | tail -n 30
