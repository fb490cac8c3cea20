#!/usr/bin/env bash
# Recreate the module copies device.sh compares (not checked in): q1/ and q2/
# are the sm_120 module of commit bea9791 (the word gather) with Q's first
# one or two column groups kept in registers (q1.patch, q2.patch); v2 is
# that commit's kernels/sm120 itself. From the repository root:
#   bash lab/qreg/prepare.sh
set -eu
cd "$(dirname "$0")"
rm -rf q1 q2 v2
mkdir -p v2
for f in sparse_mla_mma.py harness.py simt_baseline.py; do
  git show bea9791:kernels/sm120/$f >v2/$f
done
for n in 1 2; do
  cp -r v2 q$n
  patch -s --no-backup-if-mismatch q$n/sparse_mla_mma.py <q$n.patch
done
