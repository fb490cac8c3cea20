#!/usr/bin/env bash
# lab/ablate: the 64-head pipelined kernel with one part of its tile taken
# out at a time (prepare.py), timed beside the unchanged module (base),
# DISABLE_MMA_V3=1, CUDA-graph replay, one process at a time, two passes;
# results wrong by design (--no-check). Results in $OUT/ablate.tar.gz.
set -u
OUT=${OUT:-/tmp/ablate}
W=/tmp/ablate-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
N=(base nodq nogather noqk nomax nopv)
V=pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1
T=(--variants $V --heads 64 --batches 64,128 --topks 512,2048 --no-whole-call --peers none --no-check)
run() { env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-$1 python3 lab/ablate/$1/harness.py "${@:2}"; }
for n in "${N[@]}"; do
  (run $n "${T[@]}" --warm-only >"$W/$n-warm.log" 2>&1; echo "$n warm exit $?" >>"$W/exits.txt") &
done
wait
cat "$W/exits.txt"
for rep in 1 2; do
  for n in "${N[@]}"; do
    timeout 60 bash -c "$(declare -f run); run $n ${T[*]} --out $W/$n-t$rep.json" >"$W/$n-t$rep.log" 2>&1
  done
done
python3 - "$W" "${N[@]}" <<'PY' | tee "$W/summary.txt"
import json, os, sys
d, names = sys.argv[1], sys.argv[2:]
best = {}
for n in names:
    for rep in (1, 2):
        p = f"{d}/{n}-t{rep}.json"
        if not os.path.exists(p):
            continue
        for t in json.load(open(p))["timing"]:
            g = t.get("graph_us")
            if g:
                k = (n, t["variant"], t["topk"], t["batch"])
                best[k] = min(best.get(k, g), g)
keys = sorted({k[1:] for k in best})
print(f"{'config':22s} {'topk':>5} {'B':>4} " + " ".join(f"{n:>8s}" for n in names))
for v, tk, b in keys:
    base = best.get(("base", v, tk, b))
    cells = []
    for n in names:
        g = best.get((n, v, tk, b))
        cells.append(f"{g:8.1f}" if g else f"{'-':>8s}")
    print(f"{v:22s} {tk:5d} {b:4d} " + " ".join(cells))
    if base:
        print(f"{'':22s} {'':5s} {'÷base':>4s} " + " ".join(
            f"{best[(n, v, tk, b)] / base:8.2f}" if (n, v, tk, b) in best else f"{'-':>8s}" for n in names))
PY
tar -czf "$OUT/ablate.tar.gz" -C "$W" .
