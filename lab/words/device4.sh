#!/usr/bin/env bash
# Fourth device call (lab/words/NOTES.md): the whole call of the sm_120
# module (DISABLE_MMA_V3=1) for every pipelined configuration and the Triton
# configurations its tables pick at batch 1, at H 16 and 64, batches 1 to
# 128, window 128 + extra 512 and 2048: the rows `mlagen select` needs for
# whole-call tables of their own (until now the whole call reused the
# per-cache tables at its total tokens). Results in $OUT/words4.tar.gz.
set -u
OUT=${OUT:-/tmp/words4}
W=/tmp/words4-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*"; }
PP=$(python3 -c "import re;print(','.join(sorted(set(re.findall(r'\"(pp_[a-z0-9_]+)\": Config', open('kernels/sm120/sparse_mla_mma.py').read())))))")
MMA=mma_h16_t16_k32_w4_s1,mma_h16_t16_k16_w4_s1,mma_h16_t32_k32_w4_s1,mma_h16_t32_k16_w4_s1,mma_h16_t32_k4_w4_s1
WH=(--batches '' --whole-heads 64,16 --whole-batches 1,8,16,32,64,128 --window 128 --extra-topks 512,2048 --peers none)
H=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-w4 python3 kernels/sm120/harness.py)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$W/gpu.txt"
i=0
for v in ${PP//,/ } ${MMA//,/ }; do
  ("${H[@]}" --variants "$v" --warm-only --no-check "${WH[@]}" >"$W/warm-$v.log" 2>&1; echo "warm $v exit $?" >>"$W/exits.txt") &
  i=$((i + 1)); [ $((i % 8)) = 0 ] && wait
done
wait
log "warm done"
timeout 360 "${H[@]}" --variants "$PP,$MMA" --no-check "${WH[@]}" --out "$W/whole.json" >"$W/whole.log" 2>&1
log "whole exit $?"
python3 - "$W/whole.json" <<'PY' | tee "$W/summary.txt"
import json, sys
r = json.load(open(sys.argv[1]))
best = {}
for t in r["timing"]:
    if t.get("entry") != "whole call" or t.get("passed") is False or "error" in t:
        continue
    k = (t["heads"], t["extra"], t["batch"])
    g = t.get("graph_us") or t.get("us")
    if g and (k not in best or g < best[k][0]):
        best[k] = (g, t["variant"])
fails = [t for t in r["timing"] + r["correctness"] if t.get("passed") is False]
print(f"{len(r['timing'])} timing rows, {len(fails)} failing")
for k in sorted(best):
    print(f"H{k[0]:>3} extra {k[1]:>4} B{k[2]:>4}: {best[k][0]:7.1f} {best[k][1]}")
PY
tar -czf "$OUT/words4.tar.gz" -C "$W" gpu.txt exits.txt whole.json whole.log summary.txt
cp "$W/summary.txt" "$OUT/"
log total
