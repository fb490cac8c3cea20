#!/usr/bin/env bash
# lab/pace, second call: p16np (lab/p16's 16 producer warps, no L2
# prefetch) against base as lab/narrowab.sh runs it (checks, per cache and
# whole call), then its producer alone (ncp16np) per cache, no checks.
# After `python3 lab/pace/prepare.py`, from the repository root, carrying
# lab/pace/{base,p16np,ncp16np}:
#   bash lab/pace/device2.sh     # $OUT/p16np.tar.gz, $OUT/ncp16np.tar.gz, tables last
LAB=lab/pace OTHER=p16np bash lab/narrowab.sh | tail -14
LAB=lab/pace OTHER=ncp16np CHECK=0 WHOLE=0 KS="1 2 8" bash lab/narrowab.sh | tail -8
