#!/usr/bin/env bash
# The narrow 16-head A/B call shared by lab/p16, lab/c2n, lab/ppl and
# lab/two: copy OTHER of lab folder LAB against its copy `base` (the
# shipped module), the narrow configurations ws_h16_t64_k{KS}_w4_s{2,3}
# for base and s{OTHER_STAGES} for OTHER (named OTHER_PREFIX_h16_... where
# OTHER_PREFIX is given: wsc for lab/nclus's cluster merges), per cache
# and (unless WHOLE=0) as the whole call at H 16, B 16, 64, 128, topk
# (extra cache) 512 and 2048, CUDA-graph replay. The harness's correctness cases first for OTHER's
# configurations (CHECK=0: none), Triton's caches filled by one process a
# copy, then two timing passes. From the repository root, carrying
# $LAB/base and $LAB/$OTHER:
#   LAB=lab/p16 OTHER=p16 bash lab/narrowab.sh   # $OUT/$OTHER.tar.gz, table last
set -u
LAB=${LAB:?which lab folder} OTHER=${OTHER:?which copy}
source lab/prologue.sh "$OTHER"
configs() { for k in ${KS:-1 2 4 8 16}; do for s in $1; do printf '%s_h16_t64_k%s_w4_s%s,' $2 $k $s; done; done; }
VB=$(configs "2 3" ws) VO=$(configs "${OTHER_STAGES:-2 3}" "${OTHER_PREFIX:-ws}")
VB=${VB%,} VO=${VO%,}
T=(--heads 16 --batches 16,64,128 --topks 512,2048 --peers none)
if [ "${WHOLE:-1}" = 1 ]; then T+=(--whole-heads 16 --whole-batches 16,64,128); else T+=(--no-whole-call); fi
h() { echo env TRITON_CACHE_DIR=/tmp/c-$OTHER-$1 python3 $LAB/$1/harness.py; }
[ "${CHECK:-1}" = 1 ] && bg check-$OTHER timeout 300 $(h $OTHER) --variants "$VO" --no-timing --peers none --out "$W/check-$OTHER.json"
bg warm-base timeout 300 $(h base) --variants "$VB" --warm-only --no-check "${T[@]}"
bg warm-$OTHER timeout 300 $(h $OTHER) --variants "$VO" --warm-only --no-check "${T[@]}"
wait
log "phase 1 done"; cat "$W/exits.txt"
for rep in 1 2; do
  for c in base $OTHER; do
    V=$VB; [ $c = $OTHER ] && V=$VO
    timeout 150 $(h $c) --variants "$V" --no-check "${T[@]}" --out "$W/time-$c-$rep.json" >"$W/time-$c-$rep.log" 2>&1
    log "time $c $rep exit $?"
  done
done
python3 lab/narrowab.py "$W" $OTHER | tee "$W/summary.txt"
tar -czf "$OUT/$OTHER.tar.gz" -C "$W" .
log total
