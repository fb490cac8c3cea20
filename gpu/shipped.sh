#!/usr/bin/env bash
# One device call: the shipped modules as SGLang calls them, on the lent GPU.
#
#   kernels/sm90   the module `mlagen patch --target sm_90` installs
#   kernels/sm120  the module `mlagen patch --target sm_120` installs, built
#                  with DISABLE_MMA_V3=1 (mma.sync, as on an sm_120 card)
#
# Each module's harness runs with --variants selected: its own entry points
# and static selections, nothing else. Phase 1, in parallel: FlashMLA's
# build (the peer, from the kit carried in .peers-flashmla), every
# harness's correctness section (real results), the route check of a
# patched SGLang release (gpu/route) and the whole-call dispatch check of
# the patched stand-in tree (gpu/dispatch), and warm-only harness processes
# that compile every kernel the timing will meet (Triton's on-disk cache).
# Phase 2, one process at a time: the timings (per cache at H 64 and 16;
# the whole call, window 128 + extra 512 and 2048, at H 64, 128 and 16 for
# sm_90 beside FlashMLA and SGLang's own Triton path, at H 64 and 16 for
# sm_120), then the split counts the entry points fit to the GPU between
# the tables' batches (gpu/splits.py). Then the SASS of the sm_120 build,
# and the short table.
#
# Prepare on the development machine, then run on the device from the
# repository root (carry .peers-flashmla, gpu/route/work, gpu/dispatch/work):
#
#   bash gpu/route/prepare.sh
#   for t in sm90:sm_90 sm120:sm_120; do rm -rf gpu/dispatch/work/${t%%:*}; \
#     mkdir -p gpu/dispatch/work; cp -r gpu/dispatch/tree gpu/dispatch/work/${t%%:*}; \
#     bin/mlagen patch --target ${t##*:} gpu/dispatch/work/${t%%:*}; done
#   cp -r ../shared/peers/flashmla .peers-flashmla   # the FlashMLA kit (not ours)
#   bash gpu/shipped.sh
#
# $OUT gets summary.txt, results.tar.gz and FlashMLA's library: three
# files, within the eight a device call brings back. The archive holds
# every JSON and log (the route and dispatch logs, FlashMLA's build log)
# and calib/code-sm90.txt and code-sm120.txt: the machine code of the
# kernels timed, as the calibration compiles them, so that a later tree's
# files say whether these figures are of its code.
# LIMIT (s, default 540) bounds the whole script.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/mlagen-shipped}
LIMIT=${LIMIT:-540}
W=/tmp/mlagen-shipped-work
rm -rf "$W"
mkdir -p "$OUT" "$W/res"
export PYTHONUNBUFFERED=1
START=$(date +%s)
left() { echo $((LIMIT - ($(date +%s) - START))); }
# at_least N T: T, or N where T is smaller (timeout 0 would mean no limit).
at_least() { echo $(($2 < $1 ? $1 : $2)); }
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/res/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  nproc
} >"$W/res/gpu.txt" 2>&1
cat "$W/res/gpu.txt"

C90=/tmp/mlagen-cache-sm90
C120=/tmp/mlagen-cache-sm120
H90=(env TRITON_CACHE_DIR=$C90 python3 kernels/sm90/harness.py --variants selected)
H120=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=$C120 python3 kernels/sm120/harness.py --variants selected)
PERCACHE=(--heads 64,16 --batches 1,16,64,128 --topks 512,2048)
SGL=(--sglang gpu/route/work/upstream)

# ---- phase 1: in parallel
(
  b=$W/flashmla-build
  mkdir -p "$b"
  OUT=$b MAX_JOBS=8 bash .peers-flashmla/build.sh >"$W/res/flashmla-build.txt" 2>&1
  cp "$b"/build.log "$W/res/flashmla-build.log" 2>/dev/null
  cp "$b"/cuda*.so "$OUT/" 2>/dev/null
) &
BUILD=$!
pids=()
bg() { # bg NAME CMD...: in the background, output to $W/res/NAME.log
  local name=$1
  shift
  ("$@" >"$W/res/$name.log" 2>&1; echo "$name exit $?" >>"$W/res/exits.txt") &
  pids+=($!)
}
bg check-sm90 "${H90[@]}" --no-timing --peers none --out "$W/res/sm90-check.json"
bg check-sm120 "${H120[@]}" --no-timing --peers none --out "$W/res/sm120-check.json"
bg warm-sm90-cache "${H90[@]}" --warm-only --no-check --no-whole-call "${PERCACHE[@]}" --peers none
bg warm-sm120-cache "${H120[@]}" --warm-only --no-check --no-whole-call "${PERCACHE[@]}" --peers none
for h in 64 128 16; do
  bg "warm-sm90-h$h" "${H90[@]}" --warm-only --no-check --batches '' --whole-heads $h --peers sglang-triton "${SGL[@]}"
done
for h in 64 16; do
  bg "warm-sm120-h$h" "${H120[@]}" --warm-only --no-check --batches '' --whole-heads $h --peers none
done
bg route timeout 300 env TRITON_CACHE_DIR=$C90 python3 gpu/route/check.py gpu/route/work/sm90 gpu/route/work/sm120
bg dispatch-sm90 env TRITON_CACHE_DIR=$C90 python3 gpu/dispatch/check.py gpu/dispatch/work/sm90 kernels/sm90
bg dispatch-sm120 env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=$C120 python3 gpu/dispatch/check.py gpu/dispatch/work/sm120 kernels/sm120
# Phase 1 ends when its processes do (FlashMLA's build may go on), or at
# half the limit.
kill_tree() {
  local c
  for c in $(pgrep -P "$1"); do kill_tree "$c"; done
  kill "$1" 2>/dev/null
}
deadline=$((START + LIMIT * 50 / 100))
while [ "$(date +%s)" -lt $deadline ]; do
  alive=0
  for p in "${pids[@]}" $BUILD; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ $alive = 0 ] && break
  sleep 2
done
for p in "${pids[@]}"; do
  kill -0 "$p" 2>/dev/null && { log "phase 1: stopping pid $p (limit)"; kill_tree "$p"; }
done
kill -0 $BUILD 2>/dev/null && log "FlashMLA's build still running: the timing may find it absent"
log "phase 1 done"
cat "$W/res/exits.txt" 2>/dev/null
tail -3 "$W/res/flashmla-build.txt"

# ---- phase 2: timings, one process at a time
export PYTHONPATH=$PWD/.peers-flashmla/src${PYTHONPATH:+:$PYTHONPATH}
t=$(at_least 20 $(($(left) * 65 / 100)))
log "sm90 timing (limit $t s)"
timeout "$t" "${H90[@]}" --no-check "${PERCACHE[@]}" --whole-heads 64,128,16 --peers auto "${SGL[@]}" \
  --out "$W/res/sm90-time.json" >"$W/res/sm90-time.log" 2>&1
echo "sm90-time exit $?" >>"$W/res/exits.txt"
t=$(at_least 20 $(($(left) - 150)))
log "sm120 timing (limit $t s)"
timeout "$t" "${H120[@]}" --no-check "${PERCACHE[@]}" --whole-heads 64,16 --peers none \
  --out "$W/res/sm120-time.json" >"$W/res/sm120-time.log" 2>&1
echo "sm120-time exit $?" >>"$W/res/exits.txt"
log "timings done"
# The split counts the entry points fit to the GPU, at batches between the
# tables' (gpu/splits.py): checked and timed against the tables' own.
t=$(at_least 20 $((($(left) - 40) / 2)))
log "sm90 split fit (limit $t s)"
timeout "$t" env TRITON_CACHE_DIR=$C90 python3 gpu/splits.py sm90 "$W/res/splits-sm90.json" \
  >"$W/res/splits-sm90.log" 2>&1
echo "splits-sm90 exit $?" >>"$W/res/exits.txt"
t=$(at_least 20 $(($(left) - 40)))
log "sm120 split fit (limit $t s)"
timeout "$t" env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=$C120 python3 gpu/splits.py sm120 "$W/res/splits-sm120.json" \
  >"$W/res/splits-sm120.log" 2>&1
echo "splits-sm120 exit $?" >>"$W/res/exits.txt"

# ---- the sm_120 build's machine code, and the table
timeout 25 python3 gpu/sass_scan.py "$C120" >"$W/res/sass-sm120.json" 2>"$W/res/sass.log"
python3 gpu/shipped_summary.py "$W/res" >"$W/res/summary.txt" 2>&1
cp "$W/res/summary.txt" "$OUT/"
cp calib/code-sm90.txt calib/code-sm120.txt "$W/res/"
tar -czf "$OUT/results.tar.gz" -C "$W" res
log "total"
cat "$W/res/summary.txt"
