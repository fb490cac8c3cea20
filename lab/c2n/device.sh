#!/usr/bin/env bash
# lab/c2n: the narrow 16-head kernel with two consumer warp groups (copy
# c2n) against one (copy base, the shipped module: every narrow
# configuration; c2n: those with two K buffers, the only ones it has room
# for), per cache and as the whole call. After `python3 lab/c2n/prepare.py`,
# from the repository root, carrying lab/c2n/base and lab/c2n/c2n:
#   bash lab/c2n/device.sh     # $OUT/c2n.tar.gz, short table last
LAB=lab/c2n OTHER=c2n OTHER_STAGES=2 exec bash lab/narrowab.sh
