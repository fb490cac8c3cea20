#!/usr/bin/env bash
# Recreate the module copies the device scripts compare (not checked in):
#   base/  the sm_120 module before the word gather (commit 9ecd197)
#   v2/    the word gather as run 1 and run 2 timed it (commit 9ecd197's
#          harness and baseline beside the module kernels/sm120 held when
#          run 2 ran; its kernels are today's, comments aside)
#   v3/    v2 with the token ids in shared memory and the opaque zero
#          (v3.patch), timed in run 2 and not kept
# From the repository root: bash lab/words/prepare.sh
set -eu
cd "$(dirname "$0")"
rm -rf base v2 v3
mkdir -p base v2 v3
for f in sparse_mla_mma.py harness.py simt_baseline.py; do
  git show 9ecd197:kernels/sm120/$f >base/$f
  cp ../../kernels/sm120/$f v2/$f
  cp ../../kernels/sm120/$f v3/$f
done
patch -s --no-backup-if-mismatch v3/sparse_mla_mma.py <v3.patch
