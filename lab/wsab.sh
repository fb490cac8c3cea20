#!/usr/bin/env bash
# The sm_90 warp-specialised A/B shared by lab/idx2 and lab/lp (lab/pf2's
# call): copy OTHER of lab folder LAB against its copy `base`. First the
# narrow 16-head configurations as lab/narrowab.sh runs them (KS, default
# "1 2 8"; correctness of OTHER's, per cache and whole call), then the
# 64-head role-split and cluster-merged configurations per cache at H 64
# and 128 (B 64, 128; topk 512, 2048) and as the whole call at H 64 and
# (unless H128_WHOLE=0) 128, two passes each copy. From the repository
# root, carrying $LAB/base and $LAB/$OTHER:
#   LAB=lab/lp OTHER=lp bash lab/wsab.sh   # $OUT/$OTHER.tar.gz, $OUT/h64.tar.gz, tables last
set -u
LAB=${LAB:?which lab folder} OTHER=${OTHER:?which copy}
OUT=${OUT:-/tmp/$OTHER}
mkdir -p "$OUT"
V=ws_h64_t64_k1_w8_s2,ws_h64_t64_k2_w8_s2,wsc_h64_t64_k2_w8_s2
W=/tmp/$OTHER-h64; rm -rf $W; mkdir -p $W
WHOLE_HEADS=64,128; [ "${H128_WHOLE:-1}" = 1 ] || WHOLE_HEADS=64
h() { echo env TRITON_CACHE_DIR=/tmp/c-$OTHER-$1 python3 $LAB/$1/harness.py; }
T=(--variants $V --batches 64,128 --topks 512,2048 --peers none)
# The 64-head configurations' checks and both copies' compiles go first,
# beside lab/narrowab.sh's own (which compiles before it times).
(timeout 300 $(h $OTHER) --variants $V --no-timing --peers none --out $W/check-$OTHER.json >$W/check.log 2>&1; echo "check exit $?" >>$W/exits.txt) &
for c in base $OTHER; do
  (timeout 300 $(h $c) "${T[@]}" --heads 64,128 --whole-heads $WHOLE_HEADS --whole-batches 64,128 --warm-only --no-check >$W/warm-$c.log 2>&1; echo "warm $c exit $?" >>$W/exits.txt) &
done
LAB=$LAB OTHER=$OTHER KS="${KS:-1 2 8}" OUT=$OUT bash lab/narrowab.sh | tail -14
wait
cat $W/exits.txt
for heads in 64 128; do
  mkdir -p $W/h$heads
  WH=(--whole-heads $heads --whole-batches 64,128)
  [ $heads = 128 ] && [ "${H128_WHOLE:-1}" != 1 ] && WH=(--no-whole-call)
  for rep in 1 2; do
    for c in base $OTHER; do
      timeout 200 $(h $c) "${T[@]}" --heads $heads "${WH[@]}" --no-check --out $W/h$heads/time-$c-$rep.json >$W/h$heads/time-$c-$rep.log 2>&1
      echo "h$heads $c $rep exit $?"
    done
  done
done
cp $W/check-$OTHER.json $W/h64/
for heads in 64 128; do echo "== H $heads"; python3 lab/narrowab.py $W/h$heads $OTHER; done | tee $W/summary.txt
tar -czf "$OUT/h64.tar.gz" -C $W .
