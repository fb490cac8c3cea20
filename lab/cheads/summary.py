"""lab/cheads' table: the copies' checks, then per module, entry, heads,
tokens and batch the configuration, base's time (the faster of two passes,
CUDA-graph µs) and each copy's ratio to it.

    python3 lab/cheads/summary.py WORKDIR
"""

import glob
import json
import os
import re
import sys


def main(d):
    for p in sorted(glob.glob(os.path.join(d, "check-*.json"))):
        rows = json.load(open(p))["correctness"]
        worst = max((r.get("rel_err") or 0 for r in rows), default=0)
        print(
            f"{os.path.basename(p)[6:-5]} checks {sum(r['passed'] for r in rows)}/{len(rows)}"
            f", worst relative error {worst:.1e}"
        )
    t = {}
    for p in glob.glob(os.path.join(d, "time-*.json")):
        m = re.match(r"time-([a-z]+)(90|120)-\d\.json", os.path.basename(p))
        copy, target = m.group(1), m.group(2)
        for r in json.load(open(p))["timing"]:
            if not r.get("graph_us"):
                continue
            k = (target, r.get("entry", "per cache"), r["heads"], r["topk"], r["batch"])
            cell = t.setdefault(k, {"config": r["variant"]})
            cell[copy] = min(cell.get(copy, 1e9), r["graph_us"])
    print(
        f"{'sm':>3s} {'entry':10s} {'H':>3s} {'tokens':>6s} {'B':>3s} {'config':24s}"
        f" {'base':>7s} {'hp':>6s} {'hps':>6s}"
    )
    for k in sorted(t):
        v = t[k]
        if "base" not in v or "hp" not in v:
            continue
        hps = f"{v['hps'] / v['base']:6.3f}" if "hps" in v else ""
        print(
            f"{k[0]:>3s} {k[1]:10s} {k[2]:3d} {k[3]:6d} {k[4]:3d} {v['config']:24s} "
            f"{v['base']:7.1f} {v['hp'] / v['base']:6.3f} {hps}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
