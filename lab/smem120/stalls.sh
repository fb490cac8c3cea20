#!/usr/bin/env bash
# lab/smem120: where the warps of the 64-head tiles wait, against the sm_90
# module's. ncu (clocks left as they are), B 128, topk 2048, H 64, per
# cache, the third launch: the sm_120 module's one-partition tile
# pp_h64_t32_k1_w8_s1 (DISABLE_MMA_V3=1: mma.sync) and the sm_90 module's
# choice there, ws_h64_t64_k1_w8_s2 (wgmma); each stall reason as cycles a
# warp spends in it per instruction issued, the tensor and shared pipes'
# activity, warps active. From the repository root:
#   OUT=$OUT bash lab/smem120/stalls.sh    # table last; $OUT/stalls.tgz
# PROFILES replaces the two with others, each NAME:KERNEL:CONFIG:MODULE:MMA
# (MMA v2 to run the module with DISABLE_MMA_V3=1, v3 to leave it), e.g. a
# lab copy's kernel beside the shipped one (lab/ss120):
#   PROFILES="pp:_pp_decode_kernel:pp_h64_t32_k1_w8_s1:lab/ss120/base/sparse_mla_mma.py:v2 \
#     ssc:_ss_decode_kernel:pp_h64_t32_k1_w8_s1:lab/ss120/ssc/sparse_mla_mma.py:v2" \
#     OUT=$OUT bash lab/smem120/stalls.sh
set -u
source lab/prologue.sh stalls
R="barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard math_pipe_throttle membar mio_throttle misc no_instruction not_selected selected short_scoreboard sleeping tex_throttle wait"
M=$(for r in $R; do printf 'smsp__average_warps_issue_stalled_%s_per_issue_active.ratio,' $r; done)
M=${M}sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
prof() {
  local name=$1 kernel=$2 config=$3 module=$4
  timeout 200 ncu --clock-control none -k "regex:$kernel" --launch-skip 2 --launch-count 1 \
    --metrics "$M" -f -o "$W/$name" \
    python3 gpu/profile.py "$module" 128 2048 64 "$config" >"$W/$name.log" 2>&1
  log "$name profile exit $?"
  ncu -i "$W/$name.ncu-rep" --page raw --csv --metrics "$M" >"$W/$name-raw.csv" 2>&1
}
PROFILES=${PROFILES:-pp:_pp_decode_kernel:pp_h64_t32_k1_w8_s1:kernels/sm120/sparse_mla_mma.py:v2 ws:_ws_split_kernel:ws_h64_t64_k1_w8_s2:kernels/sm90/sparse_mla_mma.py:v3}
for p in $PROFILES; do
  IFS=: read -r name kernel config module mma <<<"$p"
  if [ "$mma" = v2 ]; then
    DISABLE_MMA_V3=1 prof "$name" "$kernel" "$config" "$module"
  else
    prof "$name" "$kernel" "$config" "$module"
  fi
done
tar -C "$W" -czf "$OUT/stalls.tgz" --exclude='*.ncu-rep' .
python3 - "$W" $(for p in $PROFILES; do echo "${p%%:*}"; done) <<'PY'
import csv, os, sys
cols = {}
for n in sys.argv[2:]:
    p = os.path.join(sys.argv[1], f"{n}-raw.csv")
    if not os.path.exists(p):
        continue
    rows = list(csv.reader(open(p)))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    cols[n] = dict(zip(rows[head], rows[head + 2]))
names = sorted({k for c in cols.values() for k in c if "__" in k})
print(f"{'metric':72s} " + " ".join(f"{n:>12s}" for n in cols))
for k in names:
    print(f"{k:72s} " + " ".join(f"{cols[n].get(k, ''):>12s}" for n in cols))
PY
log total
