#!/usr/bin/env bash
# lab/w16: the 64-head pipelined tile with 16 warps (pp_h64_t32_k*_w16_s1)
# against the shipped 8-warp one (pp_h64_t32_k*_w8_s1, unchanged in every
# copy), per cache at H 64 and as the whole call at H 64, B 16, 64, 128,
# CUDA-graph replay, DISABLE_MMA_V3=1 as for the sm_120 module. Copies
# (prepare.py): w16 (Q all in shared memory: 102,400 B, over sm_120's
# 101,376, so an H200-only probe of the structure) and qd (Q's first group
# in registers: 98,304 B, 24-32 B of spills at 128 registers). The
# harness's correctness cases first for the 16-warp configurations of
# both copies. After `python3 lab/w16/prepare.py`, from the repository
# root, carrying lab/w16/w16 and lab/w16/qd:
#   bash lab/w16/device.sh     # $OUT/w16.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/w16}
W=/tmp/w16-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1 DISABLE_MMA_V3=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
N=pp_h64_t32_k1_w16_s1,pp_h64_t32_k2_w16_s1,pp_h64_t32_k4_w16_s1,pp_h64_t32_k8_w16_s1
V=$N,pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k8_w8_s1
T=(--heads 64 --batches 16,64,128 --topks 512,2048 --whole-heads 64 --whole-batches 16,64,128 --peers none)
h() { echo env TRITON_CACHE_DIR=/tmp/c-w16-$1 python3 lab/w16/$1/harness.py; }
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
for c in w16 qd; do
  [ "${CHECK:-1}" = 1 ] && bg check-$c timeout 200 $(h $c) --variants "$N" --no-timing --peers none --out "$W/check-$c.json"
  bg warm-$c timeout 200 $(h $c) --variants "$V" --warm-only --no-check "${T[@]}"
done
wait
log "phase 1 done"; cat "$W/exits.txt"
for rep in 1 2; do
  for c in w16 qd; do
    timeout 100 $(h $c) --variants "$V" --no-check "${T[@]}" --out "$W/time-$c-$rep.json" >"$W/time-$c-$rep.log" 2>&1
    log "time $c $rep exit $?"
  done
done
python3 lab/w16/summary.py "$W" | tee "$W/summary.txt"
tar -czf "$OUT/w16.tar.gz" -C "$W" .
log total
