#!/usr/bin/env bash
# lab/rs120's second call, for when rs is slower than predicted: rs against
# its three timing-only copies, each with one partition's work taken out
# (rsnv: the value group's P.V and rescale; rsns: the score group's MMAs
# and their operand reads; rsnp: the producer's rows, dequantisation and
# stores), through lab/abtest.sh: per cache at H 64, B 16, 64 and 128,
# topk 512 and 2048, two passes, each copy's time over rs's. Results are
# wrong by design, so nothing is checked. From the repository root, after
# `python3 lab/rs120/prepare.py`, carrying lab/rs120/{rs,rsnv,rsns,rsnp}:
#   OUT=$OUT bash lab/rs120/device-ablate.sh   # $OUT/rs120-ablate.tar.gz
set -u
cd "$(dirname "$0")/../.."
V=pp_h64_t16_k1_w8_s3,pp_h64_t16_k2_w8_s3,pp_h64_t16_k8_w8_s3 CHECK=0 \
  bash lab/abtest.sh rs120-ablate lab/rs120 rs rsnv rsns rsnp
