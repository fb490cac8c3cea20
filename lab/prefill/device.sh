#!/usr/bin/env bash
# lab/prefill's device call: the shipped modules (kernels/sm90 and
# kernels/sm120, as `mlagen patch` installs them) through their own entry
# points (--variants selected) at prefill-sized batches, which SGLang sends
# to mlagen's whole call when the gate is set (docs/sglang.md): HEADS heads
# (a comma list, default 64),
# B 128, 512 and 2048, per cache (topk 512, 2048) and as the whole call
# (window 128 + extra 512, 2048); the timed shapes checked against the
# float64 reference; FlashMLA's decode beside the sm_90 module. From the
# repository root, carrying .peers-flashmla (a built flash_mla/cuda*.so in
# it skips the build):
#   OUT=$OUT bash lab/prefill/device.sh     # $OUT/prefill.tar.gz, table last
set -u
source lab/prologue.sh prefill
OUT=$W/fb MAX_JOBS=8 bash .peers-flashmla/build.sh >"$W/flashmla-build.txt" 2>&1
log "flashmla build exit $?"
export PYTHONPATH=$PWD/.peers-flashmla/src${PYTHONPATH:+:$PYTHONPATH}
H=${HEADS:-64}
A=(--variants selected --no-check --heads "$H" --batches 128,512,2048 --topks 512,2048
  --whole-heads "$H" --whole-batches 128,512,2048 --extra-topks 512,2048)
timeout 280 env TRITON_CACHE_DIR=/tmp/c-prefill-sm90 python3 kernels/sm90/harness.py "${A[@]}" \
  --peers flashmla --out "$W/sm90.json" >"$W/sm90.log" 2>&1
log "sm90 exit $?"
timeout 250 env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-prefill-sm120 python3 kernels/sm120/harness.py "${A[@]}" \
  --peers none --out "$W/sm120.json" >"$W/sm120.log" 2>&1
log "sm120 exit $?"
python3 lab/prefill/summary.py "$W" | tee "$W/summary.txt"
tar -czf "$OUT/prefill.tar.gz" -C "$W" --exclude fb .
log total
