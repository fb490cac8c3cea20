"""The short table lab/rs120/sweep.sh prints last: the checks of each 64-head
tile, then per shape the best configuration of the role-split tile
(pp_h64_t16_*_w16_s3) against the best of the one-partition tile
(pp_h64_t32_*_w8_s1), CUDA-graph replay, and their ratio.

    python3 lab/rs120/sweep_table.py WORKDIR    # its check-, time- and whole-sm120.json
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from results import load  # noqa: E402


def tile(variant):
    if "_w16_" in variant:
        return "role split"
    if variant.startswith("pp_h64_t32_"):
        return "one partition"
    return None


def main():
    work = sys.argv[1]
    checks = load(work, "check-sm120.json").get("correctness", [])
    for t in ("role split", "one partition"):
        rows = [r for r in checks if tile(r["variant"]) == t]
        bad = sorted({r["variant"] for r in rows if not r["passed"]})
        print(
            f"checks, {t}: {sum(r['passed'] for r in rows)}/{len(rows)} pass"
            + (f"; failing: {', '.join(bad)}" if bad else "")
        )
    best = {}
    for name in ("time-sm120.json", "whole-sm120.json"):
        for r in load(work, name).get("timing", []):
            if tile(r["variant"]) is None or "graph_us" not in r:
                continue
            if r.get("passed") is False:
                continue
            entry = r.get("entry", "per cache")
            if name == "whole-sm120.json" and entry != "whole call":
                continue
            key = (entry, r["heads"], r["batch"], r.get("extra", r["topk"]))
            cur = best.setdefault(key, {}).get(tile(r["variant"]))
            if cur is None or r["graph_us"] < cur[0]:
                best[key][tile(r["variant"])] = (r["graph_us"], r["variant"])
    print(
        f"{'entry':<10} {'H':>3} {'B':>4} {'topk':>5} | {'role split µs':>13} {'one part. µs':>12} {'ratio':>6} | configs"
    )
    for key in sorted(best):
        b = best[key]
        rs, op = b.get("role split"), b.get("one partition")
        ratio = f"{rs[0] / op[0]:6.2f}" if rs and op else "     -"
        print(
            f"{key[0]:<10} {key[1]:>3} {key[2]:>4} {key[3]:>5} | "
            f"{rs[0] if rs else float('nan'):13.1f} {op[0] if op else float('nan'):12.1f} {ratio} | "
            f"{rs[1] if rs else '-'} / {op[1] if op else '-'}"
        )


if __name__ == "__main__":
    main()
