"""lab/pdl64's table: the copies' checks, then per entry and batch each
copy's time (the faster of two passes, CUDA-graph and eager µs) and the
ratio to base.

    python3 lab/pdl64/summary.py WORKDIR
"""

import glob
import json
import os
import sys

COPIES = ("base", "late", "end")


def main(d):
    for c in COPIES[1:]:
        p = os.path.join(d, f"check-{c}.json")
        if os.path.exists(p):
            rows = json.load(open(p))["correctness"]
            print(f"{c} checks {sum(r['passed'] for r in rows)}/{len(rows)}")
    t = {}
    for p in glob.glob(os.path.join(d, "time-*.json")):
        c = os.path.basename(p).split("-")[1]
        for r in json.load(open(p))["timing"]:
            if r.get("entry") == "one kernel" or not r.get("graph_us"):
                continue
            k = (r.get("entry", "per cache"), r["batch"])
            g, e = t.setdefault(k, {}).get(c, (1e9, 1e9))
            t[k][c] = (min(g, r["graph_us"]), min(e, r.get("us") or 1e9))
    print(
        f"{'entry':10s} {'B':>4s} | "
        + " | ".join(f"{c:>15s}" for c in COPIES)
        + " | late/base end/base"
    )
    for k in sorted(t):
        v = t[k]
        if not all(c in v for c in COPIES):
            continue
        cols = " | ".join(f"{v[c][0]:6.1f} {v[c][1]:7.1f}e" for c in COPIES)
        print(
            f"{k[0]:10s} {k[1]:4d} | {cols} | {v['late'][0] / v['base'][0]:9.3f} {v['end'][0] / v['base'][0]:8.3f}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
