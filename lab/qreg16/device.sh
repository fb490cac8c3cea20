#!/usr/bin/env bash
# lab/qreg16: the 16-head pipelined tile with Q's first 4, 6 or 8 column
# groups in registers (prepare.py) beside the unchanged module (base):
# correctness and timing of the 16-head configurations at 16 heads. Run
# from the repository root after prepare.py, carrying
# lab/qreg16/{base,q4,q6,q8} (git-ignored). Results in $OUT/qreg16.tar.gz.
V=pp_h16_t64_k1_w8_s1,pp_h16_t64_k2_w8_s1,pp_h16_t64_k8_w8_s1 HEADS=16 \
  exec bash "$(dirname "$0")/../abtest.sh" qreg16 lab/qreg16 base q4 q6 q8
