#!/usr/bin/env bash
# lab/wsap: lab/wsa's consumer split on head pairs that share each tile by
# st.async (wsap_*), against lab/wsa's unpaired kernel (wsa_*) and the
# shipped ws_* configurations, per cache at H 128 (the pair's barrier bytes
# are read for the per-cache compile only: the whole call places them
# elsewhere, and the launcher refuses it). After lab/pair/prepare.py,
# lab/pairasync/prepare.py and lab/wsap/prepare.py, from the repository
# root, carrying lab/wsap/wsap:
#   bash lab/wsap/device.sh     # $OUT/wsap.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/wsap}
W=/tmp/wsap-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
( b=$W/flashmla-build; mkdir -p "$b"; OUT=$b MAX_JOBS=8 bash .peers-flashmla/build.sh >"$W/flashmla-build.txt" 2>&1 ) &
P=wsap_h64_t64_k1_w4_s2,wsap_h64_t64_k2_w4_s2,wsap_h64_t64_k4_w4_s2,wsap_h64_t64_k8_w4_s2
B=wsa_h64_t64_k1_w4_s2,wsa_h64_t64_k2_w4_s2,wsa_h64_t64_k4_w4_s2,wsa_h64_t64_k8_w4_s2,ws_h64_t64_k1_w8_s2,ws_h64_t64_k2_w8_s2,ws_h64_t64_k4_w8_s2,ws_h64_t64_k8_w8_s2,wsc_h64_t64_k2_w8_s2
H=(env TRITON_CACHE_DIR=/tmp/c-wsap python3 lab/wsap/wsap/harness.py)
T=(--heads 128 --batches 1,16,64,128 --topks 512,2048 --no-whole-call)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg check timeout 200 "${H[@]}" --variants "$P" --no-timing --peers none --out "$W/check.json"
bg warm-p timeout 200 "${H[@]}" --variants "$P" --warm-only --no-check --peers none "${T[@]}"
bg warm-b timeout 200 "${H[@]}" --variants "$B" --warm-only --no-check --peers none "${T[@]}"
wait
log "phase 1 done"; cat "$W/exits.txt"; tail -2 "$W/flashmla-build.txt"
tail -3 "$W/check.log"
if grep -q "check exit 124" "$W/exits.txt"; then
  log "the check hung: no timing"; tar -czf "$OUT/wsap.tar.gz" -C "$W" .; exit 1
fi
export PYTHONPATH=$PWD/.peers-flashmla/src${PYTHONPATH:+:$PYTHONPATH}
timeout 330 "${H[@]}" --variants "$P,$B" --no-check --peers none "${T[@]}" --out "$W/time.json" >"$W/time.log" 2>&1
log "time exit $?"
python3 lab/pair/summary.py "$W" wsap_ | tee "$W/summary.txt"
tar -czf "$OUT/wsap.tar.gz" -C "$W" .
log total
