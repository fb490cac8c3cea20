"""lab/two's table from a device run's work folder: p2's correctness, then
per shape the fastest shipped narrow configuration (base) and the fastest
two-an-SM one (p2), each the faster of two passes, CUDA-graph µs.

    python3 lab/two/summary.py WORKDIR
"""

import json
import os
import sys


def best_of(d, copy):
    best = {}
    for rep in (1, 2):
        p = os.path.join(d, f"time-{copy}-{rep}.json")
        if not os.path.exists(p):
            continue
        for t in json.load(open(p))["timing"]:
            g = t.get("graph_us")
            if g:
                k = (t["topk"], t["batch"], t["variant"])
                best[k] = min(best.get(k, g), g)
    return best


def main():
    d = sys.argv[1]
    p = os.path.join(d, "check-p2.json")
    if os.path.exists(p):
        rows = json.load(open(p))["correctness"]
        worst = max((x.get("rel_err") or 0) for x in rows) if rows else float("nan")
        passed = sum(x["passed"] for x in rows)
        print(f"p2 check {passed} / {len(rows)} passed, worst rel {worst:.1e}")
    base, p2 = best_of(d, "base"), best_of(d, "p2")
    print(
        f"{'topk':>5} {'B':>4} | {'base best':>28} {'µs':>7} | {'p2 best':>28} {'µs':>7} | p2/base"
    )
    for topk, batch in sorted(
        {(k[0], k[1]) for k in base} | {(k[0], k[1]) for k in p2}
    ):
        b = min(
            ((g, v) for (t, bb, v), g in base.items() if (t, bb) == (topk, batch)),
            default=None,
        )
        q = min(
            ((g, v) for (t, bb, v), g in p2.items() if (t, bb) == (topk, batch)),
            default=None,
        )
        cb = f"{b[1]:>28} {b[0]:7.1f}" if b else f"{'-':>28} {'-':>7}"
        cq = f"{q[1]:>28} {q[0]:7.1f}" if q else f"{'-':>28} {'-':>7}"
        r = f"{q[0] / b[0]:7.2f}" if b and q else "-"
        print(f"{topk:5d} {batch:4d} | {cb} | {cq} | {r}")
    print("every p2 configuration:")
    for (topk, batch, v), g in sorted(p2.items()):
        print(f"  {topk:5d} {batch:4d} {v:24s} {g:7.1f}")


if __name__ == "__main__":
    main()
