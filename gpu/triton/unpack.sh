#!/usr/bin/env bash
# Unpacks the packed Triton release V (gpu/triton/pack.sh) into SITE, for
# PYTHONPATH=SITE. A pack travels to the device as its two halves
# (.part-00, .part-01: gpu/triton/run.sh says why); this joins them first.
# Exit status 2, with what to do, when the pack is missing or broken.
#
#   bash gpu/triton/unpack.sh 3.8.0 /tmp/site
set -u
V=${1:?usage: unpack.sh V SITE}
SITE=${2:?usage: unpack.sh V SITE}
cd "$(dirname "$0")/../.."
P=gpu/triton/pack/triton-$V.tar.xz
[ -e "$P" ] || cat "$P".part-00 "$P".part-01 >"$P" || { rm -f "$P"; echo "no pack for $V (or only half of it): bash gpu/triton/pack.sh $V"; exit 2; }
mkdir -p "$SITE"
tar -xJf "$P" -C "$SITE" || { echo "the pack for $V does not unpack: bash gpu/triton/pack.sh $V"; exit 2; }
