#!/usr/bin/env bash
# lab/regs: the sm_120 module's 16-head pipelined tiles at ptxas's own
# 128 registers (base) against an explicit bound of 255 (r255), at H 16,
# B 64 and 128 (BATCHES), topk 512 and 2048, the configurations its 16-head table
# picks; r255 checked first. From the repository root after prepare.py,
# carrying lab/regs/base and lab/regs/r255 (git-ignored):
V=pp_h16_t64_k2_w8_s1,pp_h16_t64_k8_w8_s1,pp_h16_t64_k16_w8_s1 HEADS=16 BATCHES=${BATCHES:-64,128} \
  exec bash "$(dirname "$0")/../abtest.sh" regs lab/regs base r255
