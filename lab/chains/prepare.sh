#!/usr/bin/env bash
# Recreate the module copies device.sh compares (not checked in): base/ is
# commit 5af65b3's sm_120 module (each half's scores in one accumulator:
# one chain of 32 dependent MMAs); c2/ and c4/ are that module with
# chains.patch (_pp_scores_halves, over _PP_SCORE_CHAINS accumulators a
# half) and that constant at 2 and 4. From the repository root:
#   bash lab/chains/prepare.sh
set -eu
cd "$(dirname "$0")"
rm -rf base c2 c4
mkdir -p base
for f in sparse_mla_mma.py harness.py simt_baseline.py; do
  git show 5af65b3:kernels/sm120/$f >base/$f
done
cp -r base c2
patch -s --no-backup-if-mismatch c2/sparse_mla_mma.py <chains.patch
cp -r c2 c4
sed -i "s/^_PP_SCORE_CHAINS = gl.constexpr(2)/_PP_SCORE_CHAINS = gl.constexpr(4)/" c4/sparse_mla_mma.py
grep -q "^_PP_SCORE_CHAINS = gl.constexpr(4)" c4/sparse_mla_mma.py
