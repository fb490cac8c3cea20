#!/usr/bin/env bash
# lab/sweepbytes, second call: every other tl.dot configuration of the
# sm_86, sm_89 and sm_80 modules at batch 1, the one batch where the tables
# pick tl.dot kernels, without dependent launch (nopdl.py), so the batch-1
# buckets compare rows timed alike: sweep.sh re-timed the pipelined
# configurations and the two batch-1 picks, and sm_80's table then took a
# tl.dot configuration whose row (lab/e4m3's) was timed with the combine
# launched dependently. Per cache at H 16, 32 and 64 and as the whole call
# at H 16 and 64, topk (extra cache) 512 and 2048, CUDA-graph replay. The
# tl.dot kernels did not change since lab/e4m3's checks. From the
# repository root:
#   OUT=$OUT bash lab/sweepbytes/batch1.sh      # $OUT/batch1.tar.gz
set -u
source lab/prologue.sh sweepbytes-b1
export DISABLE_MMA_V3=1
names() { python3 -c "import re,sys;print(','.join(sorted(set(re.findall(sys.argv[2], open(sys.argv[1]).read())) - set(sys.argv[3].split(',')))))" "$@"; }
PICKED=mma_h16_t16_k32_w4_s1,mma_h16_t32_k32_w4_s1
declare -A V
V[sm86]=$(names kernels/sm86/sparse_mla_mma.py '"(mma_[a-z0-9_]+)": Config' $PICKED)
V[sm89]=$(names kernels/sm89/sparse_mla_mma.py '"(mma_[a-z0-9_]+)": Config' $PICKED)
V[sm80]=$(names kernels/sm80/sparse_mla_mma.py '"(mma_h16_t32_[a-z0-9_]+_s2)": Config' $PICKED)
P=(--heads 16,32,64 --batches 1 --topks 512,2048 --peers none --no-check)
WC=(--whole-heads 16,64 --whole-batches 1 --extra-topks 512,2048)
# run TARGET SECONDS ARGS...: the target's harness without dependent launch.
run() { timeout "$2" env TRITON_CACHE_DIR=/tmp/c-sweepbytes-$1 python3 gpu/nopdl.py kernels/$1/harness.py "${@:3}"; }
part() { echo "$1" | tr , '\n' | awk -v k="$2" -v n="$3" 'NR % n == k' | paste -sd, -; }
for t in sm86 sm89 sm80; do
  echo "$t: ${V[$t]}" | tee -a "$W/steps.txt"
  n=$([ $t = sm80 ] && echo 2 || echo 6)
  for k in $(seq 0 $((n - 1))); do
    bg warm-$t-$k run $t 200 --variants "$(part "${V[$t]}" $k $n)" --warm-only "${P[@]}" "${WC[@]}"
  done
done
wait
log "phase 1 done"; cat "$W/exits.txt"
for t in sm86 sm89 sm80; do
  run $t 120 --variants "${V[$t]}" "${P[@]}" --no-whole-call --out "$W/time-$t.json" >"$W/time-$t.log" 2>&1
  log "$t per cache exit $?"
  run $t 100 --variants "${V[$t]}" --heads 16 --batches 1 --topks 512 --peers none --no-check "${WC[@]}" --out "$W/whole-$t.json" >"$W/whole-$t.log" 2>&1
  log "$t whole call exit $?"
done
tar -czf "$OUT/batch1.tar.gz" -C "$W" .
log total
