"""Short table of a lab/wst run: per (entry, heads, topk, batch) the best
of the shipped module's configurations, the best wst_* of each copy, graph
µs and the ratios to the shipped best; the checks' count first.

    python3 lab/wst/summary.py DIR COPY...
"""

import json
import os
import sys


def main(d, copies):
    for c in copies:
        path = os.path.join(d, f"check-{c}.json")
        if not os.path.exists(path):
            print(f"{c} checks: none recorded (see check-{c}.log)")
            continue
        rows = json.load(open(path)).get("correctness", [])
        ok = sum(1 for r in rows if r.get("passed"))
        print(f"{c} checks: {ok}/{len(rows)} passed")
        for r in rows:
            if not r.get("passed"):
                print(
                    "  FAILED",
                    r.get("variant"),
                    r.get("entry", ""),
                    r.get("case"),
                    r.get("error", ""),
                )
    cells = {}
    failed = {}
    for c in copies:
        path = os.path.join(d, f"time-{c}.json")
        if not os.path.exists(path):
            continue
        for r in json.load(open(path))["timing"]:
            if (
                "graph_us" not in r
                or not r.get("graph_us")
                or r.get("entry") == "one kernel"
            ):
                continue
            if r.get("passed") is False:
                # Kept in the table: a probe's results are wrong by design.
                failed[c] = failed.get(c, 0) + 1
            key = (r.get("entry", "per cache"), r["heads"], r["topk"], r["batch"])
            kind = c if r["variant"].startswith("wst_") else "shipped"
            best = cells.setdefault(key, {})
            if kind not in best or r["graph_us"] < best[kind][1]:
                best[kind] = (r["variant"], r["graph_us"])
    for c, n in failed.items():
        print(f"{c}: {n} timed shapes failed their check")
    head = f"{'entry':10s} {'H':>3s} {'tok':>5s} {'B':>4s} {'shipped':>22s} {'us':>7s}"
    for c in copies:
        head += f" {c:>22s} {'us':>7s} {'x':>5s}"
    print(head)
    for key in sorted(cells):
        best = cells[key]
        s = best.get("shipped")
        line = f"{key[0]:10s} {key[1]:3d} {key[2]:5d} {key[3]:4d} "
        line += f"{s[0]:>22s} {s[1]:7.1f}" if s else f"{'-':>22s} {'-':>7s}"
        for c in copies:
            b = best.get(c)
            if b:
                ratio = f"{b[1] / s[1]:5.2f}" if s else "    -"
                line += f" {b[0]:>22s} {b[1]:7.1f} {ratio}"
            else:
                line += f" {'-':>22s} {'-':>7s} {'-':>5s}"
        print(line)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
