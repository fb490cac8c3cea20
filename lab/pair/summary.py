"""Short table of a lab/pair run: per (entry, heads, topk, batch) the best
head-pair configuration (wsp_*), the best of the shipped module's others,
FlashMLA where timed, graph µs, and the ratios; the checks' count first.

    python3 lab/pair/summary.py DIR [PREFIX]

PREFIX (default wsp_) names the configurations compared with the module's
others (lab/wsa passes wsa_).
"""

import json
import os
import sys


def main(d, prefix="wsp_"):
    label = prefix.rstrip("_")
    path = os.path.join(d, "check.json")
    rows = []
    if os.path.exists(path):
        rows = json.load(open(path)).get("correctness", [])
        ok = sum(1 for r in rows if r.get("passed"))
        print(f"checks: {ok}/{len(rows)} passed")
    else:
        print("checks: none recorded (no check.json: see check.log)")
    for r in rows:
        if not r.get("passed"):
            print(
                "  FAILED",
                r.get("variant"),
                r.get("entry", ""),
                r.get("case"),
                r.get("error", ""),
            )
    t = json.load(open(os.path.join(d, "time.json")))["timing"]
    cells = {}
    for r in t:
        if "graph_us" not in r or r.get("passed") is False:
            continue
        key = (r.get("entry", "per cache"), r["heads"], r["topk"], r["batch"])
        v = r["variant"]
        kind = (
            "flashmla"
            if v == "peer:flashmla"
            else "wsp" if v.startswith(prefix) else "ws"
        )
        if (
            r.get("entry") == "one kernel"
            or v.startswith("peer:")
            and kind != "flashmla"
        ):
            continue
        best = cells.setdefault(key, {})
        if kind not in best or r["graph_us"] < best[kind][1]:
            best[kind] = (v, r["graph_us"])
    # "others": the best of the module's other configurations timed there.
    print(
        f"{'entry':10s} {'H':>3s} {'tok':>5s} {'B':>4s} {label:>26s} {'us':>7s} {'others':>22s} {'us':>7s} {label + '/o':>6s} {'FlashMLA':>8s} {label + '/F':>6s}"
    )
    for key in sorted(cells):
        b = cells[key]
        p, w, f = b.get("wsp"), b.get("ws"), b.get("flashmla")
        line = f"{key[0][:10]:10s} {key[1]:3d} {key[2]:5d} {key[3]:4d} "
        line += f"{p[0] if p else '-':>26s} {p[1] if p else float('nan'):7.1f} "
        line += f"{w[0] if w else '-':>22s} {w[1] if w else float('nan'):7.1f} "
        line += f"{p[1] / w[1] if p and w else float('nan'):6.2f} "
        line += f"{f[1] if f else float('nan'):8.1f} {p[1] / f[1] if p and f else float('nan'):6.2f}"
        print(line)


if __name__ == "__main__":
    main(*sys.argv[1:3])
