#!/usr/bin/env bash
# lab/p16: the narrow 16-head kernel with 16 producer warps (copy p16)
# against 8 (copy base, the shipped module), every shipped narrow
# configuration, per cache and as the whole call at H 16, B 16, 64, 128,
# topk (extra cache) 512 and 2048, CUDA-graph replay. The harness's
# correctness cases first for p16's narrow configurations. After
# `python3 lab/p16/prepare.py`, from the repository root, carrying
# lab/p16/base and lab/p16/p16:
#   bash lab/p16/device.sh     # $OUT/p16.tar.gz, short table last
# lab/c2n runs the same call on its own copies (LAB, OTHER, and OTHER_STAGES
# for the other copy's configurations).
set -u
LAB=${LAB:-lab/p16} OTHER=${OTHER:-p16}
OUT=${OUT:-/tmp/$OTHER}
W=/tmp/$OTHER-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  date -u
} | tee "$W/gpu.txt"
configs() { for k in ${KS:-1 2 4 8 16}; do for s in $1; do printf 'ws_h16_t64_k%s_w4_s%s,' $k $s; done; done; }
VB=$(configs "2 3") VO=$(configs "${OTHER_STAGES:-2 3}")
VB=${VB%,} VO=${VO%,}
T=(--heads 16 --batches 16,64,128 --topks 512,2048 --whole-heads 16 --whole-batches 16,64,128 --peers none)
h() { echo env TRITON_CACHE_DIR=/tmp/c-$OTHER-$1 python3 $LAB/$1/harness.py; }
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
[ "${CHECK:-1}" = 1 ] && bg check-$OTHER timeout 300 $(h $OTHER) --variants "$VO" --no-timing --peers none --out "$W/check-$OTHER.json"
bg warm-base timeout 300 $(h base) --variants "$VB" --warm-only --no-check "${T[@]}"
bg warm-$OTHER timeout 300 $(h $OTHER) --variants "$VO" --warm-only --no-check "${T[@]}"
wait
log "phase 1 done"; cat "$W/exits.txt"
for rep in 1 2; do
  for c in base $OTHER; do
    V=$VB; [ $c = $OTHER ] && V=$VO
    timeout 150 $(h $c) --variants "$V" --no-check "${T[@]}" --out "$W/time-$c-$rep.json" >"$W/time-$c-$rep.log" 2>&1
    log "time $c $rep exit $?"
  done
done
python3 lab/p16/summary.py "$W" $OTHER | tee "$W/summary.txt"
tar -czf "$OUT/$OTHER.tar.gz" -C "$W" .
log total
