"""lab/qreg16's sweep in short: per shape at 16 and 32 heads, the fastest
of the configurations it timed, now and in lab/onesm (the module before Q
stayed in registers), per cache and as the whole call; then the checks.

    python3 lab/qreg16/summary.py WORKDIR
"""

import json
import os
import sys

ROOT = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")
)


def best(rows, heads, entry, variants):
    out = {}
    for r in rows:
        g = r.get("graph_us")
        if r.get("heads") != heads or not g or r.get("entry", "per cache") != entry:
            continue
        if r["variant"] not in variants:
            continue
        k = (r["topk"], r["batch"])
        if k not in out or g < out[k][0]:
            out[k] = (g, r["variant"])
    return out


def main(d):
    checks = json.load(open(os.path.join(d, "check-sm120.json")))["correctness"]
    print(f"checks: {sum(r['passed'] for r in checks)}/{len(checks)}")
    then_dir = os.path.join(ROOT, "lab/onesm/results")
    for name, entry, heads_list in (
        ("time", "per cache", (16, 32)),
        ("whole", "whole call", (16,)),
    ):
        path = os.path.join(d, f"{name}-sm120.json")
        if not os.path.exists(path):
            print(f"{name}: no results")
            continue
        now = json.load(open(path))["timing"]
        then = json.load(open(os.path.join(then_dir, f"{name}-sm120.json")))["timing"]
        for heads in heads_list:
            variants = {r["variant"] for r in now}
            a = best(now, heads, entry, variants)
            b = best(then, heads, entry, variants)
            print(
                f"{entry} H {heads}: tokens B | now µs config | lab/onesm µs config | ratio"
            )
            for k in sorted(a):
                g, v = a[k]
                g0, v0 = b.get(k, (0, "-"))
                ratio = g / g0 if g0 else 0
                print(
                    f"  {k[0]:5d} {k[1]:4d} | {g:7.1f} {v:22s} | {g0:7.1f} {v0:22s} | {ratio:5.2f}"
                )


if __name__ == "__main__":
    main(sys.argv[1])
