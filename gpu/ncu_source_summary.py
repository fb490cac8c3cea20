"""Summarise ncu's per-instruction warp-stall samples of a warp-specialised kernel.

    ncu --clock-control none -k regex:_ws_decode_kernel --launch-skip 2 --launch-count 1 \\
        --section SourceCounters --page source --print-source sass --csv \\
        python3 gpu/profile.py kernels/sm90/ws_h64_t64_k1_w8_s2.py 128 2048 > source.csv
    python3 gpu/ncu_source_summary.py source.csv 32768:consumer 16384:producer

Instructions are assigned to a partition by how often they executed (the loop
bodies of the consumer and producer warps run a known number of times); for
each partition it prints the stall reasons and the most-sampled instructions.
"""

import collections
import csv
import sys

REASONS = [
    "stall_barrier",
    "stall_branch_resolving",
    "stall_dispatch",
    "stall_lg",
    "stall_long_sb",
    "stall_math",
    "stall_membar",
    "stall_mio",
    "stall_misc",
    "stall_no_inst",
    "stall_not_selected",
    "stall_selected",
    "stall_short_sb",
    "stall_sleep",
    "stall_wait",
]


def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


def main(path, groups):
    rows = list(csv.reader(open(path)))
    start = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    header = rows[start]
    col = {n: i for i, n in enumerate(header)}
    data = [r for r in rows[start + 1 :] if len(r) == len(header)]
    for spec in groups:
        count, name = spec.split(":")
        sel = [r for r in data if num(r[col["Instructions Executed"]]) == int(count)]
        agg = collections.Counter()
        for r in sel:
            for k in REASONS:
                agg[k] += num(r[col[k]])
        total = sum(agg.values()) or 1
        print(
            f"{name}: {len(sel)} instructions executed {count} times, {int(total)} stall samples"
        )
        print(
            "  reasons:",
            ", ".join(f"{k[6:]} {v / total:.0%}" for k, v in agg.most_common(7)),
        )
        top = sorted(
            sel, key=lambda r: -num(r[col["Warp Stall Sampling (All Samples)"]])
        )
        for r in top[:8]:
            samples = num(r[col["Warp Stall Sampling (All Samples)"]])
            main_reason = max(REASONS, key=lambda k: num(r[col[k]]))
            print(
                f"  {int(samples):6d} {main_reason[6:]:12s} {r[col['Source']].strip()[:72]}"
            )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
