"""A lab A/B's table from its device call's work folder: each copy's
correctness checks (check-COPY.json), then per module, entry, heads,
tokens and batch the configuration, base's time (the faster of two passes,
CUDA-graph µs) and each other copy's ratio to it. The timing files are
time-<copy><target>-<pass>.json, a copy's name ending in `_` where it
would run into the target (r64_90).

    python3 lab/ratios.py WORKDIR COPY...     # e.g. lab/creg: r64 r128
"""

import glob
import json
import os
import re
import sys


def main(d, others):
    for p in sorted(glob.glob(os.path.join(d, "check-*.json"))):
        rows = json.load(open(p))["correctness"]
        worst = max((r.get("rel_err") or 0 for r in rows), default=0)
        print(
            f"{os.path.basename(p)[6:-5]} checks {sum(r['passed'] for r in rows)}/{len(rows)}"
            f", worst relative error {worst:.1e}"
        )
    t = {}
    for p in glob.glob(os.path.join(d, "time-*.json")):
        m = re.match(r"time-([a-z0-9]+?)_?(90|120)-\d\.json", os.path.basename(p))
        copy, target = m.group(1), m.group(2)
        for r in json.load(open(p))["timing"]:
            if not r.get("graph_us"):
                continue
            k = (target, r.get("entry", "per cache"), r["heads"], r["topk"], r["batch"])
            cell = t.setdefault(k, {"config": r["variant"]})
            cell[copy] = min(cell.get(copy, 1e9), r["graph_us"])
    print(
        f"{'sm':>3s} {'entry':10s} {'H':>3s} {'tokens':>6s} {'B':>3s} {'config':24s}"
        f" {'base':>7s} " + " ".join(f"{c:>6s}" for c in others)
    )
    for k in sorted(t):
        v = t[k]
        if "base" not in v or others[0] not in v:
            continue
        ratios = " ".join(f"{v[c] / v['base']:6.3f}" if c in v else "" for c in others)
        print(
            f"{k[0]:>3s} {k[1]:10s} {k[2]:3d} {k[3]:6d} {k[4]:3d} {v['config']:24s} "
            f"{v['base']:7.1f} {ratios}"
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
