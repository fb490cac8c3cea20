#!/usr/bin/env bash
# lab/e4m3, last call: the sm_86 and sm_80 modules exactly as emitted (their
# new selection tables included) through their own entry points
# (--variants selected) on the lent H200, DISABLE_MMA_V3=1: every harness
# check (the dequantisation probe, the correctness cases per cache and as
# the whole call through supports / sparse_decode and supports_full /
# sparse_decode_full), then the route's time per cache at H 64 and 16 and
# the whole call's (window 128 + extra 512 and 2048) at H 64 and 16,
# CUDA-graph replay. From the repository root:
#   bash lab/e4m3/shipped.sh        # $OUT/shipped.tar.gz, short table last
set -u
OUT=${OUT:-/tmp/e4m3-shipped}
W=/tmp/e4m3-shipped-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
A=(--variants selected --peers none)
T=(--heads 64,16 --topks 512,2048 --batches 1,16,64,128 --whole-heads 64,16 --no-check)
run() { env DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/c-$1 python3 kernels/$1/harness.py "${@:2}"; }
for t in sm86 sm80; do
  (run $t "${A[@]}" --no-timing --out "$W/check-$t.json" >"$W/check-$t.log" 2>&1; echo "check-$t exit $?" >>"$W/exits.txt") &
  (run $t "${A[@]}" "${T[@]}" --warm-only >"$W/warm-$t.log" 2>&1; echo "warm-$t exit $?" >>"$W/exits.txt") &
done
wait
cat "$W/exits.txt"
for t in sm86 sm80; do
  timeout 120 bash -c "$(declare -f run); run $t ${A[*]} ${T[*]} --out $W/time-$t.json" >"$W/time-$t.log" 2>&1
  echo "time-$t exit $?"
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import json, os, sys
d = sys.argv[1]
for t in ("sm86", "sm80"):
    p = f"{d}/check-{t}.json"
    if not os.path.exists(p):
        print(t, "no check results")
        continue
    r = json.load(open(p))
    c, s = r["correctness"] + r["dispatch"], r["supports"]
    dq = r.get("dequant") or {}
    print(f"{t}: {sum(x['passed'] for x in c)}/{len(c)} correctness and dispatch rows, "
          f"{sum(x['passed'] for x in s)}/{len(s)} supports checks, dequantisation {dq.get('wrong')} wrong of {dq.get('values')}")
    p = f"{d}/time-{t}.json"
    if not os.path.exists(p):
        continue
    rows = json.load(open(p))["timing"]
    for r in rows:
        if r.get("graph_us") and r.get("impl", "mlagen") == "mlagen":
            what = r.get("entry", "per cache")
            size = r.get("topk") or r.get("extra_topk")
            print(f"  {t} {what:12s} H {r.get('heads'):>3} B {r.get('batch'):>3} tokens {size!s:>5} {r['graph_us']:8.1f} µs {'' if r.get('passed', True) else 'FAIL'}")
PY
tar -czf "$OUT/shipped.tar.gz" -C "$W" .
