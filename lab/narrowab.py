"""lab/narrowab.sh's table from a device run's work folder: the other
copy's correctness, then per entry and shape the fastest configuration of each copy (the faster of
two passes, CUDA-graph µs) and their ratio, then the ratio per
configuration (the same names in both copies).

    python3 lab/narrowab.py WORKDIR COPY
"""

import glob
import json
import os
import sys


def main(d, other):
    p = os.path.join(d, f"check-{other}.json")
    if os.path.exists(p):
        rows = json.load(open(p))["correctness"]
        worst = max((r.get("rel_err") or 0) for r in rows) if rows else float("nan")
        print(
            f"{other} checks {sum(r['passed'] for r in rows)}/{len(rows)} worst rel {worst:.1e}"
        )
    t = {}
    for p in glob.glob(os.path.join(d, "time-*.json")):
        c = os.path.basename(p).split("-")[1]
        for r in json.load(open(p))["timing"]:
            g = r.get("graph_us")
            if not g or r.get("entry") == "one kernel":
                continue
            k = (r.get("entry", "per cache"), r["topk"], r["batch"], r["variant"], c)
            t[k] = min(t.get(k, g), g)
    shapes = sorted({k[:3] for k in t})
    print(
        f"{'entry':10s} {'tok':>5s} {'B':>4s} | {'base best':>28s} | {other + ' best':>28s} | {other}/base | per config"
    )
    for s in shapes:
        best = {}
        for c in ("base", other):
            cand = [(g, k[3]) for k, g in t.items() if k[:3] == s and k[4] == c]
            best[c] = min(cand) if cand else None
        per = sorted(
            t[s + (v, other)] / t[s + (v, "base")]
            for v in {k[3] for k in t if k[:3] == s}
            if s + (v, other) in t and s + (v, "base") in t
        )
        b, q = best["base"], best[other]
        if not b or not q:
            continue
        # No configuration in common (lab/two's copies): no per-config range.
        span = f"{per[0]:.3f}-{per[-1]:.3f}" if per else "-"
        print(
            f"{s[0]:10s} {s[1]:5d} {s[2]:4d} | {b[1]:>21s} {b[0]:6.1f} | {q[1]:>21s} {q[0]:6.1f} | "
            f"{q[0] / b[0]:8.3f} | {span}"
        )


if __name__ == "__main__":
    main(*sys.argv[1:3])
