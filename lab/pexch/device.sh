#!/usr/bin/env bash
# lab/pexch: base, x1 and x2 (prepare.py) at 64 heads, B 16, 64, 128, topk
# 512 and 2048, the 64-head configurations the sm_120 tables pick there and
# a 16-head one (x1 changes how every pipelined kernel stages Q); x1 and x2
# checked first. From the repository root after prepare.py, carrying
# lab/pexch/base, lab/pexch/x1 and lab/pexch/x2 (git-ignored):
V=pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k8_w8_s1,pp_h16_t64_k2_w8_s1 HEADS=64 \
  exec bash "$(dirname "$0")/../abtest.sh" pexch lab/pexch base x1 x2
