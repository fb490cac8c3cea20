#!/usr/bin/env bash
# lab/pvw: P.V's accumulators over at most 1 (o1) or 2 (o2) warps down the
# heads, the scores keeping 4, against commit 5af65b3's sm_120 module
# (base). Run from the repository root after prepare.py, carrying
# lab/pvw/base, lab/pvw/o1 and lab/pvw/o2 (git-ignored) to the device:
exec bash "$(dirname "$0")/../abtest.sh" pvw lab/pvw base o1 o2
