#!/usr/bin/env bash
# lab/qreg16's sweep of the byte-reading module (ninth session): the sm_86
# module, whose kernel code sm_80's shares, once its 16-head pipelined tile
# keeps six of Q's column groups in registers: each 16-head pipelined
# configuration per cache at 16, 32 and 64 heads (batches 1, 16, 64, 128;
# topk 512 and 2048), CUDA-graph replay, DISABLE_MMA_V3=1, their checks
# first. For the sm_86 and sm_80 tables (gpu/selection_inputs.py), whose
# rows of that tile came from lab/e4m3, before the change. From the
# repository root:
#   bash lab/qreg16/sweep86.sh      # $OUT/sweep86.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/qreg16-86}
W=/tmp/qreg16-sweep86
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$W/gpu.txt"
V=$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"(pp_h16_[a-z0-9_]+)\": Config', open('kernels/sm86/sparse_mla_mma.py').read())))))")
echo "sm86: $V" | tee -a "$W/steps.txt"
P=(--heads 16,32,64 --batches 1,16,64,128 --topks 512,2048 --peers none --no-whole-call)
S=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-qreg16-86 python3 kernels/sm86/harness.py)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg check timeout 150 "${S[@]}" --variants "$V" --no-timing --out "$W/check-sm86.json"
part() { echo "$1" | tr , '\n' | awk -v k="$2" -v n="$3" 'NR % n == k' | paste -sd, -; }
for k in 0 1 2 3 4; do
  bg warm-$k timeout 150 "${S[@]}" --variants "$(part "$V" $k 5)" --warm-only --no-check "${P[@]}"
done
wait
log "phase 1 done"; cat "$W/exits.txt"; tail -n 1 "$W/check.log"
timeout 100 "${S[@]}" --variants "$V" --no-check "${P[@]}" --out "$W/time-sm86.json" >"$W/time-sm86.log" 2>&1; log "per cache exit $?"
python3 - "$W" lab/e4m3/results/time-sm86-pp.json <<'PY' | tee "$W/summary.txt"
import json, sys
d, old = sys.argv[1], sys.argv[2]
rows = json.load(open(f"{d}/check-sm86.json"))["correctness"]
print("checks", sum(r["passed"] for r in rows), "/", len(rows))
def best(path):
    out = {}
    for r in json.load(open(path))["timing"]:
        if r["variant"].startswith("pp_h16_") and r.get("graph_us"):
            k = (r["heads"], r["topk"], r["batch"])
            if k not in out or r["graph_us"] < out[k][1]:
                out[k] = (r["variant"], r["graph_us"])
    return out
new, before = best(f"{d}/time-sm86.json"), best(old)
print(f"{'H':>3} {'topk':>5} {'B':>4} {'lab/e4m3':>22} {'us':>7} {'now':>22} {'us':>7} {'x':>5}")
for k in sorted(new):
    b = before.get(k)
    n = new[k]
    print(f"{k[0]:3d} {k[1]:5d} {k[2]:4d} {b[0] if b else '-':>22} {b[1] if b else 0:7.1f} {n[0]:>22} {n[1]:7.1f} {n[1] / b[1] if b else 0:5.2f}")
PY
tar -czf "$OUT/sweep86.tar.gz" -C "$W" .
log total
