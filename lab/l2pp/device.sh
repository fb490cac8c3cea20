#!/usr/bin/env bash
# lab/l2pp on the lent GPU (DISABLE_MMA_V3=1): the copy that starts the
# tile after next into L2 (pf) beside HEAD's sm_120 module (base), both
# from prepare.py (git-ignored; carry lab/l2pp/base and lab/l2pp/pf):
# checks of pf on every harness case, then per cache, CUDA-graph replay,
# the faster of two passes, at the tables' split counts: the 64-head tile
# at 64 heads, then the 16-head tile at 16 heads (lab/abtest.sh). From the
# repository root:
#   OUT=$OUT bash lab/l2pp/device.sh      # $OUT/l2pp-h64.tar.gz, l2pp-h16.tar.gz
set -u
V=pp_h64_t32_k8_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k1_w8_s1 HEADS=64 \
  bash "$(dirname "$0")/../abtest.sh" l2pp-h64 lab/l2pp base pf
V=pp_h16_t64_k8_w8_s1,pp_h16_t64_k2_w8_s1,pp_h16_t64_k1_w8_s1 HEADS=16 \
  bash "$(dirname "$0")/../abtest.sh" l2pp-h16 lab/l2pp base pf
