#!/usr/bin/env bash
# Second device call (lab/words/NOTES.md): v3 (words, the token ids in
# shared memory, the opaque zero) against v2 (words only, run 1's kernel),
# both sm_120 modules with DISABLE_MMA_V3=1, beside the sm_90 module.
# Correctness of every pipelined configuration of v3 and of its entry
# points; CUDA-graph timing of every pipelined configuration of both per
# cache at H 16 and 64 (v3 also at 32), B 1-128, topk 512 and 2048.
# Everything lands in $OUT/words2.tar.gz; the short table last.
set -u
OUT=${OUT:-/tmp/words2}
W=/tmp/words2-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
PP=$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"(pp_[a-z0-9_]+)\": Config', open('lab/words/v3/sparse_mla_mma.py').read())))))")
B=(--batches 1,8,16,32,64,128 --topks 512,2048 --no-whole-call --peers none)
V3=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-v3 python3 lab/words/v3/harness.py)
V2=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-v2 python3 lab/words/v2/harness.py)
S90=(env TRITON_CACHE_DIR=/tmp/c-90 python3 kernels/sm90/harness.py --variants selected)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg v3-check "${V3[@]}" --variants "$PP" --no-timing --peers none --out "$W/v3-check.json"
bg v3-check-sel "${V3[@]}" --variants selected --no-timing --peers none --out "$W/v3-check-sel.json"
bg warm-v3 "${V3[@]}" --variants "$PP" --warm-only --no-check --heads 64,32,16 "${B[@]}"
bg warm-v2 "${V2[@]}" --variants "$PP" --warm-only --no-check --heads 64,16 "${B[@]}"
bg warm-90 "${S90[@]}" --warm-only --no-check --heads 64,32,16 "${B[@]}"
wait
log "phase 1 done"; cat "$W/exits.txt"
timeout 60 "${S90[@]}" --no-check --heads 64,32,16 "${B[@]}" --out "$W/t90.json" >"$W/t90.log" 2>&1; log "t90 exit $?"
timeout 150 "${V3[@]}" --variants "$PP" --no-check --heads 64,32,16 "${B[@]}" --out "$W/tv3.json" >"$W/tv3.log" 2>&1; log "tv3 exit $?"
timeout 120 "${V2[@]}" --variants "$PP" --no-check --heads 64,16 "${B[@]}" --out "$W/tv2.json" >"$W/tv2.log" 2>&1; log "tv2 exit $?"
python3 lab/words/summary2.py "$W" | tee "$W/summary.txt"
tar -czf "$OUT/words2.tar.gz" -C "$W" .
cp "$W/summary.txt" "$OUT/"
log total
