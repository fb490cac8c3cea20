#!/usr/bin/env bash
# One device call: the shipped modules under another Triton release, beside
# the GPU's own Triton 3.6.0, in the same call (docs/targets.md, "Triton
# versions": SGLang 0.5.18-0.5.21 install Triton 3.7.1, 0.5.22-0.5.23
# Triton 3.8.0, through the torch they pin; torch 2.15 brings 3.9.0).
#
# Each module's harness runs with --variants selected (its own entry points
# and tables), once per Triton: the release is imported from the pack
# (PYTHONPATH), with the GPU's torch. MODULES (default "sm90 sm120") names
# the modules, any of sm80 sm86 sm89 sm90 sm120. Every module but sm90's is
# built with DISABLE_MMA_V3=1 (mma.sync, as on its GPU); sm80's, sm86's and
# sm89's run through gpu/nopdl.py, since their GPUs have no griddepcontrol
# and the lent one has. Phase 1, in parallel: each harness's
# correctness section and warm-only processes that fill each Triton's own
# cache. Phase 2, one process at a time: per cache at H 64 and 16, batches
# 1, 16, 64 and 128, topk 512 and 2048, and the whole call at H 64 and 16.
# Then the SASS of the mma.sync builds (HMMA, not HGMMA) and the short table
# (gpu/triton/summary.py: every check, and each shape's time under the
# release over its time under 3.6.0).
#
# Prepare here, then run on the device from the repository root, carrying
# the pack. With the working tree it is over a call's 64 MiB, so it goes as
# its two halves: a first call carrying .part-00 (its command: true), then,
# while the machine is still warm (it keeps ignored files between calls),
# this one carrying .part-01; the script joins them.
#
#   bash gpu/triton/pack.sh 3.8.0          # gpu/triton/pack/triton-3.8.0.tar.xz{,.part-00,.part-01}
#   V=3.8.0 OUT=$OUT bash gpu/triton/run.sh
#   V=3.8.0 MODULES="sm80 sm86 sm89" OUT=$OUT bash gpu/triton/run.sh
#
# $OUT gets results.tar.gz (every JSON and log) and summary.txt. LIMIT (s,
# default 540) bounds the whole script.
set -u
cd "$(dirname "$0")/../.."
V=${V:?set V to the packed Triton release, e.g. V=3.8.0}
OUT=${OUT:-/tmp/mlagen-triton}
LIMIT=${LIMIT:-540}
MODULES=${MODULES:-sm90 sm120}
for m in $MODULES; do
  case $m in
  sm80 | sm86 | sm89 | sm90 | sm120) ;;
  *)
    echo "MODULES: $m is not one of sm80 sm86 sm89 sm90 sm120"
    exit 2
    ;;
  esac
done
W=/tmp/mlagen-triton-work
rm -rf "$W"
mkdir -p "$OUT" "$W/res" "$W/site"
export PYTHONUNBUFFERED=1
START=$(date +%s)
left() { echo $((LIMIT - ($(date +%s) - START))); }
at_least() { echo $(($2 < $1 ? $1 : $2)); }
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/res/steps.txt"; }

bash gpu/triton/unpack.sh "$V" "$W/site" || exit 2
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  PYTHONPATH=$W/site python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, "(pack)")'
} >"$W/res/gpu.txt" 2>&1
cat "$W/res/gpu.txt"
grep -q "triton $V (pack)" "$W/res/gpu.txt" || { echo "the pack did not import as Triton $V"; exit 1; }

# harness TRITON MODULE: the command line of a module's harness under a Triton
# (base: the GPU's own; the release: the pack), each with a cache of its own.
harness() {
  local site=() mma=() launch=()
  [ "$1" = base ] || site=(PYTHONPATH="$W/site")
  [ "$2" = sm90 ] || mma=(DISABLE_MMA_V3=1)
  case $2 in sm80 | sm86 | sm89) launch=(gpu/nopdl.py) ;; esac
  echo env "${site[@]}" "${mma[@]}" TRITON_CACHE_DIR="/tmp/mlagen-triton-cache-$1-$2" \
    python3 "${launch[@]}" "kernels/$2/harness.py" --variants selected --peers none
}
PERCACHE=(--heads 64,16 --batches 1,16,64,128 --topks 512,2048)
WHOLE=(--whole-heads 64,16)

# ---- phase 1: in parallel
pids=()
bg() { # bg NAME CMD...
  local name=$1
  shift
  ("$@" >"$W/res/$name.log" 2>&1; echo "$name exit $?" >>"$W/res/exits.txt") &
  pids+=($!)
}
for t in base "$V"; do
  for m in $MODULES; do
    read -r -a H <<<"$(harness "$t" $m)"
    bg "check-$m-$t" "${H[@]}" --no-timing --out "$W/res/check-$m-$t.json"
    bg "warm-cache-$m-$t" "${H[@]}" --warm-only --no-check --no-whole-call "${PERCACHE[@]}"
    bg "warm-whole-$m-$t" "${H[@]}" --warm-only --no-check --batches '' "${WHOLE[@]}"
  done
done
deadline=$((START + LIMIT * 45 / 100))
while [ "$(date +%s)" -lt $deadline ]; do
  alive=0
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ $alive = 0 ] && break
  sleep 2
done
kill_tree() {
  local c
  for c in $(pgrep -P "$1"); do kill_tree "$c"; done
  kill "$1" 2>/dev/null
}
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && { log "phase 1: stopping pid $p (limit)"; kill_tree "$p"; }; done
log "phase 1 done"

# ---- phase 2: timings, one process at a time, base and release side by side.
# One call a graph: the figure is the release's time over 3.6.0's, which
# layer timing (the harness's default) would only make twice as long.
set -- $MODULES
n=$(($# * 2))
for m in $MODULES; do
  for t in base "$V"; do
    read -r -a H <<<"$(harness "$t" $m)"
    lim=$(at_least 20 $((($(left) - 30) / n)))
    n=$((n - 1))
    log "timing $m under $t (limit $lim s)"
    timeout "$lim" "${H[@]}" --no-check --layers 0 "${PERCACHE[@]}" "${WHOLE[@]}" \
      --out "$W/res/time-$m-$t.json" >"$W/res/time-$m-$t.log" 2>&1
    echo "time-$m-$t exit $?" >>"$W/res/exits.txt"
  done
done

# ---- the mma.sync builds' machine code, and the table
for m in $MODULES; do
  [ "$m" = sm90 ] && continue
  for t in base "$V"; do
    timeout 20 python3 gpu/sass_scan.py "/tmp/mlagen-triton-cache-$t-$m" >"$W/res/sass-$m-$t.json" 2>>"$W/res/sass.log"
  done
done
python3 gpu/triton/summary.py "$W/res" "$V" $MODULES >"$W/res/summary.txt" 2>&1
cp "$W/res/summary.txt" "$OUT/"
tar -czf "$OUT/results.tar.gz" -C "$W" res
log "total"
cat "$W/res/summary.txt"
