#!/usr/bin/env bash
# lab/ablate: the 64-head pipelined kernel with one part of its tile taken
# out at a time (prepare.py), timed beside the unchanged module (base);
# results wrong by design, so nothing is checked. Run from the repository
# root after prepare.py, carrying lab/ablate/{base,nodq,nogather,noqk,nomax,nopv}
# (git-ignored):
V=pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1 BATCHES=64,128 CHECK=0 \
  exec bash "$(dirname "$0")/../abtest.sh" ablate lab/ablate base nodq nogather noqk nomax nopv
