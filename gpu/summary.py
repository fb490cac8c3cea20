"""Print the short table of a harness results file: per shape, the fastest
configuration that passed every correctness case, its roofline fraction and
its speed-up over the per-head SIMT baseline.

    python3 gpu/summary.py kernels/sm90/results.json
"""

import json
import sys

from report import best_per_shape, served


def summarize(path):
    with open(path) as f:
        r = json.load(f)
    if "timing" not in r:
        return
    failed = {c["variant"] for c in r["correctness"] if not c["passed"]}
    ok = sum(c["passed"] for c in r["correctness"])
    print(
        f"\n{r['target']} on {r['gpu']}, torch {r['torch']}, triton {r['triton']}, {r['date']}: "
        f"{ok}/{len(r['correctness'])} correctness rows passed; failed variants: {sorted(failed) or 'none'}"
    )
    print(
        f"{'topk':>5} {'B':>4} {'best variant':28} {'us':>9} {'graph us':>9} {'floor':>7} {'roofline':>8} {'SIMT us':>9} {'xSIMT':>7}"
    )
    for b, k, best, simt in best_per_shape(r):
        g = f"{best['graph_us']:.1f}" if best["graph_us"] else "-"
        s = f"{served(simt):.0f}" if simt else "-"
        x = f"{served(simt) / served(best):.0f}x" if simt else "-"
        print(
            f"{k:>5} {b:>4} {best['variant']:28} {best['us']:9.1f} {g:>9} {best['floor_us']:7.1f} {best['floor_us'] / served(best):8.1%} {s:>9} {x:>7}"
        )


for p in sys.argv[1:]:
    if not p.endswith((".calib.json", ".budget.json")):
        summarize(p)
