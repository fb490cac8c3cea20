#!/usr/bin/env bash
# lab/pplidx: ppwi against base as lab/narrowab.sh runs it, after
# lab/greenctx/lookup.py (the twenty-sixth session's other question, in
# the same call). After `python3 lab/pplidx/prepare.py` and
# `python3 lab/greenctx/prepare.py`, from the repository root, carrying
# lab/pplidx/base, lab/pplidx/ppwi and lab/greenctx/before-sm90:
#   OUT=$OUT bash lab/pplidx/device.sh     # $OUT/lookup.txt, $OUT/ppwi.tar.gz
mkdir -p "${OUT:?}"
timeout 60 python3 lab/greenctx/lookup.py sm90 > "$OUT/lookup.txt" 2>&1
tail -n 9 "$OUT/lookup.txt"
LAB=lab/pplidx OTHER=ppwi bash lab/narrowab.sh
