#!/usr/bin/env bash
# Recreate the module copies device.sh compares (not checked in): base/ is
# commit 5af65b3's sm_120 module (P.V in the scores' layout, 4 warps down
# the heads at BLOCK_H 64); o1/ and o2/ are that module with pv.patch (P.V's
# accumulators in a layout of their own, over at most _PP_PV_WARPS_M warps
# down the heads) and that constant set to 1 or 2. From the repository root:
#   bash lab/pvw/prepare.sh
set -eu
cd "$(dirname "$0")"
rm -rf base o1 o2
mkdir -p base
for f in sparse_mla_mma.py harness.py simt_baseline.py; do
  git show 5af65b3:kernels/sm120/$f >base/$f
done
cp -r base o1
patch -s --no-backup-if-mismatch o1/sparse_mla_mma.py <pv.patch
cp -r o1 o2
sed -i "s/^_PP_PV_WARPS_M = gl.constexpr(1)/_PP_PV_WARPS_M = gl.constexpr(2)/" o2/sparse_mla_mma.py
grep -q "^_PP_PV_WARPS_M = gl.constexpr(2)" o2/sparse_mla_mma.py
