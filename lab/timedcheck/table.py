"""The timed shapes' own checks in harness results files: per file, the
timing rows with a time, how many carry a verdict, how many failed (each
named), and the worst relative and lse errors.

    python3 lab/timedcheck/table.py RESULTS.json...
"""

import json
import sys


def main(paths):
    print(
        f"{'file':24s} {'timed':>6s} {'checked':>8s} {'failed':>7s} {'worst rel':>10s} {'worst lse':>10s}"
    )
    for path in paths:
        with open(path) as f:
            r = json.load(f)
        timed = [t for t in r["timing"] if t.get("us") is not None]
        checked = [t for t in timed if "passed" in t]
        failed = [t for t in checked if not t["passed"]]
        rel = max((t["rel_err"] for t in checked), default=float("nan"))
        lse = max((t["lse_err"] for t in checked), default=float("nan"))
        name = path.rsplit("/", 1)[-1]
        print(
            f"{name:24s} {len(timed):6d} {len(checked):8d} {len(failed):7d} {rel:10.1e} {lse:10.1e}"
        )
        for t in failed:
            print(
                f"  FAIL {t['variant']} H{t['heads']} B{t['batch']} topk{t['topk']} rel {t['rel_err']:.1e}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
