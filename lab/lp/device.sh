#!/usr/bin/env bash
# lab/lp: lp against base through lab/wsab.sh (narrow splits 1, 2 and 8;
# the 64-head configurations at H 64 and 128, whole call included). After
# `python3 lab/lp/prepare.py`, from the repository root, carrying
# lab/lp/base and lab/lp/lp:
#   bash lab/lp/device.sh     # $OUT/lp.tar.gz, $OUT/h64.tar.gz, tables last
LAB=lab/lp OTHER=lp bash lab/wsab.sh
