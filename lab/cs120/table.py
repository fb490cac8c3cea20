"""The short table lab/cs120/device.sh prints last: each tile's checks, then
per shape (per cache, CUDA-graph replay) the best configuration of the
column-split tile with 2 and 3 K slots (pp_h64_t16_*_w8_s2, _s3), of the shipped one-partition tile
(pp_h64_t32_*_w8_s1) and the sm_90 module's own selection, with the ratios
of each column split to the one-partition tile, and of the best one to
sm_90's.

    python3 lab/cs120/table.py WORKDIR   # its check-*, time-cs, time-sm90 .json
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from results import load  # noqa: E402


def tile(variant):
    if variant.startswith("pp_h64_t16_") and "_w8_s" in variant:
        return "cs" + variant[-1]
    if variant.startswith("pp_h64_t32_"):
        return "pp"
    return None


def main():
    work = sys.argv[1]
    checks = []
    for name in sorted(os.listdir(work)):
        if name.startswith("check-") and name.endswith(".json"):
            checks += load(work, name).get("correctness", [])
    for t in ("cs2", "cs3"):
        rows = [r for r in checks if tile(r["variant"]) == t]
        bad = sorted({r["variant"] for r in rows if not r["passed"]})
        print(
            f"checks, column split {t}: {sum(r['passed'] for r in rows)}/{len(rows)} pass"
            + (f"; failing: {', '.join(bad)}" if bad else "")
        )
    best = {}
    for r in load(work, "time-cs.json").get("timing", []):
        t = tile(r["variant"])
        if t is None or "graph_us" not in r or r.get("passed") is False:
            continue
        key = (r["heads"], r["batch"], r["topk"])
        cur = best.setdefault(key, {}).get(t)
        if cur is None or r["graph_us"] < cur[0]:
            best[key][t] = (r["graph_us"], r["variant"])
    for r in load(work, "time-sm90.json").get("timing", []):
        if "graph_us" not in r or r.get("entry", "per cache") != "per cache":
            continue
        key = (r["heads"], r["batch"], r["topk"])
        cur = best.setdefault(key, {}).get("sm90")
        if cur is None or r["graph_us"] < cur[0]:
            best[key]["sm90"] = (r["graph_us"], r["variant"])
    print(
        f"{'H':>3} {'B':>4} {'topk':>5} | {'cs2 µs':>7} {'cs3 µs':>7} {'pp µs':>7} "
        f"{'sm90 µs':>7} | {'cs2/pp':>6} {'cs3/pp':>6} {'cs/sm90':>7} {'pp/sm90':>7} | configs"
    )
    nan = float("nan")
    for key in sorted(best):
        b = best[key]
        c2, c3, pp, s9 = (b.get(k, (nan, "-")) for k in ("cs2", "cs3", "pp", "sm90"))
        cs = min(c2[0], c3[0])
        print(
            f"{key[0]:>3} {key[1]:>4} {key[2]:>5} | {c2[0]:7.1f} {c3[0]:7.1f} {pp[0]:7.1f} "
            f"{s9[0]:7.1f} | {c2[0] / pp[0]:6.2f} {c3[0] / pp[0]:6.2f} {cs / s9[0]:7.2f} "
            f"{pp[0] / s9[0]:7.2f} | {c2[1]} {c3[1]} {pp[1]}"
        )


if __name__ == "__main__":
    main()
