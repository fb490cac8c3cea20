#!/usr/bin/env bash
# lab/qreg: Q's first one (q1) or two (q2) column groups kept in registers
# across the tile loop of the pipelined 64-head kernel, against the shipped
# sm_120 module (v2), DISABLE_MMA_V3=1, same process order; correctness of
# q1 and q2's 64-head configurations. Results in $OUT/qreg.tar.gz.
set -u
OUT=${OUT:-/tmp/qreg}
W=/tmp/qreg-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
V=pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k8_w8_s1
T=(--heads 64 --batches 16,64,128 --topks 512,2048 --no-whole-call --peers none)
run() { env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-$1 python3 $2/harness.py "${@:3}"; }
for x in q1:lab/qreg/q1 q2:lab/qreg/q2; do
  (run ${x%%:*} ${x##*:} --variants "$V" --no-timing --out "$W/${x%%:*}-check.json" >"$W/${x%%:*}-check.log" 2>&1; echo "${x%%:*} check exit $?" >>"$W/exits.txt") &
done
for x in v2:lab/qreg/v2 q1:lab/qreg/q1 q2:lab/qreg/q2; do
  (run ${x%%:*} ${x##*:} --variants "$V" --warm-only --no-check "${T[@]}" >/dev/null 2>&1) &
done
wait
cat "$W/exits.txt"
for rep in 1 2; do
  for x in v2:lab/qreg/v2 q1:lab/qreg/q1 q2:lab/qreg/q2; do
    timeout 60 bash -c "$(declare -f run); run ${x%%:*} ${x##*:} --variants $V --no-check ${T[*]} --out $W/${x%%:*}-t$rep.json" >"$W/${x%%:*}-t$rep.log" 2>&1
  done
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import json, os, sys
d = sys.argv[1]
for n in ("q1", "q2"):
    r = json.load(open(f"{d}/{n}-check.json"))
    rows = r["correctness"]
    print(n, "check", sum(x["passed"] for x in rows), "/", len(rows), "worst rel", max(x.get("rel_err") or 0 for x in rows))
best = {}
for n in ("v2", "q1", "q2"):
    for rep in (1, 2):
        p = f"{d}/{n}-t{rep}.json"
        if not os.path.exists(p):
            continue
        for t in json.load(open(p))["timing"]:
            k = (n, t["variant"], t["topk"], t["batch"])
            g = t.get("graph_us")
            if g:
                best[k] = min(best.get(k, g), g)
print(f"{'config':22s} {'topk':>5} {'B':>4} {'v2':>7} {'q1':>7} {'q2':>7} {'q1/v2':>6} {'q2/v2':>6}")
for (n, v, tk, b), g in sorted(best.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][3])):
    if n != "v2":
        continue
    g1, g2 = best.get(("q1", v, tk, b)), best.get(("q2", v, tk, b))
    print(f"{v:22s} {tk:5d} {b:4d} {g:7.1f} {g1 or 0:7.1f} {g2 or 0:7.1f} {(g1 or 0)/g:6.3f} {(g2 or 0)/g:6.3f}")
PY
tar -czf "$OUT/qreg.tar.gz" -C "$W" .
