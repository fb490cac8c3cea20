#!/usr/bin/env bash
# lab/chains: each half's scores summed in 2 (c2) or 4 (c4) independent
# accumulators instead of one, against commit 5af65b3's sm_120 module
# (base). Run from the repository root after prepare.py, carrying
# lab/chains/base, lab/chains/c2 and lab/chains/c4 (git-ignored):
exec bash "$(dirname "$0")/../abtest.sh" chains lab/chains base c2 c4
