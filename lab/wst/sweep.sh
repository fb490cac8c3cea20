#!/usr/bin/env bash
# lab/wst sweep: the sm_90 module once it has the narrow warp-specialised
# configurations (ws_h16_*, _ws_narrow_kernel), for its tables
# (gpu/selection_inputs.py): every ws_h16_* configuration beside the
# configurations its tables chose for up to 32 heads before (ws_h64_*,
# wsc_*, the B 1 tl.dot ones), per cache at H 16 and 32 and as the whole
# call at H 16, batches 1, 8, 16, 32, 64, 128, CUDA-graph replay; the
# checks of every ws_h16_* configuration first. From the repository root:
#   bash lab/wst/sweep.sh      # $OUT/sweep.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/wst-sweep}
W=/tmp/wst-sweep-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
configs() { python3 -c "import re,sys;print(','.join(sorted(set(re.findall(r'\"(' + sys.argv[1] + r'[a-z0-9_]+)\": Config', open('kernels/sm90/sparse_mla_mma.py').read())))))" "$1"; }
N=$(configs ws_h16_)
V=$N,$(configs ws_h64_),wsc_h64_t64_k2_w8_s2,wsc_h64_t64_k4_w8_s2,wsc_h64_t64_k8_w8_s2,mma_h16_t16_k32_w8_s1,mma_h16_t64_k32_w8_s1
echo "sm90: $V" | tee -a "$W/steps.txt"
P=(--heads 32,16 --batches 1,8,16,32,64,128 --topks 512,2048 --peers none)
WC=(--whole-heads 16 --whole-batches 1,8,16,32,64,128 --extra-topks 512,2048)
S=(env TRITON_CACHE_DIR=/tmp/c-sweep python3 kernels/sm90/harness.py)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg check timeout 200 "${S[@]}" --variants "$N" --no-timing --peers none --out "$W/check-sm90.json"
part() { echo "$1" | tr , '\n' | awk -v k="$2" -v n="$3" 'NR % n == k' | paste -sd, -; }
for k in 0 1 2 3 4 5; do
  bg warm-$k timeout 200 "${S[@]}" --variants "$(part "$V" $k 6)" --warm-only --no-check "${P[@]}" "${WC[@]}"
done
wait
log "phase 1 done"; cat "$W/exits.txt"; tail -n 1 "$W/check.log"
timeout 200 "${S[@]}" --variants "$V" --no-check "${P[@]}" --no-whole-call --out "$W/time-sm90.json" >"$W/time-sm90.log" 2>&1; log "per cache exit $?"
timeout 120 "${S[@]}" --variants "$V" --no-check --heads 16 --batches 1 --topks 512 --peers none "${WC[@]}" --out "$W/whole-sm90.json" >"$W/whole-sm90.log" 2>&1; log "whole call exit $?"
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import json, sys
d = sys.argv[1]
rows = json.load(open(f"{d}/check-sm90.json"))["correctness"]
print("checks", sum(r["passed"] for r in rows), "/", len(rows))
best = {}
for f in ("time", "whole"):
    for r in json.load(open(f"{d}/{f}-sm90.json"))["timing"]:
        if not r.get("graph_us") or r.get("entry") == "one kernel" or r.get("passed") is False:
            continue
        k = (r.get("entry", "per cache"), r["heads"], r["topk"], r["batch"])
        kind = "narrow" if r["variant"].startswith("ws_h16_") else "before"
        b = best.setdefault(k, {})
        if kind not in b or r["graph_us"] < b[kind][1]:
            b[kind] = (r["variant"], r["graph_us"])
for k in sorted(best):
    b = best[k]
    if "narrow" in b and "before" in b:
        print(f"{k[0]:10s} H{k[1]:3d} tok {k[2]:5d} B{k[3]:4d} {b['before'][0]:22s} {b['before'][1]:7.1f} {b['narrow'][0]:20s} {b['narrow'][1]:7.1f} {b['narrow'][1] / b['before'][1]:5.2f}")
PY
tar -czf "$OUT/sweep.tar.gz" -C "$W" .
log total
