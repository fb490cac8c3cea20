"""The short table of one gpu/triton/run.sh call (its results folder).

    python3 gpu/triton/summary.py DIR VERSION [MODULE...]

DIR holds, for each module (MODULEs, default sm90 sm120) and each Triton
(base: the GPU's own 3.6.0; VERSION: the pack), the harness's correctness
report (check-M-T.json) and timings (time-M-T.json), and the SASS scans of
the mma.sync builds (sass-M-T.json, every module but sm90). Prints every
check's count, then per cache and the whole call per shape: each module's
time under base and under VERSION (CUDA-graph replay) and their ratio, with
the configuration the entry points chose. Missing files are said to be
missing.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from shipped_summary import fmt, load  # noqa: E402  gpu/, beside this folder


def checks(d, version, modules):
    print("checks (the module's entry points, against a float64 reference):")
    for m in modules:
        for t in ("base", version):
            for kind in ("check", "time"):
                r = load(d, f"{kind}-{m}-{t}.json")
                if r is None:
                    continue
                rows = r["correctness"] + r.get("dispatch", [])
                rows += [x for x in r["timing"] if "passed" in x]
                ok = sum(bool(x.get("passed")) for x in rows)
                sup = r.get("supports") or []
                deq = r.get("dequant")
                print(
                    f"  {m:5s} triton {r['triton']:6s} {kind:5s}: {ok}/{len(rows)} pass"
                    + (
                        f", supports() {sum(x['passed'] for x in sup)}/{len(sup)}"
                        if sup
                        else ""
                    )
                    + (
                        f", dequantisation {deq['wrong']} of {deq['values']} differ"
                        if deq
                        else ""
                    )
                )


def times(d, m, t):
    r = load(d, f"time-{m}-{t}.json")
    if r is None:
        return {}
    out = {}
    for x in r["timing"]:
        if "error" in x or "declined" in x:
            continue
        if x.get("window"):
            if x.get("impl") == "mlagen" and x.get("entry") == "whole call":
                out[("whole", x["heads"], x["extra"], x["batch"])] = x
        elif "impl" not in x:
            out[("cache", x["heads"], x["topk"], x["batch"])] = x
    return out


def table(d, version, modules):
    base = {m: times(d, m, "base") for m in modules}
    new = {m: times(d, m, version) for m in modules}
    keys = sorted(set().union(*base.values(), *new.values()))
    print(f"\nCUDA-graph replay µs, under 3.6.0 and under {version}, and their ratio:")
    print(
        f"  {'entry':>5} {'H':>3} {'topk':>5} {'B':>4} | "
        + " | ".join(f"{m:>7} {version:>7} {'÷':>5}" for m in modules)
        + " | configurations"
    )
    for k in keys:
        cells, names = [], []
        for m in modules:
            a, b = base[m].get(k, {}), new[m].get(k, {})
            ga, gb = a.get("graph_us") or a.get("us"), b.get("graph_us") or b.get("us")
            cells.append(
                f"{fmt(ga):>7} {fmt(gb):>7} {(f'{gb / ga:.2f}' if ga and gb else '-'):>5}"
            )
            na, nb = a.get("variant", "-"), b.get("variant", "-")
            names.append(na if na == nb else f"{na} -> {nb}")
        print(
            f"  {k[0]:>5} {k[1]:>3} {k[2]:>5} {k[3]:>4} | {' | '.join(cells)} | {' / '.join(names)}"
        )


def sass(d, version, modules):
    for m in modules:
        if m == "sm90":
            continue
        for t in ("base", version):
            s = load(d, f"sass-{m}-{t}.json")
            if s:
                rows = [r for r in s["rows"] if "decode" in r["kernel"]]
                print(
                    f"{m} build under {t}: {len(rows)} decode cubins, HMMA in {sum(r['hmma'] > 0 for r in rows)}, HGMMA in {sum(r['hgmma'] > 0 for r in rows)}"
                )


def main():
    d, version = sys.argv[1], sys.argv[2]
    modules = sys.argv[3:] or ["sm90", "sm120"]
    try:
        with open(os.path.join(d, "gpu.txt")) as f:
            print(f.read().strip())
    except OSError:
        print("gpu.txt: missing")
    checks(d, version, modules)
    table(d, version, modules)
    print()
    sass(d, version, modules)
    try:
        with open(os.path.join(d, "exits.txt")) as f:
            print("exits: " + ", ".join(line.strip() for line in f))
    except OSError:
        pass


if __name__ == "__main__":
    main()
