#!/usr/bin/env bash
# lab/f16, third call: base against h16q2 and h16q0 (prepare.py) at 16
# heads, the 16-head pipelined configurations the sm_120 tables pick from
# B 16; both checked first. From the repository root after prepare.py,
# carrying lab/f16/base, lab/f16/h16q2 and lab/f16/h16q0 (git-ignored).
V=pp_h16_t64_k1_w8_s1,pp_h16_t64_k2_w8_s1,pp_h16_t64_k8_w8_s1 HEADS=16 \
  exec bash "$(dirname "$0")/../abtest.sh" h16 lab/f16 base h16q2 h16q0
