"""The NOTES.md tables from a device_check.py timing report and the bundles'
selection tables: per shape, the whole call with the configuration the
bundle selects now, one kernel call over the same tokens, today's glue
path and FlashMLA's numbers.

    python3 lab/fused/report.py lab/fused/results/run2/time.json
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import json  # noqa: E402

import base_harness as bh  # noqa: E402
from device_check import FLASHMLA_GRAPH_US, WINDOW  # noqa: E402


def main(path):
    with open(path) as f:
        report = json.load(f)
    mods = {
        t: bh.load_module(os.path.join(HERE, f"{t}_fused.py"))
        for t in ("sm90", "sm120")
    }
    shapes = {}
    for r in report["timing"]:
        shapes.setdefault((r["target"], r["heads"], r["batch"], r["extra"]), []).append(
            r
        )
    f = lambda x: "-" if x is None else f"{x:.1f}"
    ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"
    print(
        "| target | H | B | extra | config (selected) | whole call graph | eager (do_bench) | host µs/call "
        "| one kernel graph | whole / one | one kernel eager shipped; prototype | glue today graph "
        "| glue eager; host | FlashMLA graph | whole / FlashMLA |"
    )
    print("|" + "---|" * 15)
    order = sorted(
        shapes, key=lambda k: (k[0] != "sm90", k[1] != 64, k[1] != 128, k[3], k[2])
    )
    for key in order:
        target, h, b, e = key
        rows = shapes[key]
        by = {}
        for r in rows:
            by.setdefault(r["path"], []).append(r)
        name = mods[target].select_full(h, b, WINDOW + e)
        cand = [r for r in by.get("fused", []) if r["config"] == name]
        entry = by.get("fused_entry", [{}])[0]
        graph = cand[0]["graph_us"] if cand else None
        same = entry.get("config") == name
        eager = entry.get("eager_us") if same else None
        single = by.get("single_shipped", [{}])[0]
        proto = by.get("single_prototype", [{}])[0]
        glue = by.get("glue_today", [{}])[0]
        fm = FLASHMLA_GRAPH_US.get((h, b, e)) if target == "sm90" else None
        print(
            f"| {target} | {h} | {b} | {e} | {name}{'' if same else ' *'} | {f(graph)} | {f(eager)} | "
            f"{f(entry.get('host_us'))} | {f(single.get('graph_us'))} | {ratio(graph, single.get('graph_us'))} | "
            f"{f(single.get('eager_us'))}; {f(proto.get('eager_us'))} | {f(glue.get('graph_us'))} | "
            f"{f(glue.get('eager_us'))}; {f(glue.get('host_us'))} | {f(fm)} | {ratio(graph, fm)} |"
        )
    print()
    print(
        "`*`: run 2's table selected another configuration here; the graph time is this"
    )
    print(
        "configuration's candidate row, the eager time was not measured with it, the host"
    )
    print("time (the same host path) is the entry's.")


if __name__ == "__main__":
    main(sys.argv[1])
