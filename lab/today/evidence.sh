#!/usr/bin/env bash
# Issue 26's evidence in one device call on a Hopper GPU (the H200 its
# bars are stated on, or an H100; below): lab/today (the issue-day
# modules beside the shipped ones, both bars), lab/bounds/bench.py (the
# 64-head tile's MMA phase, which lab/bounds/allowance.py reads beside
# lab/today's files), then gpu/shipped.sh (the REPORTs' tables) with
# whatever time is left.
#
# Prepare on the development machine: `python3 lab/today/prepare.py`, then
# gpu/shipped.sh's own steps (its header). Carry lab/today/old-sm90,
# lab/today/old-sm120, .peers-flashmla, gpu/route/work and
# gpu/dispatch/work, and run from the repository root:
#
#   bash lab/today/evidence.sh [SECONDS]
#
# SECONDS (default 560) bounds the whole call; gpu/shipped.sh runs only
# where at least 200 s of it are left, so a short call still gives both
# bars. It runs on a Hopper GPU, an H200 or an H100: the issue-day modules
# run in the same process as the shipped ones, so the bars' ratios come
# from one machine whichever it is (the device tool lends an H100 for a
# call that names nvidia-h200, and counts its timings as reportable with
# the baseline rerun there). On any other GPU, where the sm_90 module
# cannot run, it runs nothing (exit 3); REQUIRE="NAME ..." sets the GPU
# names it accepts, REQUIRE= any. Exit status 0 when both of lab/today's
# runs wrote their results and $OUT/evidence.tar.gz holds them, else 1.
#
# $OUT ends with today.txt, bounds.json, bounds.log, shipped.txt and
# evidence.tar.gz (lab/today's folder and gpu/shipped.sh's).
set -u
cd "$(dirname "$0")/../.."
T=${1:-560}
REQUIRE=${REQUIRE-H100 H200}
OUT=${OUT:-/tmp/mlagen-evidence}
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $name"
ok=${REQUIRE:+no}
for want in $REQUIRE; do
  case "$name" in *"$want"*) ok=yes ;; esac
done
if [ "$ok" = no ]; then
  echo "not one of: $REQUIRE; nothing run (REQUIRE= runs on any GPU)"
  exit 3
fi
mkdir -p "$OUT"
s=$(date +%s)
elapsed() { echo $(( $(date +%s) - s )); }
OUT=$OUT/today bash lab/today/device.sh >"$OUT/today.txt" 2>&1
echo "lab/today exit $? at $(elapsed) s"
# device.sh ends in its table's tee, and the table prints its headings
# with no rows: whether both modules' runs came back is in their files.
rc=0
for m in sm90 sm120; do
  [ -s "$OUT/today/$m.json" ] || { echo "lab/today: no $m.json (see today/$m.log, in evidence.tar.gz below)"; rc=1; }
done
python3 lab/bounds/bench.py "$OUT/bounds.json" >"$OUT/bounds.log" 2>&1
echo "lab/bounds exit $? at $(elapsed) s"
left=$(( T - 15 - $(elapsed) ))
if [ "$left" -ge 200 ]; then
  OUT=$OUT/shipped LIMIT=$left bash gpu/shipped.sh >"$OUT/shipped.txt" 2>&1
  echo "gpu/shipped.sh exit $? at $(elapsed) s (LIMIT $left)"
else
  echo "gpu/shipped.sh not run: $left s left"
fi
tail -n 40 "$OUT/today/summary.txt"
tail -n 20 "$OUT/shipped/summary.txt" 2>/dev/null
# The device tool brings back at most 8 files of $OUT, fewer than the two
# folders hold: keep the four files named above beside one archive of
# the folders, less FlashMLA's 14 MB library (a build product, not a
# result). With no folder to pack, tar refuses and the exit is 1.
dirs=()
for d in today shipped; do [ -d "$OUT/$d" ] && dirs+=("$d"); done
if tar -czf "$OUT/evidence.tar.gz" --exclude='*.so' -C "$OUT" "${dirs[@]}"; then
  for d in "${dirs[@]}"; do rm -rf "${OUT:?}/$d"; done
  echo "packed ${dirs[*]} into $OUT/evidence.tar.gz"
else
  echo "could not pack ${dirs[*]}: left as they are in $OUT"
  rc=1
fi
exit $rc
