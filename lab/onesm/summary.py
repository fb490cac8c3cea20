"""lab/onesm's short table: per 16-head shape, the fastest configuration
now (maxnreg 255) beside lab/heads's fastest (ptxas's own 128 registers,
two programs an SM on the H200), per cache; then the checks.

    python3 lab/onesm/summary.py WORKDIR
"""

import json
import os
import sys

ROOT = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")
)


def best(rows, heads):
    out = {}
    for r in rows:
        g = r.get("graph_us")
        if (
            r.get("heads") != heads
            or not g
            or r.get("entry", "per cache") != "per cache"
        ):
            continue
        k = (r["topk"], r["batch"])
        if k not in out or g < out[k][0]:
            out[k] = (g, r["variant"])
    return out


def main(d):
    checks = json.load(open(os.path.join(d, "check-sm120.json")))["correctness"]
    print(f"checks: {sum(r['passed'] for r in checks)}/{len(checks)}")
    now = json.load(open(os.path.join(d, "time-sm120.json")))["timing"]
    then = json.load(open(os.path.join(ROOT, "lab/heads/results/time-sm120.json")))[
        "timing"
    ]
    for heads in (16, 32, 64):
        a, b = best(now, heads), best(then, heads)
        print(f"H {heads}: topk B | now µs config | lab/heads µs config | ratio")
        for k in sorted(a):
            g, v = a[k]
            g0, v0 = b.get(k, (0, "-"))
            print(
                f"  {k[0]:5d} {k[1]:4d} | {g:7.1f} {v:22s} | {g0:7.1f} {v0:22s} | {g / g0 if g0 else 0:5.2f}"
            )


if __name__ == "__main__":
    main(sys.argv[1])
