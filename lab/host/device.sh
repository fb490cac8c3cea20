#!/usr/bin/env bash
# lab/host: the whole call's host time by stage on the lent GPU's host,
# the sm_90 module of 8a1e407 (base, carried) against the working tree's.
# From the repository root after prepare.py:
#   bash lab/host/device.sh    # $OUT/host-prof.json, lines per stage
set -u
OUT=${OUT:-/tmp/host}
mkdir -p "$OUT"
TRITON_CACHE_DIR=/tmp/c-host python3 lab/host/prof.py lab/host/base kernels/sm90 2>&1 | tee "$OUT/host-prof.txt"
