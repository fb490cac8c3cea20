#!/usr/bin/env bash
# lab/sweepbytes: the modules of the GPUs without griddepcontrol (sm_86,
# whose kernel code sm_80's shares, and sm_89, whose code sm_120's shares)
# timed again for their tables (gpu/selection_inputs.py), on the H200 with
# DISABLE_MMA_V3=1 and without programmatic dependent launch (nopdl.py: the
# modules' own `_pdl` would turn it on for the H200, which those GPUs do not
# have). Their pipelined rows are lab/e4m3's, lab/onesm's and lab/qreg16's,
# from before the bf16 combine ran at 128 registers (lab/creg: 0.93-0.99x
# every 8- and 32-split call); lab/onesm's were timed with the combine
# launched dependently. Timed: every pipelined configuration (pp_*) and the
# tl.dot ones the tables pick at batch 1, per cache at H 16, 32 and 64 and
# as the whole call at H 16 and 64 (sm_86 and sm_80 had no whole-call rows:
# their whole call ran the per-cache table), batches 1, 16, 64 and 128,
# topk (extra cache) 512 and 2048, CUDA-graph replay; sm_80's own
# two-buffer-set 64-head configurations too. Checks of the pipelined ones
# first. From the repository root:
#   OUT=$OUT bash lab/sweepbytes/sweep.sh      # $OUT/sweep.tar.gz
set -u
source lab/prologue.sh sweepbytes
export DISABLE_MMA_V3=1
names() { python3 -c "import re,sys;print(','.join(sorted(set(re.findall(sys.argv[2], open(sys.argv[1]).read())))))" "$@"; }
B1=mma_h16_t16_k32_w4_s1,mma_h16_t32_k32_w4_s1
declare -A V
V[sm86]=$(names kernels/sm86/sparse_mla_mma.py '"(pp_h[0-9]+_[a-z0-9_]+)": Config'),$B1
V[sm89]=$(names kernels/sm89/sparse_mla_mma.py '"(pp_h[0-9]+_[a-z0-9_]+)": Config'),$B1
V[sm80]=$(names kernels/sm80/sparse_mla_mma.py '"(pp_h64_[a-z0-9_]+_s2)": Config')
P=(--heads 16,32,64 --batches 1,16,64,128 --topks 512,2048 --peers none)
WC=(--whole-heads 16,64 --whole-batches 1,16,64,128 --extra-topks 512,2048)
# run TARGET SECONDS ARGS...: the target's harness without dependent launch.
run() { timeout "$2" env TRITON_CACHE_DIR=/tmp/c-sweepbytes-$1 python3 gpu/nopdl.py kernels/$1/harness.py "${@:3}"; }
part() { echo "$1" | tr , '\n' | awk -v k="$2" -v n="$3" 'NR % n == k' | paste -sd, -; }
for t in sm86 sm89 sm80; do
  echo "$t: ${V[$t]}" | tee -a "$W/steps.txt"
  pp=$(echo "${V[$t]}" | tr , '\n' | grep '^pp_' | paste -sd, -)
  bg check-$t run $t 200 --variants "$pp" --no-timing --peers none --out "$W/check-$t.json"
  n=$([ $t = sm80 ] && echo 2 || echo 5)
  for k in $(seq 0 $((n - 1))); do
    bg warm-$t-$k run $t 200 --variants "$(part "${V[$t]}" $k $n)" --warm-only --no-check "${P[@]}" "${WC[@]}"
  done
done
wait
log "phase 1 done"; cat "$W/exits.txt"; for t in sm86 sm89 sm80; do tail -1 "$W/check-$t.log"; done
for t in sm86 sm89 sm80; do
  run $t 120 --variants "${V[$t]}" --no-check "${P[@]}" --no-whole-call --out "$W/time-$t.json" >"$W/time-$t.log" 2>&1
  log "$t per cache exit $?"
  run $t 100 --variants "${V[$t]}" --no-check --heads 16 --batches 1 --topks 512 "${WC[@]}" --out "$W/whole-$t.json" >"$W/whole-$t.log" 2>&1
  log "$t whole call exit $?"
done
tar -czf "$OUT/sweep.tar.gz" -C "$W" .
log total
