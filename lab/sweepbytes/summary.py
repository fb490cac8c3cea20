"""The short table of lab/sweepbytes/selected.sh: each module's checks and
its time through its own entry points (CUDA-graph replay, µs).

    python3 lab/sweepbytes/summary.py DIR      # DIR/sm86.json, sm80.json, sm89.json
"""

import json
import sys


def main():
    folder = sys.argv[1]
    for target in ("sm86", "sm80", "sm89"):
        run = json.load(open(f"{folder}/{target}.json"))
        passed = [r["passed"] for r in run["correctness"]]
        print(f"{target}: checks {sum(passed)}/{len(passed)}")
        rows = {}
        for r in run["timing"]:
            # Per-cache rows carry no impl; peers and other configurations do.
            if r.get("impl", "mlagen") != "mlagen" or r.get("config"):
                continue
            if r.get("entry") == "one kernel":
                continue
            key = (r.get("entry") or "per cache", r["heads"], r["topk"], r["batch"])
            rows[key] = (r.get("graph_us"), r["variant"])
        for (entry, heads, topk, batch), (us, variant) in sorted(rows.items()):
            print(
                f"  {entry:10s} H{heads:<3d} {topk:5d} B{batch:<4d} {us:7.1f}  {variant}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
