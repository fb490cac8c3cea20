#!/usr/bin/env bash
# lab/relfit: one device call. Under the GPU's Triton 3.6.0 (BASE=1, the
# default) and under a packed release V (gpu/triton/pack.sh, carried in
# two halves as gpu/triton/run.sh says), with DISABLE_MMA_V3=1:
#   * q5 against base: the 16-head pipelined tile at the split counts the
#     table picks (1, 2, 8), per cache at 16 heads and as the whole call,
#     B 16, 64, 128 (q5's checks first);
#   * the batch-1 candidates of base, per cache at 64 and 16 heads and as
#     the whole call.
# Each (copy, Triton) warms its own cache first; then two timing passes,
# one process at a time; the faster per shape. BASE=0 leaves 3.6.0 out.
# From the repository root,
# after `python3 lab/relfit/prepare.py`, carrying lab/relfit/base,
# lab/relfit/q5 and the pack's second half:
#   V=3.8.0 OUT=$OUT bash lab/relfit/device.sh     # $OUT/relfit-$V.tar.gz
set -u
cd "$(dirname "$0")/../.."
V=${V:?set V to the packed Triton release}
OUT=${OUT:-/tmp/relfit}
BASE=${BASE:-1}
W=/tmp/relfit-work
rm -rf "$W"
mkdir -p "$OUT" "$W/res" "$W/site"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/res/steps.txt"; }
bash gpu/triton/unpack.sh "$V" "$W/site" || exit 2
PYTHONPATH=$W/site python3 -c 'import triton; print("pack triton", triton.__version__)' | tee "$W/res/gpu.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$W/res/gpu.txt"
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' >>"$W/res/gpu.txt"

TRITONS=("$V")
[ "$BASE" = 1 ] && TRITONS=(base "$V")
AB=pp_h16_t64_k1_w8_s1,pp_h16_t64_k2_w8_s1,pp_h16_t64_k8_w8_s1
B1=mma_h16_t32_k16_w4_s1,mma_h16_t32_k32_w4_s1,mma_h16_t32_k32_w8_s1,mma_h16_t16_k32_w4_s1,mma_h16_t16_k16_w4_s1,pp_h16_t64_k32_w8_s1,pp_h16_t64_k16_w8_s1
ABSHAPES=(--heads 16 --batches 16,64,128 --topks 512,2048 --whole-heads 16 --whole-batches 16,64,128 --peers none)
B1SHAPES=(--heads 64,16 --batches 1 --topks 512,2048 --whole-heads 64,16 --whole-batches 1 --peers none)
run() { # run COPY TRITON ARGS...
  local site=()
  [ "$2" = base ] || site=(PYTHONPATH="$W/site")
  env "${site[@]}" DISABLE_MMA_V3=1 TRITON_CACHE_DIR="/tmp/relfit-cache-$1-$2" \
    python3 "lab/relfit/$1/harness.py" "${@:3}"
}
pids=()
for t in "${TRITONS[@]}"; do
  (run q5 "$t" --variants "$AB" --no-timing --out "$W/res/check-q5-$t.json" >"$W/res/check-q5-$t.log" 2>&1; echo "check-q5-$t exit $?" >>"$W/res/exits.txt") &
  pids+=($!)
  for c in base q5; do
    (run $c "$t" --variants "$AB" --warm-only --no-check "${ABSHAPES[@]}" >"$W/res/warm-$c-$t.log" 2>&1) &
    pids+=($!)
  done
  (run base "$t" --variants "$B1" --warm-only --no-check "${B1SHAPES[@]}" >"$W/res/warm-b1-$t.log" 2>&1) &
  pids+=($!)
done
wait "${pids[@]}"
log "warm and checks done"
for rep in 1 2; do
  for t in "${TRITONS[@]}"; do
    for c in base q5; do
      timeout 90 bash -c "$(declare -f run); W=$W; run $c $t --variants $AB --no-check ${ABSHAPES[*]} --out $W/res/ab-$c-$t-$rep.json" >"$W/res/ab-$c-$t-$rep.log" 2>&1
      echo "ab-$c-$t-$rep exit $?" >>"$W/res/exits.txt"
    done
    timeout 120 bash -c "$(declare -f run); W=$W; run base $t --variants $B1 --no-check ${B1SHAPES[*]} --out $W/res/b1-$t-$rep.json" >"$W/res/b1-$t-$rep.log" 2>&1
    echo "b1-$t-$rep exit $?" >>"$W/res/exits.txt"
    log "pass $rep under $t done"
  done
done
python3 lab/relfit/table.py "$W/res" >"$W/res/summary.txt" 2>&1
cp "$W/res/summary.txt" "$OUT/summary-$V.txt"
tar -czf "$OUT/relfit-$V.tar.gz" -C "$W" res
log total
cat "$W/res/summary.txt"
