#!/usr/bin/env bash
# lab/qreg: Q's first one (q1) or two (q2) column groups kept in registers
# across the tile loop of the pipelined 64-head kernel, against the shipped
# sm_120 module (v2), DISABLE_MMA_V3=1, same process order; correctness of
# q1 and q2's 64-head configurations. Run from the repository root after
# prepare.sh, carrying lab/qreg/{v2,q1,q2} (git-ignored). Results in
# $OUT/qreg.tar.gz.
exec bash "$(dirname "$0")/../abtest.sh" qreg lab/qreg v2 q1 q2
