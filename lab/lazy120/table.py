"""The short table lab/lazy120/device.sh prints last: the lazy tiles'
checks, then per configuration and shape the shipped tile's time (both
runs), the lazy one's, and lazy / the mean of the shipped runs.

    python3 lab/lazy120/table.py WORKDIR
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from results import load  # noqa: E402


def times(work, name):
    out = {}
    for r in load(work, name).get("timing", []):
        if "graph_us" in r and r.get("entry", "per cache") == "per cache":
            out[(r["variant"], r["heads"], r["batch"], r["topk"])] = r["graph_us"]
    return out


def main():
    work = sys.argv[1]
    rows = load(work, "check-lazy.json").get("correctness", [])
    bad = sorted({r["variant"] for r in rows if not r["passed"]})
    print(
        f"checks, lazy: {sum(r['passed'] for r in rows)}/{len(rows)} pass"
        + (f"; failing: {', '.join(bad)}" if bad else "")
    )
    base, lazy, base2 = (
        times(work, f"time-{n}.json") for n in ("base", "lazy", "base2")
    )
    print(
        f"{'configuration':22s} {'H':>3s} {'B':>4s} {'topk':>5s} | {'base':>7s} {'lazy':>7s} {'base2':>7s} | lazy/base"
    )
    for key in sorted(lazy, key=lambda k: (k[1], k[2], k[3], k[0])):
        v, h, b, t = key
        # The tables' split count for the batch: k8 at 16, k2 at 64, k1 at 128.
        if {16: "_k8_", 64: "_k2_", 128: "_k1_"}[b] not in v:
            continue
        if h == 16 and not v.startswith("pp_h16"):
            continue
        if h == 64 and not v.startswith("pp_h64"):
            continue
        b1, b2 = base.get(key), base2.get(key)
        ref = [x for x in (b1, b2) if x is not None]
        ratio = lazy[key] / (sum(ref) / len(ref)) if ref else float("nan")
        f = lambda x: f"{x:7.1f}" if x is not None else "      -"
        print(
            f"{v:22s} {h:3d} {b:4d} {t:5d} | {f(b1)} {f(lazy[key])} {f(b2)} | {ratio:.3f}"
        )


if __name__ == "__main__":
    main()
