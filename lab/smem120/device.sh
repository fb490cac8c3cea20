#!/usr/bin/env bash
# lab/smem120: is the sm_120 64-head tile held by shared-memory throughput?
# ncu counters (clocks left as they are) for the shipped sm_120 module's
# one-partition tile pp_h64_t32_k1_w8_s1 and its role split
# pp_h64_t16_k1_w16_s3 (and, with CS=FILE naming 63d83e3's module, its
# column split pp_h64_t16_k1_w8_s2 and pp_h64_t16_k2_w8_s3, since taken
# out: lab/cs120/NOTES.md; the device has no git, so write FILE here with
# git show 63d83e3:kernels/sm120/sparse_mla_mma.py and carry it), on the
# lent GPU with DISABLE_MMA_V3=1, B 128, topk 2048, H 64, per cache, the
# third launch: shared-memory wavefronts
# (loads, stores, ldmatrix) and bank conflicts against the pipe's peak,
# the tensor pipe's activity, issue slots. From the repository root:
#   OUT=$OUT bash lab/smem120/device.sh     # table last; $OUT/smem120.tgz
set -u
source lab/prologue.sh smem120
export DISABLE_MMA_V3=1
M=l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_tensor_op_hmma.sum,smsp__issue_active.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg,gpu__time_duration.sum,smsp__inst_executed_op_ldsm.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
prof() {
  local name=$1 kernel=$2 config=$3 module=${4:-kernels/sm120/sparse_mla_mma.py}
  timeout 200 ncu --clock-control none -k "regex:$kernel" --launch-skip 2 --launch-count 1 \
    --metrics "$M" --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables \
    --section ComputeWorkloadAnalysis --section WarpStateStats -f -o "$W/$name" \
    python3 gpu/profile.py "$module" 128 2048 64 "$config" >"$W/$name.log" 2>&1
  log "$name profile exit $?"
  ncu -i "$W/$name.ncu-rep" --page raw --csv --metrics "$M" >"$W/$name-raw.csv" 2>&1
  ncu -i "$W/$name.ncu-rep" --page details >"$W/$name-details.txt" 2>&1
}
prof pp _pp_decode_kernel pp_h64_t32_k1_w8_s1
prof rs _rs_decode_kernel pp_h64_t16_k1_w16_s3
if [ -n "${CS:-}" ]; then
  prof cs2 _cs_decode_kernel pp_h64_t16_k1_w8_s2 "$CS"
  prof cs3 _cs_decode_kernel pp_h64_t16_k2_w8_s3 "$CS"
fi
tar -C "$W" -czf "$OUT/smem120.tgz" --exclude='*.ncu-rep' .
for n in pp rs cs2 cs3; do
  [ -f "$W/$n-raw.csv" ] || continue
  echo "== $n"
  python3 - "$W/$n-raw.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
names, units, vals = rows[head], rows[head + 1], rows[head + 2]
for n, u, v in zip(names, units, vals):
    if "__" in n:
        print(f"{n:70s} {v:>16s} {u}")
PY
  grep -E "Bank|Shared|Duration|Warp Cycles Per Issued|Stall" "$W/$n-details.txt" | head -30
done
log total
