"""The short table of one gpu/shipped.sh run (its results folder).

    python3 gpu/shipped_summary.py DIR

DIR holds what gpu/shipped.sh wrote: the harness reports
(sm90-check.json, sm120-check.json: correctness; sm90-time.json,
sm120-time.json: timings with the timed shapes' checks), the route and
dispatch checks' logs, the SASS scan of the sm_120 build and gpu.txt.
Prints: correctness per module and peer; the whole call per shape (SGLang's
Triton path with the gate off, mlagen's whole call under CUDA-graph replay,
as layers, eagerly and its host time, one kernel call over the same tokens,
FlashMLA); "layer" is the µs one call adds to a graph of calls back to
back (the harness's layer_us: what a layer's call adds to a server's
decode graph, without the graph's launch that "graph" also counts);
the sm_120 module against the sm_90 module per cache; the split counts
fitted to the GPU against the tables'; the route, dispatch and SASS
verdicts. Missing files are said to be missing.
"""

import json
import os
import re
import sys


def load(d, name):
    try:
        with open(os.path.join(d, name)) as f:
            return json.load(f)
    except (OSError, ValueError) as err:
        print(f"{name}: missing or unreadable ({err.__class__.__name__})")
        return None


def fmt(x, digits=1):
    return "-" if x is None else f"{x:,.{digits}f}"


def ratio(a, b):
    return "-" if not (a and b) else f"{a / b:.2f}"


def correctness(d):
    print("correctness (the module's entry points; timed shapes; peers):")
    for name in (
        "sm90-check.json",
        "sm120-check.json",
        "sm90-time.json",
        "sm120-time.json",
    ):
        r = load(d, name)
        if r is None:
            continue
        groups = {}
        for row in r["correctness"] + r.get("dispatch", []):
            who = row.get("variant", "")
            who = who if who.startswith("peer:") else "mlagen"
            groups.setdefault(who, []).append(row)
        for who, rows in sorted(groups.items()):
            ok = sum(bool(x.get("passed")) for x in rows)
            rel = max((x.get("rel_err") or 0 for x in rows), default=0)
            lse = max((x.get("lse_err") or 0 for x in rows), default=0)
            print(
                f"  {name:18s} {who:20s} {ok}/{len(rows)} pass, worst rel {rel:.1e}, worst lse {lse:.1e}"
            )
        sup = r.get("supports") or []
        if sup:
            print(
                f"  {name:18s} supports()           {sum(x['passed'] for x in sup)}/{len(sup)} right"
            )
        if r.get("dequant"):
            q = r["dequant"]
            print(
                f"  {name:18s} dequantisation       {q['wrong']} of {q['values']} differ"
            )


def whole_call(d, name):
    r = load(d, name)
    if r is None:
        return {}
    rows = [t for t in r["timing"] if t.get("window")]
    by = {}
    for t in rows:
        by.setdefault((t["heads"], t["batch"], t["extra"]), []).append(t)
    print(
        f"\nwhole call, {r['target']} module on {r['gpu']} ({r.get('env') or 'default env'}), µs; graph = CUDA-graph replay:"
    )
    print(
        f"  {'H':>3} {'B':>4} {'extra':>5} | {'gate off':>8} | {'mlagen':>7} {'layer':>6} {'eager':>7} {'host':>6} | {'1 kernel':>8} {'÷1k':>5} | {'FlashMLA':>8} {'layer':>6} {'eager':>7} {'host':>6} | {'÷FMLA':>6} {'layer÷':>6} {'eager÷':>6} | config"
    )
    out = {}
    for (h, b, e), ts in sorted(
        by.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])
    ):

        def get(pred):
            return next(
                (t for t in ts if pred(t) and "error" not in t and "declined" not in t),
                {},
            )

        ours = get(lambda t: t["impl"] == "mlagen" and t["entry"] == "whole call")
        one = get(lambda t: t.get("entry") == "one kernel")
        fm = get(lambda t: t["impl"] == "flashmla")
        off = get(lambda t: t["impl"] in ("sglang-triton", "simt-baseline"))
        eager = min(
            [x for x in (ours.get("us"), ours.get("eager_us_again")) if x], default=None
        )
        out[(h, b, e)] = ours.get("graph_us")
        bad = [
            t["impl"] + ": " + (t.get("error") or t.get("declined"))
            for t in ts
            if "error" in t
        ]
        bad += [t["impl"] + " FAILS its check" for t in ts if t.get("passed") is False]
        print(
            f"  {h:>3} {b:>4} {e:>5} | {fmt(off.get('graph_us'), 0):>8} | {fmt(ours.get('graph_us')):>7} {fmt(ours.get('layer_us')):>6} {fmt(eager):>7} {fmt(ours.get('host_us'), 0):>6} | "
            f"{fmt(one.get('graph_us')):>8} {ratio(ours.get('graph_us'), one.get('graph_us')):>5} | {fmt(fm.get('graph_us')):>8} {fmt(fm.get('layer_us')):>6} {fmt(fm.get('us')):>7} {fmt(fm.get('host_us'), 0):>6} | "
            f"{ratio(ours.get('graph_us'), fm.get('graph_us')):>6} {ratio(ours.get('layer_us'), fm.get('layer_us')):>6} {ratio(eager, fm.get('us')):>6} | {ours.get('variant', '-')}"
            + ("  " + "; ".join(bad) if bad else "")
        )
    return out


def per_cache(d):
    a, b = load(d, "sm120-time.json"), load(d, "sm90-time.json")
    if a is None or b is None:
        return

    def rows(r):
        return {
            (t["heads"], t["topk"], t["batch"]): t
            for t in r["timing"]
            if not t.get("window") and "impl" not in t
        }

    ra, rb = rows(a), rows(b)
    print(
        "\nper cache (the modules' own selections), CUDA-graph replay µs, one call a graph and as layers:"
    )
    print(
        f"  {'H':>3} {'topk':>5} {'B':>4} | {'sm120 module':>12} {'sm90 module':>12} {'ratio':>6} | {'layer':>6} {'layer':>6} {'ratio':>6} | {'sm120 % floor':>13} | sm120 config / sm90 config"
    )
    for k in sorted(ra):
        x, y = ra[k], rb.get(k, {})
        gx, gy = x.get("graph_us") or x.get("us"), y.get("graph_us") or y.get("us")
        lx, ly = x.get("layer_us"), y.get("layer_us")
        frac = x.get("roofline_frac")
        print(
            f"  {k[0]:>3} {k[1]:>5} {k[2]:>4} | {fmt(gx):>12} {fmt(gy):>12} {ratio(gx, gy):>6} | {fmt(lx):>6} {fmt(ly):>6} {ratio(lx, ly):>6} | {('-' if frac is None else f'{frac:.1%}'):>13} | {x['variant']} / {y.get('variant', '-')}"
        )


def splits(d):
    """gpu/splits.py's verdicts: the entry points' fitted split counts
    against the tables' own, where they differ."""
    print("\nsplit counts fitted to the GPU (gpu/splits.py), CUDA-graph replay µs:")
    for name in ("splits-sm90.json", "splits-sm120.json"):
        r = load(d, name)
        if r is None:
            continue
        rows = r["rows"]
        fails = sum(not x["passed"] for x in rows)
        gains = [x["table_us"] / x["entry_us"] for x in rows if x.get("entry_us")]
        span = f", table's ÷ fitted {min(gains):.2f}-{max(gains):.2f}" if gains else ""
        print(
            f"  {r['target']} on {r['sms']} SMs: {len(rows)} shapes, {len(rows) - fails} ok, {fails} FAIL{span}"
        )
        for x in rows:
            if not x["passed"]:
                print(
                    f"    FAIL {x['entry']} H {x['heads']} B {x['batch']} {x['fitted']}"
                )


def logs(d):
    print()
    for name in ("route.log", "dispatch-sm90.log", "dispatch-sm120.log"):
        try:
            with open(os.path.join(d, name)) as f:
                lines = [l.rstrip() for l in f if re.match(r"^(ok  |FAIL)", l)]
        except OSError:
            print(f"{name}: missing")
            continue
        fails = sum(l.startswith("FAIL") for l in lines)
        print(f"{name}: {len(lines) - fails} ok, {fails} FAIL")
        for l in lines:
            print("  " + l[:160])
    s = load(d, "sass-sm120.json")
    if s:
        rows = [r for r in s["rows"] if "decode" in r["kernel"]]
        print(
            f"sm_120 build on this GPU: {len(rows)} decode cubins, HMMA in {sum(r['hmma'] > 0 for r in rows)}, HGMMA in {sum(r['hgmma'] > 0 for r in rows)}"
        )
    try:
        with open(os.path.join(d, "exits.txt")) as f:
            print("exits: " + ", ".join(l.strip() for l in f))
    except OSError:
        pass


def main():
    d = sys.argv[1]
    try:
        with open(os.path.join(d, "gpu.txt")) as f:
            print(" | ".join(l.strip() for l in f))
    except OSError:
        pass
    correctness(d)
    whole_call(d, "sm90-time.json")
    whole_call(d, "sm120-time.json")
    per_cache(d)
    splits(d)
    logs(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
