"""lab/relfit's short table from device.sh's results folder: q5 over base
per shape under each Triton, and the batch-1 candidates' times under each.

    python3 lab/relfit/table.py RESULTS_DIR
"""

import glob
import json
import os
import re
import sys


def best(paths):
    """(entry, variant, heads, batch, topk) -> the faster graph µs of the passes."""
    out = {}
    for p in paths:
        for r in json.load(open(p)).get("timing", []):
            g = r.get("graph_us")
            if not g or r.get("impl", "mlagen") != "mlagen":
                continue
            k = (r.get("entry", "per cache"), r["variant"], r["heads"], r["batch"], r["topk"])
            out[k] = min(out.get(k, g), g)
    return out


def checks(d):
    for p in sorted(glob.glob(os.path.join(d, "check-*.json"))):
        rows = json.load(open(p)).get("correctness", [])
        ok = sum(bool(r.get("passed")) for r in rows)
        worst = max((r.get("rel_err") or 0 for r in rows), default=0)
        print(f"{os.path.basename(p)}: {ok}/{len(rows)} pass, worst rel {worst:.1e}")


def main(d):
    for p in sorted(glob.glob(os.path.join(d, "gpu*.txt"))):
        print(open(p).read().strip())
    checks(d)
    tritons = sorted({re.match(r"ab-\w+?-(.+)-\d\.json", os.path.basename(p)).group(1)
                      for p in glob.glob(os.path.join(d, "ab-*-*-*.json"))})
    for t in tritons:
        base = best(glob.glob(os.path.join(d, f"ab-base-{t}-*.json")))
        q5 = best(glob.glob(os.path.join(d, f"ab-q5-{t}-*.json")))
        print(f"\nq5 / base, Triton {t} (graph µs, the faster of two passes):")
        print(f"  {'entry':10} {'variant':22} {'H':>3} {'B':>4} {'topk':>5} {'base':>7} {'q5':>7} {'q5/base':>7}")
        for k in sorted(base):
            if k in q5 and k[1].startswith("pp_h16"):
                print(f"  {k[0]:10} {k[1]:22} {k[2]:3d} {k[3]:4d} {k[4]:5d} {base[k]:7.1f} {q5[k]:7.1f} {q5[k] / base[k]:7.3f}")
    for t in tritons:
        b1 = best(glob.glob(os.path.join(d, f"b1-{t}-*.json")))
        print(f"\nbatch-1 candidates, Triton {t} (graph µs; ÷ the fastest):")
        shapes = sorted({(k[0], k[2], k[4]) for k in b1 if k[3] == 1})
        for e, h, tk in shapes:
            rows = sorted((g, k[1]) for k, g in b1.items() if (k[0], k[2], k[4]) == (e, h, tk) and k[3] == 1)
            if not rows:
                continue
            fast = rows[0][0]
            cells = ", ".join(f"{v} {g:.1f} ({g / fast:.2f})" for g, v in rows)
            print(f"  {e:10} H {h:3d} topk {tk:5d}: {cells}")


if __name__ == "__main__":
    main(sys.argv[1])
