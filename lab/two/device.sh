#!/usr/bin/env bash
# lab/two: the narrow 16-head kernel at two programs an SM (copy p2: one K
# buffer, 4 producer warps, launch bound 128) against the shipped narrow
# configurations (copy base), per cache at H 16, B 16, 64, 128, topk 512
# and 2048. After `python3 lab/two/prepare.py`, from the repository root,
# carrying lab/two/base and lab/two/p2:
#   bash lab/two/device.sh     # $OUT/p2.tar.gz, short table last
# (The run in results/ came from this folder's own copy of these steps,
# with 240 and 120 s limits and lab/two/summary.py's layout of the table.)
LAB=lab/two OTHER=p2 OTHER_STAGES=1 WHOLE=0 exec bash lab/narrowab.sh
