#!/usr/bin/env bash
# lab/e4m3: the sm_80/86 modules' e4m3 conversion (exact, one multiply by
# 2^120 instead of a branch for subnormals, bytes taken from the loaded
# words) on the lent H200 with DISABLE_MMA_V3=1, in one call:
# 1. every check (the dequantisation probe's Triton and Gluon paths
#    included) of the sm_86 module's candidates and the sm_80 module's own,
#    while Triton's caches fill;
# 2. the shipped route (--variants selected) of old/ (before) and
#    kernels/sm86 (after) at H 64, 32, 16, topk 512 and 2048, B 1, 16, 64,
#    128, two passes each, alternating. When it ran both carried db17572's
#    selection table; kernels/sm86 has carried the table made from step 3
#    since, so a rerun compares the routes, not the conversions alone;
# 3. lab/heads's second call's timing of every candidate (the sm_86
#    module's pipelined family at B 1-128, its tl.dot ones at B 1 and 16,
#    sm_80's own two-stage ones at B 1 and 16 and its two-buffer-set
#    64-head pipelined ones at B 1-128), from which
#    gpu/selection_inputs.py makes sm_86's and sm_80's tables.
# CUDA-graph replay throughout. From the repository root, after
# prepare.py, carrying lab/e4m3/old (git-ignored):
#   bash lab/e4m3/device.sh        # $OUT/e4m3.tar.gz, short tables last
set -u
OUT=${OUT:-/tmp/e4m3}
W=/tmp/e4m3-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
PP=$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"(pp_[a-z0-9_]+)\": Config', open('kernels/sm86/sparse_mla_mma.py').read())))))")
M86=mma_h16_t16_k32_w4_s1,mma_h16_t16_k32_w8_s1,mma_h16_t32_k32_w4_s1
M80=mma_h16_t16_k32_w4_s2,mma_h16_t16_k32_w8_s2,mma_h16_t32_k32_w8_s1,mma_h16_t32_k32_w8_s2,mma_h16_t32_k32_w4_s2
# Two buffer sets of the 64-head tile: 133 KB, sm_80's shared memory only
# (they spilled with the old conversion and were refused there).
P80=$(echo pp_h64_t32_k{1,2,8,16,32}_w8_s2 | tr ' ' ,)
H=(--heads 64,32,16 --topks 512,2048 --no-whole-call --peers none --no-check)
T=(--variants selected "${H[@]}" --batches 1,16,64,128)
NEW=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-new python3 kernels/sm86/harness.py)
OLD=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-old python3 lab/e4m3/old/harness.py)
S80=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-80 python3 kernels/sm80/harness.py)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg check-86 "${NEW[@]}" --variants "$PP,$M86" --no-timing --peers none --out "$W/check-sm86.json"
bg check-80 "${S80[@]}" --variants "$M80,$P80" --no-timing --peers none --out "$W/check-sm80.json"
third() { echo "$1" | tr , '\n' | awk -v k="$2" 'NR % 3 == k' | paste -sd, -; }
for k in 0 1 2; do
  bg warm-86-$k "${NEW[@]}" --variants "$(third "$PP,$M86" $k)" --warm-only "${H[@]}" --batches 1,16,64,128
done
bg warm-80 "${S80[@]}" --variants "$M80" --warm-only "${H[@]}" --batches 1,16
bg warm-80-pp "${S80[@]}" --variants "$P80" --warm-only "${H[@]}" --batches 1,16,64,128
bg warm-new "${NEW[@]}" --warm-only "${T[@]}"
bg warm-old "${OLD[@]}" --warm-only "${T[@]}"
wait
log "phase 1 done"; cat "$W/exits.txt"
for rep in 1 2; do
  timeout 80 "${OLD[@]}" "${T[@]}" --out "$W/old-t$rep.json" >"$W/old-t$rep.log" 2>&1
  timeout 80 "${NEW[@]}" "${T[@]}" --out "$W/new-t$rep.json" >"$W/new-t$rep.log" 2>&1
done
log "phase 2 done"
timeout 150 "${NEW[@]}" --variants "$PP" "${H[@]}" --batches 1,16,64,128 --out "$W/time-sm86-pp.json" >"$W/time-sm86-pp.log" 2>&1; log "time-sm86-pp exit $?"
timeout 60 "${NEW[@]}" --variants "$M86" "${H[@]}" --batches 1,16 --out "$W/time-sm86-mma.json" >"$W/time-sm86-mma.log" 2>&1; log "time-sm86-mma exit $?"
timeout 60 "${S80[@]}" --variants "$M80" "${H[@]}" --batches 1,16 --out "$W/time-sm80-mma.json" >"$W/time-sm80-mma.log" 2>&1; log "time-sm80-mma exit $?"
timeout 80 "${S80[@]}" --variants "$P80" "${H[@]}" --batches 1,16,64,128 --out "$W/time-sm80-pp.json" >"$W/time-sm80-pp.log" 2>&1; log "time-sm80-pp exit $?"
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import glob, json, os, sys
d = sys.argv[1]
failed = set()
for f in ("check-sm86.json", "check-sm80.json"):
    p = os.path.join(d, f)
    if not os.path.exists(p):
        print(f, "missing")
        continue
    r = json.load(open(p))
    c = r["correctness"]
    failed |= {x["variant"] for x in c if not x["passed"]}
    dq = r.get("dequant") or {}
    print(f"{f}: {sum(x['passed'] for x in c)}/{len(c)} checks; dequantisation "
          + ", ".join(f"{x['path']} {x['wrong']} wrong" for x in dq.get("paths", [])))
print("failing:", sorted(failed) or "none")
best = {}
for path in glob.glob(f"{d}/*-t[12].json"):
    who = os.path.basename(path).split("-t")[0]
    for r in json.load(open(path))["timing"]:
        g = r.get("graph_us")
        if g:
            k = (who, r["heads"], r["topk"], r["batch"])
            best[k] = min(best.get(k, g), g)
print(f"shipped route: {'H':>3} {'topk':>5} {'B':>4} | {'old µs':>7} {'new µs':>7} | new/old")
for h, tk, b in sorted({k[1:] for k in best}, key=lambda k: (-k[0], k[1], k[2])):
    o, n = best.get(("old", h, tk, b)), best.get(("new", h, tk, b))
    if o and n:
        print(f"               {h:3d} {tk:5d} {b:4d} | {o:7.1f} {n:7.1f} | {n / o:6.2f}")
fast = {}
for f in ("time-sm86-pp.json", "time-sm86-mma.json", "time-sm80-mma.json", "time-sm80-pp.json"):
    p = os.path.join(d, f)
    if not os.path.exists(p):
        continue
    for r in json.load(open(p))["timing"]:
        g = r.get("graph_us")
        if g and r["variant"] not in failed:
            k = (r["heads"], r["topk"], r["batch"])
            if k not in fast or g < fast[k][1]:
                fast[k] = (r["variant"], g)
print(f"every candidate: {'H':>3} {'topk':>5} {'B':>4} | {'fastest':24s} {'µs':>7}")
for k in sorted(fast):
    print(f"                 {k[0]:3d} {k[1]:5d} {k[2]:4d} | {fast[k][0]:24s} {fast[k][1]:7.1f}")
PY
tar -czf "$OUT/e4m3.tar.gz" -C "$W" .
log total
