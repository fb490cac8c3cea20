#!/usr/bin/env bash
# lab/vote on the lent GPU (NOTES.md), DISABLE_MMA_V3=1, per cache, B 16,
# 64, 128, topk 512 and 2048, the tables' split counts (1, 2, 8) at each:
#   64 heads: the shipped sm_120 module (base), its 64-head tile with the
#     stale maximum alone (slack), and with one warp vote a tile skipping
#     the rescale where no row of the warp moved (vote1);
#   16 heads: base and vote1;
# checks of each copy but base on every harness case. After
# `python3 lab/vote/prepare.py`, from the repository root, carrying
# lab/vote/base, lab/vote/slack and lab/vote/vote1:
#   OUT=$OUT bash lab/vote/device.sh   # $OUT/vote64.tar.gz, vote16.tar.gz
V=pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k8_w8_s1 \
  bash lab/abtest.sh vote64 lab/vote base slack vote1 | tail -22
V=pp_h16_t64_k1_w8_s1,pp_h16_t64_k2_w8_s1,pp_h16_t64_k8_w8_s1 HEADS=16 \
  bash lab/abtest.sh vote16 lab/vote base vote1 | tail -22
