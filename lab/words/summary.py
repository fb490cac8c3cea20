"""The short table of lab/words/device.sh: per cache, the best pipelined
configuration of the new and the old sm_120 module against the sm_90
module's selection (CUDA-graph µs), and correctness.

    python3 lab/words/summary.py OUT
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summary2 import load, print_checks  # noqa: E402 - beside this file


def best(r, heads, prefix):
    """(heads, topk, batch) -> (graph µs, config) of the fastest config of
    the given block size that passed."""
    out = {}
    for t in r["timing"] if r else []:
        if t.get("window") or "impl" in t or t.get("passed") is False:
            continue
        if not t["variant"].startswith(prefix):
            continue
        k = (t["heads"], t["topk"], t["batch"])
        if k[0] != heads:
            continue
        g = t.get("graph_us") or t.get("us")
        if g and (k not in out or g < out[k][0]):
            out[k] = (g, t["variant"])
    return out


def main(d):
    print_checks(d, ("new-check.json", "new-check-sel.json"))
    new, old, s90 = load(d, "tnew.json"), load(d, "told.json"), load(d, "t90.json")
    base = {}
    for t in s90["timing"] if s90 else []:
        if not t.get("window") and "impl" not in t:
            base[(t["heads"], t["topk"], t["batch"])] = (
                t.get("graph_us") or t.get("us"),
                t["variant"],
            )
    print("\nper cache, CUDA-graph µs; best passing pp config at its heads:")
    print(
        f"{'H':>3} {'topk':>5} {'B':>4} | {'sm90':>7} | {'old pp':>7} {'/sm90':>6} | {'new pp':>7} {'/sm90':>6} {'new/old':>7} | new config"
    )
    for heads, prefix in ((64, "pp_h64"), (16, "pp_h16"), (64, "pp_h16")):
        bn, bo = best(new, heads, prefix), best(old, heads, prefix)
        for k in sorted(bn):
            g90 = base.get(k, (None, ""))[0]
            gn, cn = bn[k]
            go = bo.get(k, (None, ""))[0]
            r = lambda a, b: f"{a / b:.2f}" if a and b else "-"
            print(
                f"{k[0]:>3} {k[1]:>5} {k[2]:>4} | {g90 or 0:7.1f} | {go or 0:7.1f} {r(go, g90):>6} | {gn:7.1f} {r(gn, g90):>6} {r(gn, go):>7} | {cn}"
            )
    w = load(d, "tnew-whole.json")
    if w:
        print("\nwhole call, new sm_120 module's selection, graph µs:")
        for t in w["timing"]:
            if t.get("window") and t.get("entry") in ("whole call", "one kernel"):
                print(
                    f"  H{t['heads']} B{t['batch']} e{t['extra']} {t['entry']:10s} {t.get('graph_us') or 0:7.1f} {t.get('variant', '')} passed={t.get('passed')}"
                )


if __name__ == "__main__":
    main(sys.argv[1])
