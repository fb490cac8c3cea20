#!/usr/bin/env bash
# lab/stall: where the warps of three shipped kernels wait, instruction by
# instruction (ncu's warp-state sampling over the SASS, clocks left as they
# are), at B 128, topk 2048, split 1, per cache:
#   narrow  the sm_90 module's narrow 16-head kernel (ws_h16_t64_k1_w4_s2)
#   split   the sm_90 module's 64-head role split (ws_h64_t64_k1_w8_s2)
#   pp      the sm_120 module's 64-head pipelined tile on mma.sync
#           (pp_h64_t32_k1_w8_s1, DISABLE_MMA_V3=1)
# From the repository root:   bash lab/stall/device.sh   # $OUT/stall.tar.gz
set -u
OUT=${OUT:-/tmp/stall}
W=$(mktemp -d)
mkdir -p "$OUT"
prof() {
  local name=$1 kernel=$2 module=$3; shift 3
  timeout 240 ncu --clock-control none -k "regex:$kernel" --launch-skip 2 --launch-count 1 \
    --section WarpStateStats --section SourceCounters --section SpeedOfLight \
    --warp-sampling-interval 0 --import-source no -f -o "$W/$name" \
    python3 gpu/profile.py "$module" "$@" >"$W/$name.log" 2>&1
  echo "$name profile exit $?"
  ncu -i "$W/$name.ncu-rep" --page source --csv --print-source sass >"$W/$name-sass.csv" 2>"$W/$name-sass.err"
  echo "$name source page exit $? ($(wc -l <"$W/$name-sass.csv") lines)"
  ncu -i "$W/$name.ncu-rep" --page details >"$W/$name-details.txt" 2>&1
}
prof narrow _ws_narrow_kernel kernels/sm90/sparse_mla_mma.py 128 2048 16 ws_h16_t64_k1_w4_s2
prof split _ws_split_kernel kernels/sm90/sparse_mla_mma.py 128 2048 64 ws_h64_t64_k1_w8_s2
DISABLE_MMA_V3=1 prof pp _pp_decode_kernel kernels/sm120/sparse_mla_mma.py 128 2048 64 pp_h64_t32_k1_w8_s1
rm -f "$W"/*.ncu-rep
tar -C "$W" -czf "$OUT/stall.tar.gz" .
for n in narrow split pp; do
  echo "== $n"
  grep -E "Duration|Warp Cycles Per Issued|No Eligible|Issued Warp" "$W/$n-details.txt" | head -6
  head -c 600 "$W/$n-sass.err"
done
