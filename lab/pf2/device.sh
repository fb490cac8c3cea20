#!/usr/bin/env bash
# lab/pf2: pf2 against base. First the narrow 16-head configurations as
# lab/narrowab.sh runs them (correctness of pf2's, per cache and whole
# call), then the 64-head role-split and cluster-merged configurations per
# cache at H 64 and 128 (B 64, 128; topk 512, 2048) and as the whole call
# at H 64, two passes each copy. After `python3 lab/pf2/prepare.py`, from
# the repository root, carrying lab/pf2/base and lab/pf2/pf2:
#   bash lab/pf2/device.sh     # $OUT/pf2.tar.gz, $OUT/h64.tar.gz, tables last
set -u
OUT=${OUT:-/tmp/pf2}
mkdir -p "$OUT"
V=ws_h64_t64_k1_w8_s2,ws_h64_t64_k2_w8_s2,wsc_h64_t64_k2_w8_s2
W=/tmp/pf2-h64; rm -rf $W; mkdir -p $W
h() { echo env TRITON_CACHE_DIR=/tmp/c-pf2-$1 python3 lab/pf2/$1/harness.py; }
T=(--variants $V --batches 64,128 --topks 512,2048 --peers none)
# The 64-head configurations' checks and both copies' compiles go first,
# beside lab/narrowab.sh's own (which compiles before it times).
(timeout 300 $(h pf2) --variants $V --no-timing --peers none --out $W/check-pf2.json >$W/check.log 2>&1; echo "check exit $?" >>$W/exits.txt) &
for c in base pf2; do
  (timeout 300 $(h $c) "${T[@]}" --heads 64,128 --whole-heads 64 --whole-batches 64,128 --warm-only --no-check >$W/warm-$c.log 2>&1; echo "warm $c exit $?" >>$W/exits.txt) &
done
LAB=lab/pf2 OTHER=pf2 bash lab/narrowab.sh | tail -14
wait
cat $W/exits.txt
for heads in 64 128; do
  mkdir -p $W/h$heads
  WH=(--no-whole-call); [ $heads = 64 ] && WH=(--whole-heads 64 --whole-batches 64,128)
  for rep in 1 2; do
    for c in base pf2; do
      timeout 200 $(h $c) "${T[@]}" --heads $heads "${WH[@]}" --no-check --out $W/h$heads/time-$c-$rep.json >$W/h$heads/time-$c-$rep.log 2>&1
      echo "h$heads $c $rep exit $?"
    done
  done
done
cp $W/check-pf2.json $W/h64/
for heads in 64 128; do echo "== H $heads"; python3 lab/narrowab.py $W/h$heads pf2; done | tee $W/summary.txt
tar -czf "$OUT/h64.tar.gz" -C $W .
