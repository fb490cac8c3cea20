"""Merge one device run's JSON files into one and print its short table.

    python3 summary.py --checks 'c_*.json' --times t120.json,t90.json --out run.json

Per shape: the sm_90 module, the shipped sm_120 module, the fastest lab
configuration that passed every correctness case, its ratio to the sm_90
module (the issue's target: at most 1.5), and its fraction of the H200's
roofline floor.
"""

import argparse
import glob
import json
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--checks", required=True, help="glob of check JSON files")
    ap.add_argument("--times", required=True, help="comma list of timing JSON files")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    checks, times, metas = [], [], []
    for path in sorted(glob.glob(args.checks)):
        with open(path) as f:
            r = json.load(f)
        checks += r["correctness"]
        metas.append(
            {k: v for k, v in r.items() if k not in ("correctness", "warmed")}
            | {"warm_errors": [w for w in r["warmed"] if len(w) > 4]}
        )
    for path in args.times.split(","):
        try:
            with open(path) as f:
                r = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: {e}")
            continue
        times += r["timing"]
        metas.append({k: v for k, v in r.items() if k != "timing"})
    failed = sorted({c["variant"] for c in checks if not c["passed"]})
    checked = {c["variant"] for c in checks}
    with open(args.out, "w") as f:
        json.dump({"runs": metas, "correctness": checks, "timing": times}, f, indent=1)

    print(
        f"correctness: {len(checks)} rows, {len(checked)} variants, "
        f"{len(failed)} failing: {', '.join(failed) or 'none'}"
    )
    shapes = sorted({(t["heads"], t["topk"], t["batch"]) for t in times})
    print(
        f"{'H':>3s} {'topk':>5s} {'B':>4s} {'sm90':>7s} {'sm120':>7s} {'lab best':>8s} "
        f"{'ratio':>5s} {'floor%':>6s} {'select':>7s} {'ratio':>5s}  best configuration"
    )
    worst = 0.0
    for h, k, b in shapes:
        rows = [
            t
            for t in times
            if (t["heads"], t["topk"], t["batch"]) == (h, k, b)
            and t["graph_us"] is not None
        ]
        by = {t["variant"]: t["graph_us"] for t in rows}
        lab = [
            t
            for t in rows
            if t["variant"].startswith("pp_")
            and t["variant"] in checked
            and t["variant"] not in failed
        ]
        best = min(lab, key=lambda t: t["graph_us"]) if lab else None
        s90, s120 = by.get("base_sm90"), by.get("base_sm120")
        sel = by.get("pipe_decode") if "pipe_decode" not in failed else None
        sel_ratio = sel / s90 if sel and s90 else 0.0
        ratio = best["graph_us"] / s90 if best and s90 else None
        if ratio:
            worst = max(worst, ratio)
        floor = rows[0]["floor_us"] if rows else None
        fmt = lambda v: f"{v:7.1f}" if v is not None else "      -"  # noqa: E731
        print(
            f"{h:3d} {k:5d} {b:4d} {fmt(s90)} {fmt(s120)} "
            f"{fmt(best['graph_us']) if best else '      -':>8s} "
            f"{ratio if ratio else 0:5.2f} {100 * floor / best['graph_us'] if best else 0:6.1f} "
            f"{fmt(sel)} {sel_ratio:5.2f}  {best['variant'] if best else '-'}"
        )
    print(f"worst lab/sm90 ratio {worst:.2f} (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
