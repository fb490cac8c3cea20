#!/usr/bin/env bash
# lab/ss120 on the lent GPU: base against the split-store copies (made by
# prepare.py, carried), checked on every harness case, then timed per cache
# at 64 heads, B 16, 64, 128, topk 512 and 2048, splits 1, 2, 8
# (lab/abtest.sh). From the repository root:
#   OUT=$OUT bash lab/ss120/device.sh [COPY...]   # all six unless told
set -u
COPIES=("$@")
[ ${#COPIES[@]} -gt 0 ] || COPIES=(ss0 ss1 ss2 ss0l ss1l ss2l)
bash lab/abtest.sh ss120 lab/ss120 base "${COPIES[@]}"
