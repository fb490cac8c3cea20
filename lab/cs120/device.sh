#!/usr/bin/env bash
# lab/cs120 on the lent GPU: the column-split 64-head tile of the shipped
# sm_120 module (pp_h64_t16_k<K>_w8_s<N>, 2 or 3 K slots; CS=DIR/harness.py
# for another copy of the module) checked on every harness case (splits 1 and
# 2), then timed per cache beside the shipped one-partition tile
# (pp_h64_t32_k<K>_w8_s1, same process) at H 64, B 16, 64, 128 (B 1 goes
# to the 16-head tiles), splits 1, 2 and 8 (the tables' at those batches),
# topk 512 and 2048, DISABLE_MMA_V3=1, CUDA-graph replay; last, if time is
# left, the sm_90 module's own selection on the same shapes (its MMA v3
# left on), for the ratio. Every result is written under $OUT as
# it comes, so a call cut short keeps what it finished. From the
# repository root:
#   OUT=$OUT bash lab/cs120/device.sh    # table last
# The column split left the module at d74e1a0 (lab/cs120/NOTES.md, "First
# run"): point CS at a copy of 63d83e3's kernels/sm120 folder
# (git show 63d83e3:kernels/sm120/<file> for sparse_mla_mma.py,
# harness.py and simt_baseline.py), carried to the device.
set -u
source lab/prologue.sh cs120
cp "$W/gpu.txt" "$OUT/"
W=$OUT
CS=${CS:-kernels/sm120/harness.py}
# SPLITS, BATCHES and CHECK narrow the call (the short form:
# SPLITS="1 2" BATCHES=64,128 CHECK=pp_h64_t16_k1_w8_s2,pp_h64_t16_k2_w8_s3;
# CHECK=none leaves the checks to the timed shapes, which the harness
# checks anyway).
SPLITS=${SPLITS:-1 2 8}
# The column split's configurations at those splits that the module holds
# (the budget refuses pp_h64_t16_k1_w8_s3: it spills in the whole call).
V=$(for n in 2 3; do for k in $SPLITS; do echo pp_h64_t16_k${k}_w8_s$n; done; done \
  | grep -xFf <(grep -o '"pp_h64_t16_k[0-9]*_w8_s[23]"' ${CS%/*}/sparse_mla_mma.py | tr -d '"') | paste -sd,)
B=$(for k in $SPLITS; do printf 'pp_h64_t32_k%s_w8_s1,' $k; done | sed 's/,$//')
C=${CHECK:-pp_h64_t16_k1_w8_s2,pp_h64_t16_k2_w8_s2,pp_h64_t16_k2_w8_s3,pp_h64_t16_k8_w8_s3}
P=(--heads 64 --batches "${BATCHES:-16,64,128}" --topks 512,2048 --no-whole-call --peers none)
cs() { env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-cs120 timeout "$@"; }
# One process a configuration: each compiles its own kernels.
for c in $([ "$C" = none ] || echo ${C//,/ }); do
  bg check-$c cs 230 python3 $CS --variants "$c" --no-timing --peers none --out "$W/check-$c.json"
done
for c in ${V//,/ } ${B//,/ }; do
  bg warm-$c cs 230 python3 $CS --variants "$c" --warm-only --no-check "${P[@]}"
done
wait
log "phase 1 done"; cat "$W/exits.txt"; tail -qn 1 "$W"/check-*.log 2>/dev/null
cs 150 python3 $CS --variants "$V,$B" --no-check "${P[@]}" --out "$W/time-cs.json" >"$W/time-cs.log" 2>&1
log "cs timing exit $?"
python3 lab/cs120/table.py "$W" | tee "$W/table.txt"
env TRITON_CACHE_DIR=/tmp/c-cs120-90 timeout 90 python3 kernels/sm90/harness.py --variants selected --no-check "${P[@]}" --out "$W/time-sm90.json" >"$W/time-sm90.log" 2>&1
log "sm90 timing exit $?"
python3 lab/cs120/table.py "$W" | tee "$W/table.txt"
log total
