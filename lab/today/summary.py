"""lab/today's table: each module then (when issue 26 was filed) and now,
per cache, and the sm_120 module now against the sm_90 module now.

    python3 lab/today/summary.py sm90.json sm120.json

Where the rows have layer times (ab.py from the fifth run on), a second
table gives the same columns for them.
"""

import json
import os
import sys


def main():
    runs = {}
    for path in sys.argv[1:]:
        if os.path.exists(path):
            r = json.load(open(path))
            runs[r["target"]] = {
                (x["heads"], x["topk"], x["batch"]): x for x in r["rows"]
            }
            print(r["target"], r["env"])
    print("\none call a graph (µs):")
    table(runs, "then", "now")
    if any("now_layer" in x for v in runs.values() for x in v.values()):
        print("\nas layers: the µs one call adds to a graph of calls back to back:")
        table(runs, "then_layer", "now_layer")


def table(runs, then, now):
    print(
        f"{'H':>3} {'topk':>5} {'B':>4} | {'sm90 then':>9} {'now':>7} {'then/now':>8} | "
        f"{'sm120 then':>10} {'now':>7} {'then/now':>8} | {'sm120/sm90 now':>14} | worst out diff"
    )
    keys = sorted(set().union(*[set(v) for v in runs.values()])) if runs else []
    for k in keys:
        a, b = runs.get("sm90", {}).get(k), runs.get("sm120", {}).get(k)

        def cols(x):
            if not x:
                return f"{'-':>9} {'-':>7} {'-':>8}"
            return f"{x[then]:9.1f} {x[now]:7.1f} {x[then] / x[now]:8.2f}"

        ratio = f"{b[now] / a[now]:14.2f}" if a and b else f"{'-':>14}"
        diff = max(x["out_rel_diff"] for x in (a, b) if x)
        print(
            f"{k[0]:3d} {k[1]:5d} {k[2]:4d} | {cols(a)} | {cols(b):>28} | {ratio} | {diff:.1e}"
        )


if __name__ == "__main__":
    main()
