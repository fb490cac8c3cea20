#!/usr/bin/env bash
# lab/rs120: the 64-head tile split by role (rs/, rs5/ and rsl/, configurations
# pp_h64_t16_k{1,2,8}_w8_s3: the split counts the shipped tables take at
# 64 heads from B 16) against the shipped 64-head tile (base/,
# pp_h64_t32_k{1,2,8}_w8_s1) and the sm_90 module's own selection, per
# cache at H 64, B 16, 64, 128, topk 512 and 2048, CUDA-graph replay, two
# passes, one process at a time; DISABLE_MMA_V3=1 for the sm_120 copies.
# First the correctness of the role-split copies on every harness case
# (the whole call's included). From the repository root, after
# `python3 lab/rs120/prepare.py`, carrying lab/rs120/base, lab/rs120/rs,
# lab/rs120/rs5 and lab/rs120/rsl (git-ignored):
#   OUT=$OUT bash lab/rs120/device.sh     # $OUT/rs120.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/rs120}
W=/tmp/rs120-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
VRS=pp_h64_t16_k1_w8_s3,pp_h64_t16_k2_w8_s3,pp_h64_t16_k8_w8_s3
VB=pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k8_w8_s1
T=(--heads 64 --batches 16,64,128 --topks 512,2048 --no-whole-call --peers none --no-check)
copy() { local n=$1; shift; env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-$n python3 lab/rs120/$n/harness.py "$@"; }
s90() { env TRITON_CACHE_DIR=/tmp/c-90 python3 kernels/sm90/harness.py --variants selected "$@"; }
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader >"$W/gpu.txt" 2>&1
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' >>"$W/gpu.txt" 2>&1
for n in rs rs5 rsl; do
  bg check-$n copy $n --variants "$VRS" --no-timing --peers none --out "$W/check-$n.json"
  bg warm-$n copy $n --variants "$VRS" --warm-only "${T[@]}"
done
bg warm-base copy base --variants "$VB" --warm-only "${T[@]}"
bg warm-90 s90 --warm-only "${T[@]}"
wait
cat "$W/exits.txt"
for rep in 1 2; do
  for n in base rs rs5 rsl; do
    v=$VRS; [ $n = base ] && v=$VB
    timeout 75 bash -c "$(declare -f copy); copy $n --variants $v ${T[*]} --out $W/$n-t$rep.json" >"$W/$n-t$rep.log" 2>&1
  done
  timeout 75 bash -c "$(declare -f s90); s90 ${T[*]} --out $W/sm90-t$rep.json" >"$W/sm90-t$rep.log" 2>&1
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import glob, json, os, sys
d = sys.argv[1]
print(open(f"{d}/gpu.txt").read().strip())
for n in ("rs", "rs5", "rsl"):
    p = f"{d}/check-{n}.json"
    rows = json.load(open(p))["correctness"] if os.path.exists(p) else []
    bad = [r for r in rows if not r["passed"]]
    print(f"{n} checks: {len(rows) - len(bad)} / {len(rows)} pass, worst rel "
          f"{max((r.get('rel_err') or 0 for r in rows), default=0):.1e}")
    for r in bad[:5]:
        print("  FAIL", {k: r.get(k) for k in ("variant", "case", "rel_err", "lse_err")})
best = {}
for path in glob.glob(f"{d}/*-t[12].json"):
    who = os.path.basename(path).rsplit("-t", 1)[0]
    for r in json.load(open(path))["timing"]:
        g = r.get("graph_us")
        if g and r.get("heads", 64) == 64:
            k = (who, r["topk"], r["batch"])
            if k not in best or g < best[k][1]:
                best[k] = (r["variant"], g)
who = ("base", "rs", "rs5", "rsl", "sm90")
print(f"{'topk':>5} {'B':>4} | " + " | ".join(f"{w:>28}" for w in who) + " | " + " ".join(f"{w + '/base':>8}" for w in who[1:4]) + " " + " ".join(f"{w + '/sm90':>8}" for w in who[1:4]))
for tk, b in sorted({k[1:] for k in best}):
    got = [best.get((w, tk, b)) for w in who]
    cells = " | ".join(f"{g[0]:>20} {g[1]:7.1f}" if g else f"{'-':>28}" for g in got)
    t = [g[1] if g else None for g in got]
    r = lambda a, c: f"{a / c:8.2f}" if a and c else f"{'-':>8}"
    ratios = [r(t[i], t[0]) for i in (1, 2, 3)] + [r(t[i], t[4]) for i in (1, 2, 3)]
    print(f"{tk:5d} {b:4d} | {cells} | " + " ".join(ratios))
PY
tar -czf "$OUT/rs120.tar.gz" -C "$W" .
