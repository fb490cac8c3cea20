"""lab/creg's table: the r128 copies' checks, then per module, entry, heads,
tokens and batch the configuration, base's time (the faster of two passes,
CUDA-graph µs) and each copy's ratio to it.

    python3 lab/creg/summary.py WORKDIR
"""

import glob
import json
import os
import re
import sys


def main(d):
    for p in sorted(glob.glob(os.path.join(d, "check-*.json"))):
        rows = json.load(open(p))["correctness"]
        print(
            f"{os.path.basename(p)[6:-5]} checks {sum(r['passed'] for r in rows)}/{len(rows)}"
        )
    t = {}
    for p in glob.glob(os.path.join(d, "time-*.json")):
        m = re.match(r"time-(base|r64_|r128_)(90|120)-\d\.json", os.path.basename(p))
        copy, target = m.group(1).rstrip("_"), m.group(2)
        for r in json.load(open(p))["timing"]:
            if not r.get("graph_us"):
                continue
            entry = r.get("entry", "per cache")
            tokens = r["topk"]
            k = (target, entry, r["heads"], tokens, r["batch"])
            cell = t.setdefault(k, {"config": r["variant"]})
            cell[copy] = min(cell.get(copy, 1e9), r["graph_us"])
    print(
        f"{'sm':>3s} {'entry':10s} {'H':>3s} {'tokens':>6s} {'B':>3s} {'config':24s} {'base':>7s} {'r64':>6s} {'r128':>6s}"
    )
    for k in sorted(t):
        v = t[k]
        if not all(c in v for c in ("base", "r64", "r128")):
            continue
        print(
            f"{k[0]:>3s} {k[1]:10s} {k[2]:3d} {k[3]:6d} {k[4]:3d} {v['config']:24s} "
            f"{v['base']:7.1f} {v['r64'] / v['base']:6.3f} {v['r128'] / v['base']:6.3f}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
