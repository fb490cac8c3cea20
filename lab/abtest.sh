#!/usr/bin/env bash
# A/B timing of copies of the sm_120 module on the lent GPU, the way
# lab/qreg, lab/pvw, lab/chains, lab/ablate and lab/regs ran: pipelined
# configurations ($V, 64-head ones unless told) at $HEADS heads (64 unless
# told), DISABLE_MMA_V3=1, correctness of every copy but the first
# (unless CHECK=0: copies whose results are wrong by design),
# Triton's cache filled by one process a copy, then two timing passes, one
# process at a time, and the faster of the two per shape against the first
# copy. From the repository root:
#   bash lab/abtest.sh NAME DIR BASE OTHER...   # copies DIR/BASE, DIR/OTHER...
# Results in $OUT/NAME.tar.gz (gpu.txt: the GPU, driver and versions), the
# short table last.
set -u
NAME=$1 DIR=$2
shift 2
MODS=("$@")
OUT=${OUT:-/tmp/$NAME}
W=/tmp/$NAME-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
# Which GPU and versions the tables below come from, inside the tarball.
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  date -u
} >"$W/gpu.txt" 2>&1
V=${V:-pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k8_w8_s1}
CHECK=${CHECK:-1}
T=(--heads "${HEADS:-64}" --batches "${BATCHES:-16,64,128}" --topks 512,2048 --no-whole-call --peers none)
run() { env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-$1 python3 $2/$1/harness.py "${@:3}"; }
for n in $([ "$CHECK" = 1 ] && echo "${MODS[@]:1}"); do
  (run $n $DIR --variants "$V" --no-timing --out "$W/$n-check.json" >"$W/$n-check.log" 2>&1; echo "$n check exit $?" >>"$W/exits.txt") &
done
for n in "${MODS[@]}"; do
  (run $n $DIR --variants "$V" --warm-only --no-check "${T[@]}" >/dev/null 2>&1) &
done
wait
cat "$W/exits.txt" 2>/dev/null
for rep in 1 2; do
  for n in "${MODS[@]}"; do
    timeout 60 bash -c "$(declare -f run); run $n $DIR --variants $V --no-check ${T[*]} --out $W/$n-t$rep.json" >"$W/$n-t$rep.log" 2>&1
  done
done
python3 - "$W" "${MODS[@]}" <<'PY' | tee "$W/summary.txt"
import json, os, sys
d, base, others = sys.argv[1], sys.argv[2], sys.argv[3:]
for n in others:
    if not os.path.exists(f"{d}/{n}-check.json"):
        continue
    rows = json.load(open(f"{d}/{n}-check.json"))["correctness"]
    print(n, "check", sum(x["passed"] for x in rows), "/", len(rows), "worst rel", max(x.get("rel_err") or 0 for x in rows))
best = {}
for n in [base, *others]:
    for rep in (1, 2):
        p = f"{d}/{n}-t{rep}.json"
        if not os.path.exists(p):
            continue
        for t in json.load(open(p))["timing"]:
            k = (n, t["variant"], t["topk"], t["batch"])
            g = t.get("graph_us")
            if g:
                best[k] = min(best.get(k, g), g)
head = f"{'config':22s} {'topk':>5} {'B':>4} {base:>7} " + " ".join(f"{n:>7}" for n in others)
print(head + " " + " ".join(f"{n + '/' + base:>7}" for n in others))
for (n, v, tk, b), g in sorted(best.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][3])):
    if n != base:
        continue
    gs = [best.get((o, v, tk, b)) or 0 for o in others]
    print(f"{v:22s} {tk:5d} {b:4d} {g:7.1f} " + " ".join(f"{x:7.1f}" for x in gs) + " " + " ".join(f"{x / g:7.3f}" for x in gs))
PY
tar -czf "$OUT/$NAME.tar.gz" -C "$W" .
