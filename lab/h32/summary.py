"""lab/h32's table from a device run's folder: correctness of h32's
configurations, then per shape the fastest configuration of each copy
(the better of two passes) and of the sm_90 module, and the ratios.

    python3 lab/h32/summary.py RESULTS
"""

import json
import os
import sys


def best(d, name):
    """{(topk, batch): (µs, variant)}: the fastest time a shape, over the
    copy's two passes (the sm_90 module's one)."""
    files = ["sm90.json"] if name == "sm90" else [f"{name}-t1.json", f"{name}-t2.json"]
    out = {}
    for f in files:
        p = os.path.join(d, f)
        if not os.path.exists(p):
            continue
        for t in json.load(open(p))["timing"]:
            g = t.get("graph_us")
            k = (t["topk"], t["batch"])
            if g and (k not in out or g < out[k][0]):
                out[k] = (g, t["variant"])
    return out


def main():
    d = sys.argv[1]
    check = os.path.join(d, "h32-check.json")
    if os.path.exists(check):
        rows = json.load(open(check))["correctness"]
        worst = max(x.get("rel_err") or 0 for x in rows)
        passed = sum(x["passed"] for x in rows)
        print(f"h32 check {passed} / {len(rows)} worst rel {worst:.2e}")
    b, n, s = best(d, "base"), best(d, "h32"), best(d, "sm90")
    print(
        f"{'topk':>5} {'B':>4} {'base':>7} {'h32':>7} {'h32/base':>8} {'sm90':>7} "
        f"{'base/90':>7} {'h32/90':>7}  h32 config"
    )
    for k in sorted(b):
        if k not in n:
            continue
        line = f"{k[0]:5d} {k[1]:4d} {b[k][0]:7.1f} {n[k][0]:7.1f} {n[k][0] / b[k][0]:8.3f}"
        if k in s:
            line += f" {s[k][0]:7.1f} {b[k][0] / s[k][0]:7.2f} {n[k][0] / s[k][0]:7.2f}"
        print(line + f"  {n[k][1]}")


if __name__ == "__main__":
    main()
