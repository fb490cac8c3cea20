#!/usr/bin/env bash
# lab/ppl: ppw (the narrow producer with two tiles in flight as 32-bit
# words) against base, then ppwc (ppw's producer beside lab/c2n's two
# consumer groups; two-buffer configurations only) against base, each as
# lab/narrowab.sh runs it. After `python3 lab/ppl/prepare.py`, from the
# repository root, carrying lab/ppl/base, lab/ppl/ppw and lab/ppl/ppwc:
#   bash lab/ppl/device.sh     # $OUT/ppw.tar.gz and $OUT/ppwc.tar.gz
LAB=lab/ppl OTHER=ppw bash lab/narrowab.sh
LAB=lab/ppl OTHER=ppwc OTHER_STAGES=2 bash lab/narrowab.sh
