#!/usr/bin/env bash
# lab/sol: ncu's speed-of-light, compute, memory, occupancy and warp-state
# sections for the shipped sm_90 module's narrow 16-head kernel and its
# 64-head role-split kernel at B 128, topk 2048, split 1 (the third launch
# of each, clocks left as they are). From the repository root:
#   bash lab/sol/device.sh     # $OUT/*.txt
set -u
OUT=${OUT:-/tmp/sol}
mkdir -p "$OUT"
S=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
  --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats)
prof() {
  local name=$1 kernel=$2; shift 2
  timeout 200 ncu --clock-control none -k "regex:$kernel" --launch-skip 2 --launch-count 1 "${S[@]}" \
    python3 gpu/profile.py kernels/sm90/sparse_mla_mma.py "$@" >"$OUT/$name.txt" 2>&1
  echo "$name exit $?"
}
prof narrow-h16 _ws_narrow_kernel 128 2048 16 ws_h16_t64_k1_w4_s2
prof split-h64 _ws_split_kernel 128 2048 64 ws_h64_t64_k1_w8_s2
for f in "$OUT"/*.txt; do
  echo "== $f"
  grep -E "Duration|Memory Throughput|DRAM Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Executed Ipc A|Issue Slots Busy|SM Busy|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Shared Memory Configuration Size|Block Limit|No Eligible|Mem Busy|Max Bandwidth|Mem Pipes Busy" "$f" | head -40
done
# With MORE=1: the memory tables (shared-memory bank conflicts, L1 and L2
# traffic by kind) for the narrow kernel.
if [ "${MORE:-0}" = 1 ]; then
  S=(--section MemoryWorkloadAnalysis_Tables --section MemoryWorkloadAnalysis_Chart --section InstructionStats)
  prof narrow-h16-mem _ws_narrow_kernel 128 2048 16 ws_h16_t64_k1_w4_s2
  grep -iE "bank|shared|wavefront|Sectors|Requests|Hit" "$OUT/narrow-h16-mem.txt" | head -60
fi
