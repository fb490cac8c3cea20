#!/usr/bin/env bash
# lab/heads, second call: the sm_86 and sm_80 modules (the same kernel code:
# the cache read as bytes, Triton having no e4m3 there) on the lent H200
# with DISABLE_MMA_V3=1, per cache at H 64, 32 and 16, for their selections
# by heads. The sm_86 module's pipelined family at batches 1, 16, 64, 128
# and its batch-1 candidates of the tl.dot family at 1 and 16; the sm_80
# module's batch-1 candidates that sm_86 lacks (two shared-memory stages)
# at 1 and 16. Correctness of every timed configuration first. From the
# repository root:
#   bash lab/heads/device2.sh       # $OUT/heads2.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/heads2}
W=/tmp/heads2-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
PP=$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"(pp_[a-z0-9_]+)\": Config', open('kernels/sm86/sparse_mla_mma.py').read())))))")
M86=mma_h16_t16_k32_w4_s1,mma_h16_t16_k32_w8_s1,mma_h16_t32_k32_w4_s1
M80=mma_h16_t16_k32_w4_s2,mma_h16_t16_k32_w8_s2,mma_h16_t32_k32_w8_s1,mma_h16_t32_k32_w8_s2
H=(--heads 64,32,16 --topks 512,2048 --no-whole-call --peers none)
S86=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-86 python3 kernels/sm86/harness.py)
S80=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-80 python3 kernels/sm80/harness.py)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg check-86 "${S86[@]}" --variants "$PP,$M86" --no-timing --peers none --out "$W/check-sm86.json"
bg check-80 "${S80[@]}" --variants "$M80" --no-timing --peers none --out "$W/check-sm80.json"
third() { echo "$1" | tr , '\n' | awk -v k="$2" 'NR % 3 == k' | paste -sd, -; }
for k in 0 1 2; do
  bg warm-86-$k "${S86[@]}" --variants "$(third "$PP,$M86" $k)" --warm-only --no-check "${H[@]}" --batches 1,16,64,128
done
bg warm-80 "${S80[@]}" --variants "$M80" --warm-only --no-check "${H[@]}" --batches 1,16
wait
log "phase 1 done"; cat "$W/exits.txt"
timeout 150 "${S86[@]}" --variants "$PP" --no-check "${H[@]}" --batches 1,16,64,128 --out "$W/time-sm86-pp.json" >"$W/time-sm86-pp.log" 2>&1; log "time-sm86-pp exit $?"
timeout 60 "${S86[@]}" --variants "$M86" --no-check "${H[@]}" --batches 1,16 --out "$W/time-sm86-mma.json" >"$W/time-sm86-mma.log" 2>&1; log "time-sm86-mma exit $?"
timeout 60 "${S80[@]}" --variants "$M80" --no-check "${H[@]}" --batches 1,16 --out "$W/time-sm80-mma.json" >"$W/time-sm80-mma.log" 2>&1; log "time-sm80-mma exit $?"
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import json, os, sys
d = sys.argv[1]
failed, n, ok = set(), 0, 0
for f in ("check-sm86.json", "check-sm80.json"):
    p = os.path.join(d, f)
    if os.path.exists(p):
        for r in json.load(open(p))["correctness"]:
            n += 1
            ok += r["passed"]
            if not r["passed"]:
                failed.add(r["variant"])
print(f"checks: {ok}/{n} pass; failing: {sorted(failed) or 'none'}")
best = {}
for f in ("time-sm86-pp.json", "time-sm86-mma.json", "time-sm80-mma.json"):
    p = os.path.join(d, f)
    if not os.path.exists(p):
        continue
    for r in json.load(open(p))["timing"]:
        g = r.get("graph_us")
        if g and r["variant"] not in failed:
            k = (r["heads"], r["topk"], r["batch"])
            if k not in best or g < best[k][1]:
                best[k] = (r["variant"], g)
print(f"{'H':>3} {'topk':>5} {'B':>4} | {'fastest':24s} {'µs':>7}")
for k in sorted(best):
    print(f"{k[0]:3d} {k[1]:5d} {k[2]:4d} | {best[k][0]:24s} {best[k][1]:7.1f}")
PY
tar -czf "$OUT/heads2.tar.gz" -C "$W" .
log total
