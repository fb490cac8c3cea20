#!/usr/bin/env bash
# lab/psplit: each producer-alone probe (nc, ncnost, ncnofence) against
# base as lab/narrowab.sh runs it, per cache only, no correctness cases
# (the probes' results are wrong by design), splits 1 and 8 (the ones the
# tables pick at B 128 and 16). After `python3 lab/psplit/prepare.py`, from
# the repository root, carrying lab/psplit/{base,nc,ncnost,ncnofence}:
#   bash lab/psplit/device.sh     # $OUT/<probe>.tar.gz, tables last
for p in nc ncnost ncnofence; do
  LAB=lab/psplit OTHER=$p CHECK=0 WHOLE=0 KS="1 8" bash lab/narrowab.sh | tail -8
done
