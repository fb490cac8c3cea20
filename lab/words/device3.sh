#!/usr/bin/env bash
# Third device call (lab/words/NOTES.md): the shipped modules after the word
# gather and the new sm_120 selection, through gpu/shipped.sh (checks,
# route, dispatch, per-cache and whole-call timing beside FlashMLA), then
# ncu's per-instruction stall samples of the sm_120 module's pp_h64_t32_k1
# at H 64, B 128, topk 2048 (DISABLE_MMA_V3=1): what limits the family.
# Prepare as gpu/shipped.sh says; from the repository root:
#   bash lab/words/device3.sh
set -u
OUT=${OUT:-/tmp/words3}
mkdir -p "$OUT"
LIMIT=${LIMIT:-400} OUT=$OUT bash gpu/shipped.sh
csv=$OUT/ncu-pp-h64-b128-k2048.csv
env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/mlagen-cache-sm120 timeout 150 \
  ncu --clock-control none -k regex:_pp_decode_kernel --launch-skip 2 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
  python3 gpu/profile.py kernels/sm120/sparse_mla_mma.py 128 2048 >"$csv" 2>"$OUT/ncu.err"
echo "ncu exit $?"
python3 gpu/ncu_source_summary.py "$csv" 65536:loop 1024:once | tee "$OUT/ncu-summary.txt"
gzip -f "$csv"
