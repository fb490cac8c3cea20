#!/usr/bin/env bash
# lab/wspp: the warp-specialised 64-head kernel (ws/, pp_h64_t16_k*_w8_s2)
# against the shipped one (base/, pp_h64_t32_k*_w8_s1) and the sm_90
# module's own selection, DISABLE_MMA_V3=1 for the sm_120 copies, per cache
# at H 64, B 16, 64, 128, topk 512 and 2048, CUDA-graph replay, two
# passes. Correctness of ws's configurations first (every harness case,
# the whole call's included). From the repository root, after prepare.py,
# carrying lab/wspp/base and lab/wspp/ws (git-ignored):
#   bash lab/wspp/device.sh        # $OUT/wspp.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/wspp}
W=/tmp/wspp-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
VWS=pp_h64_t16_k1_w8_s2,pp_h64_t16_k2_w8_s2,pp_h64_t16_k8_w8_s2
VB=pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k8_w8_s1
T=(--heads 64 --batches 16,64,128 --topks 512,2048 --no-whole-call --peers none --no-check)
WS=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-ws python3 lab/wspp/ws/harness.py)
BASE=(env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-base python3 lab/wspp/base/harness.py)
S90=(env TRITON_CACHE_DIR=/tmp/c-90 python3 kernels/sm90/harness.py --variants selected)
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
bg check-ws "${WS[@]}" --variants "$VWS" --no-timing --peers none --out "$W/check-ws.json"
bg warm-ws "${WS[@]}" --variants "$VWS" --warm-only "${T[@]}"
bg warm-base "${BASE[@]}" --variants "$VB" --warm-only "${T[@]}"
bg warm-90 "${S90[@]}" --warm-only "${T[@]}"
wait
cat "$W/exits.txt"
for rep in 1 2; do
  timeout 60 "${WS[@]}" --variants "$VWS" "${T[@]}" --out "$W/ws-t$rep.json" >"$W/ws-t$rep.log" 2>&1
  timeout 60 "${BASE[@]}" --variants "$VB" "${T[@]}" --out "$W/base-t$rep.json" >"$W/base-t$rep.log" 2>&1
done
timeout 60 "${S90[@]}" "${T[@]}" --out "$W/sm90.json" >"$W/sm90.log" 2>&1
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import glob, json, os, sys
d = sys.argv[1]
check = json.load(open(f"{d}/check-ws.json"))["correctness"] if os.path.exists(f"{d}/check-ws.json") else []
print("ws checks:", sum(r["passed"] for r in check), "/", len(check))
best = {}
for path in glob.glob(f"{d}/*-t[12].json") + [f"{d}/sm90.json"]:
    if not os.path.exists(path):
        continue
    who = os.path.basename(path).split("-t")[0].removesuffix(".json")
    for r in json.load(open(path))["timing"]:
        g = r.get("graph_us")
        if g:
            k = (who, r["topk"], r["batch"])
            if k not in best or g < best[k][1]:
                best[k] = (r["variant"], g)
print(f"{'topk':>5} {'B':>4} | {'base (shipped)':>24} {'µs':>7} | {'ws':>22} {'µs':>7} | {'sm90 µs':>8} | ws/base  ws/sm90")
for tk, b in sorted({k[1:] for k in best}):
    bb, ww, ss = best.get(("base", tk, b)), best.get(("ws", tk, b)), best.get(("sm90", tk, b))
    if not (bb and ww and ss):
        continue
    print(f"{tk:5d} {b:4d} | {bb[0]:>24} {bb[1]:7.1f} | {ww[0]:>22} {ww[1]:7.1f} | {ss[1]:8.1f} | {ww[1] / bb[1]:7.2f}  {ww[1] / ss[1]:7.2f}")
PY
tar -czf "$OUT/wspp.tar.gz" -C "$W" .
