"""lab/tp8's table: correctness per module, then each module's time at 8
and 16 heads, per cache and as the whole call, and sm_120 ÷ sm_90.

    python3 lab/tp8/summary.py DIR    (DIR: what lab/tp8/device.sh wrote)
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from results import load  # noqa: E402


def main():
    d = sys.argv[1]
    # Each file read once: a CHECK_ONLY run has no timing files.
    runs = {
        (target, part): load(d, f"{target}-{part}.json")
        for target in ("sm90", "sm120")
        for part in ("check", "time")
    }
    for target in ("sm90", "sm120"):
        for part in ("check", "time"):
            r = runs[target, part]
            if not r:
                continue
            rows = r["correctness"] + r.get("dispatch", [])
            h8 = [x for x in rows if "h8" in x.get("case", "")]
            pad = [x for x in rows if "tppadded" in x.get("case", "")]
            worst = max((x.get("rel_err") or 0 for x in rows), default=0)
            print(
                f"{target} {part}: {sum(bool(x.get('passed')) for x in rows)} of "
                f"{len(rows)} passed (8-head cases: "
                f"{sum(bool(x.get('passed')) for x in h8)} of {len(h8)}; 16 real "
                f"heads padded to 64: {sum(bool(x.get('passed')) for x in pad)} of "
                f"{len(pad)}), "
                f"worst relative error {worst:.1e}; {r['gpu']}, torch {r['torch']}, "
                f"Triton {r['triton']}"
            )
    times = {}
    for target in ("sm90", "sm120"):
        for x in runs[target, "time"].get("timing", []):
            if (
                "graph_us" not in x
                or x.get("config")
                or x.get("impl", "mlagen") != "mlagen"
                or x["variant"].startswith("peer:")
            ):
                continue
            entry = x.get("entry")
            if entry is None:
                key = ("per cache", x["heads"], x["topk"], x["batch"])
            elif entry == "whole call":
                key = ("whole call", x["heads"], x["extra"], x["batch"])
            else:
                continue
            times.setdefault(key, {})[target] = (x["graph_us"], x["variant"])
    print(
        f"{'':10} {'H':>3} {'topk':>6} {'B':>4} | {'sm90 µs':>8} {'sm120 µs':>8} "
        f"{'120÷90':>6} | H8 ÷ H16: {'sm90':>5} {'sm120':>5} | sm_90 / sm_120 kernels at H 8"
    )
    for key in sorted(times):
        entry, heads, tokens, batch = key
        t = times[key]
        a = t.get("sm90", (None, "-"))
        b = t.get("sm120", (None, "-"))
        ratio = f"{b[0] / a[0]:6.2f}" if a[0] and b[0] else f"{'-':>6}"
        rel = ""
        if heads == 8:
            other = times.get((entry, 16, tokens, batch), {})

            def r8(target, now):
                base = other.get(target, (None,))[0]
                return f"{now / base:5.2f}" if now and base else f"{'-':>5}"

            rel = f"{r8('sm90', a[0])} {r8('sm120', b[0])} | {a[1]} / {b[1]}"
        fa = f"{a[0]:8.1f}" if a[0] else f"{'-':>8}"
        fb = f"{b[0]:8.1f}" if b[0] else f"{'-':>8}"
        print(
            f"{entry:10} {heads:3d} {tokens:6d} {batch:4d} | {fa} {fb} {ratio} | "
            f"{'':9} {rel}"
        )


if __name__ == "__main__":
    main()
