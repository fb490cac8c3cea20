#!/usr/bin/env bash
# lab/idx2: idx2 against base through lab/wsab.sh, every narrow split (1,
# 2, 4, 8, 16) as run 1 timed them. After `python3 lab/idx2/prepare.py`,
# from the repository root, carrying lab/idx2/base and lab/idx2/idx2:
#   bash lab/idx2/device.sh     # $OUT/idx2.tar.gz, $OUT/h64.tar.gz, tables last
LAB=lab/idx2 OTHER=idx2 KS="1 2 4 8 16" bash lab/wsab.sh
