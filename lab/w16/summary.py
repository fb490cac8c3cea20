"""lab/w16's short table: per copy, its checks, then per entry and shape the
best 8-warp and 16-warp configuration (faster of two passes) and their ratio.

    python3 lab/w16/summary.py WORKDIR
"""

import glob
import json
import os
import sys


def main(d):
    for c in ("w16", "qd"):
        p = f"{d}/check-{c}.json"
        if os.path.exists(p):
            rows = json.load(open(p))["correctness"]
            worst = max((r.get("rel_err") or 0) for r in rows)
            print(
                f"{c} checks {sum(r['passed'] for r in rows)}/{len(rows)} worst rel {worst:.1e}"
            )
    best = {}
    for p in glob.glob(f"{d}/time-*.json"):
        c = os.path.basename(p).split("-")[1]
        for r in json.load(open(p))["timing"]:
            g = r.get("graph_us")
            if not g or r.get("entry") == "one kernel":
                continue
            w = "w16" if "_w16_" in r["variant"] else "w8"
            k = (r.get("entry", "per cache"), r["topk"], r["batch"])
            b = best.setdefault(k, {}).setdefault((c, w), (r["variant"], g))
            if g < b[1]:
                best[k][(c, w)] = (r["variant"], g)
    print(
        f"{'entry':10s} {'tok':>5s} {'B':>4s} {'w8 (w16 copy)':>28s} {'w16':>28s} {'x':>5s} {'qd':>28s} {'x':>5s}"
    )
    for k in sorted(best):
        b = best[k]
        if ("w16", "w8") not in b:
            continue
        base = b[("w16", "w8")]
        line = f"{k[0]:10s} {k[1]:5d} {k[2]:4d} {base[0]:>21s} {base[1]:6.1f}"
        for c in ("w16", "qd"):
            v = b.get((c, "w16"))
            line += (
                f" {v[0]:>21s} {v[1]:6.1f} {v[1] / base[1]:5.2f}"
                if v
                else f" {'-':>28s} {'-':>5s}"
            )
        print(line)


if __name__ == "__main__":
    main(sys.argv[1])
