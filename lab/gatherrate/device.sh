#!/usr/bin/env bash
# lab/gatherrate: gbench.py on the lent GPU (no carry needed). From the
# repository root; the table in $OUT/gbench.txt.
python3 "$(dirname "$0")/gbench.py" | tee "${OUT:-/tmp}/gbench.txt"
