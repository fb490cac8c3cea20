#!/usr/bin/env bash
# lab/vpf's call (seventeenth session): copy OTHER (vpf unless told)
# against base, the 64-head role-split configurations
# ws_h64_t64_k{1,2}_w8_s2 (the kernel vpf changes) per cache at H 64 and 128 (B 64, 128; topk 512, 2048) and as
# the whole call at H 64 and 128 (B 64, 128), two passes each copy, after
# OTHER's correctness cases for those configurations (lab/wsab.sh's 64-head
# part). After `python3 lab/vpf/prepare.py`, from the repository root,
# carrying lab/vpf/base and lab/vpf/$OTHER:
#   bash lab/vpf/device.sh     # $OUT/$OTHER.tar.gz, tables last
# HEADS (default "64 128") picks the head counts timed; REVERSE=1 times
# OTHER before base in each pass (the second call: REVERSE=1 HEADS=128).
set -u
LAB=lab/vpf OTHER=${OTHER:-vpf}
OUT=${OUT:-/tmp/vpf}
mkdir -p "$OUT"
V=ws_h64_t64_k1_w8_s2,ws_h64_t64_k2_w8_s2
W=/tmp/$OTHER-h64; rm -rf $W; mkdir -p $W
h() { echo env TRITON_CACHE_DIR=/tmp/c-$OTHER-$1 python3 $LAB/$1/harness.py; }
T=(--variants $V --batches 64,128 --topks 512,2048 --peers none)
S=$(date +%s)
(timeout 150 $(h $OTHER) --variants $V --no-timing --peers none --out $W/check-$OTHER.json >$W/check.log 2>&1; echo "check exit $?" >>$W/exits.txt) &
for c in base $OTHER; do
  (timeout 150 $(h $c) "${T[@]}" --heads 64,128 --whole-heads 64,128 --whole-batches 64,128 --warm-only --no-check >$W/warm-$c.log 2>&1; echo "warm $c exit $?" >>$W/exits.txt) &
done
wait
cat $W/exits.txt; echo "phase 1 $(($(date +%s) - S)) s"
ORDER="base $OTHER"; [ "${REVERSE:-0}" = 1 ] && ORDER="$OTHER base"
for heads in ${HEADS:-64 128}; do
  mkdir -p $W/h$heads
  for rep in 1 2; do
    for c in $ORDER; do
      timeout 60 $(h $c) "${T[@]}" --heads $heads --whole-heads $heads --whole-batches 64,128 --no-check --out $W/h$heads/time-$c-$rep.json >$W/h$heads/time-$c-$rep.log 2>&1
      echo "h$heads $c $rep exit $? at $(($(date +%s) - S)) s"
    done
  done
done
[ -d $W/h64 ] && cp $W/check-$OTHER.json $W/h64/
for heads in ${HEADS:-64 128}; do echo "== H $heads"; python3 lab/narrowab.py $W/h$heads $OTHER; done | tee $W/summary.txt
tar -czf "$OUT/$OTHER.tar.gz" -C $W .
