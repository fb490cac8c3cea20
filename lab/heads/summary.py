"""Short table of a lab/heads run: per (heads, topk, batch), each module's
fastest configuration that passed its checks, its graph µs, and the
sm_120 module's best over the sm_90 module's best.

    python3 lab/heads/summary.py DIR
"""

import json
import os
import sys


def best(d, target):
    check = json.load(open(os.path.join(d, f"check-{target}.json")))
    failed = {r["variant"] for r in check["correctness"] if not r["passed"]}
    passed = sum(r["passed"] for r in check["correctness"])
    print(
        f"{target}: {passed}/{len(check['correctness'])} checks pass; failing configurations: {sorted(failed) or 'none'}"
    )
    path = os.path.join(d, f"time-{target}.json")
    if not os.path.exists(path):
        return {}
    out = {}
    for r in json.load(open(path))["timing"]:
        g = r.get("graph_us")
        if (
            not g
            or r.get("error")
            or r["variant"] in failed
            or r["variant"] == "simt_baseline"
        ):
            continue
        k = (r["heads"], r["topk"], r["batch"])
        if k not in out or g < out[k][1]:
            out[k] = (r["variant"], g)
    return out


def main(d):
    b90, b120 = best(d, "sm90"), best(d, "sm120")
    print(
        f"{'H':>3} {'topk':>5} {'B':>4} | {'sm90 best':24s} {'µs':>7} | {'sm120 best':24s} {'µs':>7} | ratio"
    )
    for k in sorted(set(b90) | set(b120)):
        a, b = b90.get(k, ("-", 0)), b120.get(k, ("-", 0))
        ratio = f"{b[1] / a[1]:.2f}" if a[1] and b[1] else "-"
        print(
            f"{k[0]:3d} {k[1]:5d} {k[2]:4d} | {a[0]:24s} {a[1]:7.1f} | {b[0]:24s} {b[1]:7.1f} | {ratio}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
