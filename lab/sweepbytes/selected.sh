#!/usr/bin/env bash
# lab/sweepbytes, third call: the sm_86, sm_80 and sm_89 modules as
# committed after the first two calls, through their own entry points
# (--variants selected: select() and select_full() pick), without
# dependent launch (nopdl.py) and with DISABLE_MMA_V3=1: the harness's
# checks, then per cache at H 16 and 64 and the whole call at H 16 and 64,
# batches 1, 16, 64 and 128, topk (extra cache) 512 and 2048, CUDA-graph
# replay. sm_86 and sm_80 got whole-call tables of their own in the first
# call: this runs them on a GPU. From the repository root:
#   OUT=$OUT bash lab/sweepbytes/selected.sh      # $OUT/selected.tar.gz, short table last
set -u
source lab/prologue.sh sweepbytes-sel
export DISABLE_MMA_V3=1
P=(--variants selected --heads 16,64 --batches 1,16,64,128 --topks 512,2048 --peers none)
WC=(--whole-heads 16,64 --whole-batches 1,16,64,128 --extra-topks 512,2048)
# run TARGET SECONDS ARGS...: the target's harness without dependent launch.
run() { timeout "$2" env TRITON_CACHE_DIR=/tmp/c-sweepbytes-$1 python3 gpu/nopdl.py kernels/$1/harness.py "${@:3}"; }
for t in sm86 sm80 sm89; do
  bg warm-$t run $t 200 "${P[@]}" "${WC[@]}" --warm-only --no-check
done
wait
log "phase 1 done"; cat "$W/exits.txt"
for t in sm86 sm80 sm89; do
  run $t 150 "${P[@]}" "${WC[@]}" --out "$W/$t.json" >"$W/$t.log" 2>&1
  log "$t exit $?"
  tail -n 1 "$W/$t.log"
done
python3 lab/sweepbytes/summary.py "$W" | tee "$W/summary.txt"
tar -czf "$OUT/selected.tar.gz" -C "$W" .
log total
