"""lab/prefill's table from a device run's work folder: per module, the
timed shapes' checks, then per entry and shape the module's own selection
(CUDA-graph and eager µs, eager µs per batch row, fraction of the roofline
floor) and FlashMLA's decode where it ran.

    python3 lab/prefill/summary.py WORKDIR
"""

import json
import os
import sys


def _us(row, key):
    """A time column: '-' where the row or its time is missing (a peer
    that declined the shape)."""
    v = (row or {}).get(key)
    return f"{v:8.1f}" if v else f"{'-':>8s}"


def main(d):
    for module in ("sm90", "sm120"):
        p = os.path.join(d, f"{module}.json")
        if not os.path.exists(p):
            print(f"{module}: no results")
            continue
        res = json.load(open(p))
        timed = [
            r for r in res["correctness"] if str(r.get("case", "")).startswith("timed")
        ]
        mine = [r for r in timed if not str(r.get("variant", "")).startswith("peer:")]
        print(
            f"{module}: timed shapes {sum(r['passed'] for r in mine)}/{len(mine)} pass,"
            f" worst rel {max((r.get('rel_err') or 0) for r in mine) if mine else float('nan'):.1e}"
        )
        rows = {}
        for r in res["timing"]:
            if r.get("entry") == "one kernel":
                continue
            entry = r.get("entry", "per cache")
            who = r.get("impl") or "mlagen"
            rows.setdefault((entry, r["heads"], r["topk"], r["batch"]), {})[who] = r
        print(
            f"  {'entry':10s} {'H':>3s} {'tok':>5s} {'B':>5s} | {'graph':>8s} {'eager':>8s} {'/row':>6s} {'floor':>6s} | {'FlashMLA':>8s} {'eager':>8s} | config"
        )
        for k in sorted(rows):
            m, f = rows[k].get("mlagen"), rows[k].get("flashmla")
            if not m:
                continue
            frac = m["floor_us"] / m["us"] if m.get("us") else float("nan")
            fl = " ".join(_us(f, key) for key in ("graph_us", "us"))
            print(
                f"  {k[0]:10s} {k[1]:3d} {k[2]:5d} {k[3]:5d} | {m['graph_us']:8.1f} {m['us']:8.1f} {m['us'] / k[3]:6.3f} {frac:6.1%} | {fl} | {m['variant']}"
            )


if __name__ == "__main__":
    main(sys.argv[1])
