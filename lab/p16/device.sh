#!/usr/bin/env bash
# lab/p16: the narrow 16-head kernel with 16 producer warps (copy p16)
# against 8 (copy base, the shipped module), every narrow configuration,
# per cache and as the whole call. After `python3 lab/p16/prepare.py`, from
# the repository root, carrying lab/p16/base and lab/p16/p16:
#   bash lab/p16/device.sh     # $OUT/p16.tar.gz, short table last
LAB=lab/p16 OTHER=p16 exec bash lab/narrowab.sh
