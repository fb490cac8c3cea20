#!/usr/bin/env bash
# lab/pfw's call (seventeenth session): gpu/shipped.sh on the committed
# tree first (SHIPPED=0 skips it), then each copy of lab/pfw against base
# through lab/narrowab.sh (the narrow configurations at KS, per cache and
# as the whole call, with the copy's correctness cases). After
# `python3 lab/pfw/prepare.py` and gpu/shipped.sh's preparation, from the
# repository root, carrying lab/pfw/{base,pfw,pfw2}, .peers-flashmla,
# gpu/route/work and gpu/dispatch/work:
#   bash lab/pfw/device.sh     # $OUT/shipped/, $OUT/<copy>/<copy>.tar.gz
set -u
OUT=${OUT:-/tmp/pfw}
mkdir -p "$OUT"
S=$(date +%s)
if [ "${SHIPPED:-1}" = 1 ]; then
  LIMIT=220 OUT="$OUT/shipped" timeout 240 bash gpu/shipped.sh >"$OUT/shipped.log" 2>&1
  echo "shipped exit $? at $(($(date +%s) - S)) s"
  tail -45 "$OUT/shipped.log"
fi
for c in ${COPIES:-pfw pfw2}; do
  mkdir -p "$OUT/$c"
  LAB=lab/pfw OTHER=$c KS="${KS:-1 2 8}" OUT="$OUT/$c" timeout "${ABLIMIT:-170}" \
    bash lab/narrowab.sh 2>&1 | tail -24
  echo "$c done at $(($(date +%s) - S)) s"
done
