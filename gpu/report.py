"""Render the tables of a kernels/<target>/REPORT.md from committed GPU results.

    python3 gpu/report.py gpu/results/run31-sm90.json gpu/results/run31-sm90.calib.json
    python3 gpu/report.py RESULTS.json CALIB.json "make calibrate, no GPU"   # where the calibration ran

Prints Markdown: run facts, correctness (every variant, every case),
calibration (predicted vs compiled), and timing (best passing variant per
shape with roofline fraction, graph-replay time and SIMT ratio (TFLOP/s, GB/s,
roofline and the SIMT ratio from the CUDA-graph time where measured), then every
variant's time per shape).
"""

import json
import sys


def served(t):
    """The time users see: CUDA-graph replay where measured, else eager."""
    return t["graph_us"] or t["us"]


def per_cache_times(r):
    """The per-cache timing rows that have a time: not the whole call's or
    other entries' rows, nor a declined or failed one."""
    return [
        t
        for t in r["timing"]
        if "entry" not in t and "declined" not in t and "error" not in t
    ]


def timed_shapes(r):
    """The (batch, topk) shapes with per-cache times, by topk then batch."""
    return sorted(
        {(t["batch"], t["topk"]) for t in per_cache_times(r)},
        key=lambda s: (s[1], s[0]),
    )


def best_per_shape(r):
    """(batch, topk, fastest passing MMA row, SIMT row or None) per timed shape,
    by CUDA-graph time where measured, as `mlagen select` chooses."""
    failed = {x["variant"] for x in r["correctness"] if not x["passed"]}
    for b, k in timed_shapes(r):
        rows = [t for t in per_cache_times(r) if (t["batch"], t["topk"]) == (b, k)]
        simt = next((t for t in rows if t["variant"] == "simt_baseline"), None)
        mma = [
            t
            for t in rows
            if t["variant"] != "simt_baseline" and t["variant"] not in failed
        ]
        if mma:
            yield b, k, min(mma, key=served), simt


def main(results_path, calib_path, calib_where="same run"):
    with open(results_path) as f:
        r = json.load(f)
    with open(calib_path) as f:
        c = json.load(f)
    out = []
    out.append(
        f"Run: {r['date']}, {r['gpu']} ({r['capability']}), torch {r['torch']}, Triton {r['triton']}."
    )
    out.append(
        f"Command (on the device, repository root): `{r['command']}` (`bash gpu/run.sh` runs the same); raw rows in `{results_path}`."
    )
    out.append("")
    out.append(
        "### Correctness (float64 reference; pass: rel. error of out <= 5e-3, |lse error| <= 1e-3, no NaN, empty rows zero / -inf, outputs poisoned first)"
    )
    out.append("")
    cases = sorted({x["case"] for x in r["correctness"]})
    out.append("| variant | " + " | ".join(cases) + " |")
    out.append("|---|" + "---|" * len(cases))
    by = {}
    for x in r["correctness"]:
        by.setdefault(x["variant"], {})[x["case"]] = x
    for v in sorted(by):
        cells = []
        for cs in cases:
            x = by[v].get(cs)
            cells.append(
                "-"
                if x is None
                else f"{'pass' if x['passed'] else 'FAIL'} {x['rel_err']:.1e} / {x['lse_err']:.0e}"
            )
        out.append(f"| {v} | " + " | ".join(cells) + " |")
    npass = sum(x["passed"] for x in r["correctness"])
    out.append("")
    out.append(
        f"{npass} of {len(r['correctness'])} (variant, case) rows passed. Cells: relative error of out / max |lse error|."
    )
    out.append("")
    out.append(
        f"### Calibration: budget model vs Triton {c['triton']} (`calib/calibrate.py`, {calib_where})"
    )
    out.append("")
    out.append(
        "| variant | mlagen | predicted smem B | compiled smem B | predicted regs | ptxas regs | spill B | agreement |"
    )
    out.append("|---|---|---|---|---|---|---|---|")
    for x in c["rows"]:
        agree = "; ".join(x["problems"]) or "ok"
        out.append(
            f"| {x['variant']} | {'fits' if x['fits'] else 'refused'} | {x['pred_smem']:,} | {x.get('smem', 0):,} | {x['pred_regs']} | {x.get('regs')} | {x.get('spill')} | {agree} |"
        )
    out.append("")
    shapes = timed_shapes(r)
    out.append(
        f"### Timing (H = {r['timing'][0]['heads']}, median of do_bench over 3 rotating input sets; roofline floor = max(flops / {r['peak_tflops']:.0f} TFLOP/s, bytes / {r['peak_gbps'] / 1000:.1f} TB/s))"
    )
    out.append("")
    out.append(
        "| topk | B | fastest passing variant | µs | CUDA-graph µs | TFLOP/s | GB/s | floor µs | roofline | SIMT µs (graph) | vs SIMT |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for b, k, best, simt in best_per_shape(r):
        g = f"{best['graph_us']:.1f}" if best["graph_us"] else "-"
        t = served(best)
        flops, nbytes = (
            best["tflops"] * best["us"] * 1e6,
            best["gbps"] * best["us"] * 1e3,
        )
        out.append(
            f"| {k} | {b} | {best['variant']} | {best['us']:.1f} | {g} | {flops / t / 1e6:.0f} | {nbytes / t / 1e3:.0f} | {best['floor_us']:.1f} | {best['floor_us'] / t:.1%} | "
            + (
                f"{served(simt):.0f} | {served(simt) / t:.0f}x |"
                if simt
                else "not timed | - |"
            )
        )
    out.append("")
    out.append(
        "Every variant, µs per call (CUDA-graph replay in brackets where timed):"
    )
    out.append("")
    out.append("| variant | " + " | ".join(f"B{b} k{k}" for b, k in shapes) + " |")
    out.append("|---|" + "---|" * len(shapes))
    names = sorted({t["variant"] for t in per_cache_times(r)})
    for n in names:
        cells = []
        for b, k in shapes:
            t = next(
                (
                    t
                    for t in per_cache_times(r)
                    if (t["variant"], t["batch"], t["topk"]) == (n, b, k)
                ),
                None,
            )
            cells.append(
                "-"
                if t is None
                else f"{t['us']:.0f}"
                + (f" ({t['graph_us']:.1f})" if t["graph_us"] else "")
            )
        out.append(f"| {n} | " + " | ".join(cells) + " |")
    print("\n".join(out))


if __name__ == "__main__":
    main(*sys.argv[1:4])
