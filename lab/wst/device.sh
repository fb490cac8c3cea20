#!/usr/bin/env bash
# lab/wst: 16- and 32-head warp-specialised kernels with the heads on the
# wgmma's N side (wst_*), in the copies named by $COPIES (default: p8 s4 pl
# np; prepare.py says what each is), against the shipped sm_90 module's
# configurations (timed in the first copy) at H 16 and 32, per cache and as
# the whole call at H 16, CUDA-graph replay. The harness's correctness
# cases first for $CHECKED (empty: none; the timed shapes are checked as
# well; np's and nc's results are wrong by design). After
# `python3 lab/wst/prepare.py`, from the repository root, carrying
# lab/wst/<copy> for each copy:
#   bash lab/wst/device.sh     # $OUT/wst.tar.gz, short table last
# (The first call, with COPIES="p8 p4", ran an earlier form of this script
# whose correctness phase did not start; its timed shapes were checked.)
set -u
OUT=${OUT:-/tmp/wst}
COPIES=(${COPIES:-p8 s4 pl np})
CHECKED=(${CHECKED-s4 pl})
W=/tmp/wst-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
list() { local out=() h k s; for h in $1; do for k in 1 2 4 8; do for s in $2; do out+=("wst_h${h}_t64_k${k}_w4_s${s}"); done; done; done; local IFS=,; echo "${out[*]}"; }
V=wst_h16_t64_k1_w4_s2,wst_h16_t64_k1_w4_s3,wst_h16_t64_k2_w4_s2,wst_h16_t64_k2_w4_s3,wst_h16_t64_k4_w4_s2,wst_h16_t64_k8_w4_s2,$(list 32 2)
B=ws_h64_t64_k1_w8_s2,ws_h64_t64_k2_w8_s2,ws_h64_t64_k4_w8_s2,ws_h64_t64_k8_w8_s2,wsc_h64_t64_k2_w8_s2,mma_h16_t64_k32_w8_s1
C=wst_h16_t64_k1_w4_s2,wst_h16_t64_k2_w4_s3,wst_h16_t64_k8_w4_s2,wst_h32_t64_k1_w4_s2,wst_h32_t64_k4_w4_s2
T=(--heads 16,32 --batches 1,16,64,128 --topks 512,2048 --whole-heads 16 --whole-batches 1,16,64,128 --peers none)
h() { echo env TRITON_CACHE_DIR=/tmp/c-wst-$1 python3 lab/wst/$1/harness.py; }
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
for c in "${CHECKED[@]}"; do
  bg check-$c timeout 240 $(h $c) --variants "$C" --no-timing --out "$W/check-$c.json"
done
first=1
for c in "${COPIES[@]}"; do
  v=$V; [ $first = 1 ] && v="$V,$B"; first=0
  bg warm-$c timeout 240 $(h $c) --variants "$v" --warm-only --no-check "${T[@]}"
done
wait
log "phase 1 done"; cat "$W/exits.txt"
for c in "${CHECKED[@]}"; do tail -n 2 "$W/check-$c.log"; done
first=1
for c in "${COPIES[@]}"; do
  v=$V; [ $first = 1 ] && v="$V,$B"; first=0
  timeout 130 $(h $c) --variants "$v" --no-check "${T[@]}" --out "$W/time-$c.json" >"$W/time-$c.log" 2>&1
  log "time $c exit $?"
done
python3 lab/wst/summary.py "$W" "${COPIES[@]}" | tee "$W/summary.txt"
tar -czf "$OUT/wst.tar.gz" -C "$W" .
log total
