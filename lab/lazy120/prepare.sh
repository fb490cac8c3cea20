#!/usr/bin/env bash
# lab/lazy120: the shipped sm_120 module with lazy.patch applied (the
# module as of the commit that added this folder; a later module may need
# the patch redone), with its harness, in ${L:-/tmp/lazy120-module}.
# From the repository root: bash lab/lazy120/prepare.sh
set -eu
L=${L:-/tmp/lazy120-module}
mkdir -p "$L"
cp kernels/sm120/harness.py kernels/sm120/simt_baseline.py "$L/"
patch -s -o "$L/sparse_mla_mma.py" kernels/sm120/sparse_mla_mma.py lab/lazy120/lazy.patch
echo "$L"
