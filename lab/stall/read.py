"""Read ncu's SASS source page (CSV) that lab/stall/device.sh writes: the
warp-state samples by stall reason, in all and at the instructions that
hold most of them.

    python3 lab/stall/read.py DIR NAME [TOP] [A-B:LABEL ...]

DIR/NAME-sass.csv; each A-B:LABEL sums the samples of SASS lines A to B
(the index printed beside each instruction) under LABEL: how a warp role's
time splits (results/regions.txt names the ranges used).
"""

import csv
import sys


def rows(path):
    with open(path, newline="") as f:
        lines = list(csv.reader(f))
    header = next(i for i, r in enumerate(lines) if r and r[0] == "Address")
    names = lines[header]
    for r in lines[header + 1 :]:
        if len(r) >= len(names) and r[0].startswith("0x"):
            yield dict(zip(names, r))


def num(x):
    try:
        return float(x)
    except ValueError:
        return 0.0


def region(table, reasons, total, spec):
    span, label = spec.split(":", 1)
    a, b = (int(x) for x in span.split("-"))
    part = table[a : b + 1]
    n = sum(num(r["Warp Stall Sampling (All Samples)"]) for r in part)
    executed = sum(num(r["Instructions Executed"]) for r in part)
    why = sorted(
        ((s, sum(num(r["stall_" + s]) for r in part)) for s in reasons),
        key=lambda kv: -kv[1],
    )
    top = ", ".join(f"{s} {v / n:.0%}" for s, v in why[:4] if n and v)
    print(f"  {label:28s} {a:5d}-{b:<5d} {n / total:6.1%}  {executed:10.0f}  {top}")


def main():
    where, name = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    specs = sys.argv[4:]
    table = list(rows(f"{where}/{name}-sass.csv"))
    reasons = [
        k[len("stall_") :]
        for k in table[0]
        if k.startswith("stall_") and "Not Issued" not in k
    ]
    total = sum(num(r["Warp Stall Sampling (All Samples)"]) for r in table)
    print(f"{name}: {len(table)} instructions, {total:.0f} samples")
    sums = {s: sum(num(r["stall_" + s]) for r in table) for s in reasons}
    for s, v in sorted(sums.items(), key=lambda kv: -kv[1]):
        if v:
            print(f"  {s:18s} {v / total:6.1%}")
    print(f"top {top} instructions (index, samples %, reasons over 10% of it):")
    for i, r in enumerate(table):
        r["_i"] = i
    for r in sorted(table, key=lambda r: -num(r["Warp Stall Sampling (All Samples)"]))[
        :top
    ]:
        n = num(r["Warp Stall Sampling (All Samples)"])
        why = ", ".join(
            f"{s} {num(r['stall_' + s]) / n:.0%}"
            for s in reasons
            if n and num(r["stall_" + s]) / n >= 0.1
        )
        print(f"  {r['_i']:5d} {n / total:6.2%}  {r['Source'].strip()[:60]:60s} {why}")
    if specs:
        print("regions (samples, warp-instructions executed, top reasons):")
        for spec in specs:
            region(table, reasons, total, spec)


if __name__ == "__main__":
    main()
