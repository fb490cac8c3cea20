#!/usr/bin/env bash
# lab/pace: each producer-alone probe (nc, ncp16, ncppw) against base as
# lab/narrowab.sh runs it, per cache only, no correctness cases (the
# probes' results are wrong by design), splits 1, 2 and 8 (the ones the
# tables pick at B 128, 64 and 16). After `python3 lab/pace/prepare.py`,
# from the repository root, carrying lab/pace/{base,nc,ncp16,ncppw}:
#   bash lab/pace/device.sh     # $OUT/<probe>.tar.gz, tables last
for p in nc ncp16 ncppw; do
  LAB=lab/pace OTHER=$p CHECK=0 WHOLE=0 KS="1 2 8" bash lab/narrowab.sh | tail -8
done
