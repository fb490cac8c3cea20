"""lab/chain's third run: where a signalled combine's programs go. For each
shape of each stamped copy (one replay, the median one: probe.py's `raw`),
the combine programs that started before the decode's last store (early),
the SMs they ran on, and when the early and the other programs finished.

    python3 lab/chain/placement.py results3/stamp120.json.gz results3/stamp120s.json.gz

(a .gz file is read as the JSON it holds).
"""

import collections
import gzip
import json
import os
import statistics
import sys


def main(paths):
    print(
        f"{'copy':10s} {'H':>3s} {'B':>4s} {'config':22s} {'dec SMs':>7s} "
        f"{'last store':>10s} {'early':>5s} {'on SMs':>6s} {'most/SM':>7s} "
        f"{'early on dec SM':>15s} {'early end med/max':>17s} {'late end med/max':>16s} "
        f"{'comb/SM max':>11s} {'next kernel':>11s}"
    )
    for path in paths:
        copy = os.path.basename(path).split(".")[0]
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            shapes = json.load(f)["shapes"]
        for s in shapes:
            raw = s.get("raw") or {}
            dec, comb = raw.get("raw_decode"), raw.get("raw_combine")
            if not dec or not comb:
                continue
            last_store = max(d[2] for d in dec)
            dec_sms = {d[3] for d in dec}
            early = [c for c in comb if c[0] < last_store]
            late = [c for c in comb if c[0] >= last_store]
            per_sm = collections.Counter(c[3] for c in early)
            all_sm = collections.Counter(c[3] for c in comb)

            def ends(cs):
                if not cs:
                    return "-"
                e = [c[2] / 1000 for c in cs]
                return f"{statistics.median(e):.2f}/{max(e):.2f}"

            print(
                f"{copy:10s} {s['heads']:3d} {s['batch']:4d} {s['config']:22s} "
                f"{len(dec_sms):7d} {last_store / 1000:10.2f} {len(early):5d} "
                f"{len(per_sm):6d} {max(per_sm.values(), default=0):7d} "
                f"{sum(1 for c in early if c[3] in dec_sms):15d} {ends(early):>17s} "
                f"{ends(late):>16s} {max(all_sm.values()):11d} "
                f"{s['intervals_ns']['post'] / 1000:11.2f}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
