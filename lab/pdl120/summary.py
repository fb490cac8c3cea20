"""lab/pdl120's table from a device run's work folder: `late`'s
correctness, then per entry, heads and shape each configuration's time in
both copies (the faster of two passes, CUDA-graph µs) and their ratio.

    python3 lab/pdl120/summary.py WORKDIR
"""

import glob
import json
import os
import sys


def main(d):
    p = os.path.join(d, "check-late.json")
    if os.path.exists(p):
        rows = json.load(open(p))["correctness"]
        worst = max((r.get("rel_err") or 0) for r in rows) if rows else float("nan")
        print(
            f"late checks {sum(r['passed'] for r in rows)}/{len(rows)} worst rel {worst:.1e}"
        )
    t = {}
    for p in glob.glob(os.path.join(d, "time-*.json")):
        copy = os.path.basename(p).split("-")[1]
        for r in json.load(open(p))["timing"]:
            g = r.get("graph_us")
            if not g or r.get("entry") == "one kernel":
                continue
            k = (
                r.get("entry", "per cache"),
                r["heads"],
                r["topk"],
                r["batch"],
                r["variant"],
            )
            t.setdefault(k, {})
            t[k][copy] = min(t[k].get(copy, g), g)
    print(
        f"{'entry':10s} {'H':>3s} {'tok':>5s} {'B':>4s} {'config':22s} {'base':>7s} {'late':>7s} late/base"
    )
    for k in sorted(t):
        v = t[k]
        if "base" in v and "late" in v:
            print(
                f"{k[0]:10s} {k[1]:3d} {k[2]:5d} {k[3]:4d} {k[4]:22s} {v['base']:7.1f} {v['late']:7.1f} {v['late'] / v['base']:8.3f}"
            )


if __name__ == "__main__":
    main(sys.argv[1])
