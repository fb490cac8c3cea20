#!/usr/bin/env bash
# lab/deep: the pipelined kernel's one-set loop with each tile's raw bytes
# loaded two (d2) or three (d3) tiles ahead of their store instead of one
# (prepare.py), beside the unchanged module (base): correctness and timing
# of the 16-head configurations at 16 heads, then the 64-head ones at 64
# heads (d2 only: d3 spills there). Run from the repository root after
# prepare.py, carrying lab/deep/{base,d2,d3} (git-ignored). Results in
# $OUT/deep16.tar.gz and $OUT/deep64.tar.gz.
here=$(dirname "$0")
V=pp_h16_t64_k1_w8_s1,pp_h16_t64_k2_w8_s1,pp_h16_t64_k8_w8_s1 HEADS=16 \
  bash "$here/../abtest.sh" deep16 lab/deep base d2 d3
V=pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k8_w8_s1 HEADS=64 \
  bash "$here/../abtest.sh" deep64 lab/deep base d2
