"""lab/tpheads's table: the sm_120 module's correctness, then its whole call
at the heads SGLang passed before the heads guard (64, padded) and after it
(a rank's own: 16 at TP 4, 8 at TP 8), and padded ÷ own.

    python3 lab/tpheads/summary.py DIR    (DIR: what lab/tpheads/device.sh wrote)
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from results import load  # noqa: E402


def main():
    d = sys.argv[1]
    check, timed = load(d, "sm120-check.json"), load(d, "sm120-time.json")
    if check:
        rows = check["correctness"] + check.get("dispatch", [])
        pad = [x for x in rows if "tppadded" in x.get("case", "")]
        print(
            f"sm120 check: {sum(bool(x.get('passed')) for x in rows)} of {len(rows)} "
            f"passed (16 real heads padded to 64: "
            f"{sum(bool(x.get('passed')) for x in pad)} of {len(pad)}); "
            f"{check['gpu']}, torch {check['torch']}, Triton {check['triton']}"
        )
    us = {}
    for x in timed.get("timing", []):
        if x.get("entry") == "whole call" and "graph_us" in x and not x.get("config"):
            us[x["heads"], x["extra"], x["batch"]] = x["graph_us"]
    print(
        f"{'extra':>5} {'B':>4} | {'H64 µs':>7} {'H16 µs':>7} {'H8 µs':>7} | 64÷16 64÷8"
    )
    for extra, batch in sorted({(e, b) for _, e, b in us}):
        t = [us.get((h, extra, batch)) for h in (64, 16, 8)]
        cells = " ".join(f"{v:7.1f}" if v else f"{'-':>7}" for v in t)
        ratios = " ".join(
            f"{t[0] / v:5.2f}" if t[0] and v else f"{'-':>5}" for v in t[1:]
        )
        print(f"{extra:5d} {batch:4d} | {cells} | {ratios}")


if __name__ == "__main__":
    main()
