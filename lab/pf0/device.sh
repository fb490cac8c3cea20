#!/usr/bin/env bash
# lab/pf0: pf0 against base as lab/narrowab.sh runs it (narrow 16-head
# configurations at 1, 2, 4 and 8 splits, their checks, per cache and as
# the whole call). After `python3 lab/pf0/prepare.py`, from the repository
# root, carrying lab/pf0/base and lab/pf0/pf0:
#   OUT=$OUT bash lab/pf0/device.sh     # $OUT/pf0.tar.gz, table last
LAB=lab/pf0 OTHER=pf0 KS="1 2 4 8" bash lab/narrowab.sh
