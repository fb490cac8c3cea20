"""The split count fitted to the GPU (fit_splits) against the table's, on
the shipped module of one target, at batches between the tables' measured
ones.

For each shape where the two differ: the module's entry point as SGLang
calls it (sparse_decode / supports_full + sparse_decode_full, which fit
the split count to the GPU) against the table's own configuration run by
name (sparse_decode_with / sparse_decode_full_with); the entry's output
against the float64 reference; which configuration the entry's plan ran.
CUDA-graph replay, do_bench median, L2 flushed between calls, the faster
of two passes, the harness's own inputs and timing.

With --sms N the whole run happens inside a CUDA green context of N of the
H200's multiprocessors, standing in for a GPU of that size (or for the
share of a GPU SGLang's PD multiplexing gives decode): the module must
find N itself (its device_sms asks the driver about the call's stream),
and the calls are timed eagerly on the green context's stream (a graph
captured outside it would not be bound to its multiprocessors). A
calibration call first shows whether the partition holds: a one-split
call of 128 programs (one wave on the whole H200) takes ceil(128 / N)
waves inside it. Where the fit for N differs from the fit for the whole
GPU, the entry is also timed as fitted to the whole GPU's count (its
driver lookup replaced for those calls: MLAGEN_SMS can only narrow the
driver's count), which is what it ran before it asked the driver. With --stream-only the
green context is not made current: only its stream is, on the primary
context, as SGLang's PD multiplexing runs decode.

    python3 gpu/splits.py sm90 OUT.json          # DISABLE_MMA_V3=1 for sm120
    python3 gpu/splits.py sm120 OUT.json --sms 72
    python3 gpu/splits.py sm120 OUT.json --sms 72 --stream-only
    python3 gpu/splits.py sm86 OUT.json --no-pdl  # the stand-in modules, as their GPUs launch

gpu/splits.sh is the device call; gpu/shipped.sh runs it over the whole
GPU beside the other checks.
"""

import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
REPS_MS = 100
HEADS = (16, 64)
TOPKS = (512, 2048)
BATCHES = (2, 9, 17, 24, 33, 48, 65, 96)
# Whole call: SGLang's window of 128 and an extra cache of 2048 tokens.
WHOLE = [(64, 17), (64, 33), (64, 65), (16, 33), (16, 65)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("target")
    ap.add_argument("out")
    ap.add_argument("--sms", type=int, default=None)
    ap.add_argument(
        "--no-pdl",
        action="store_true",
        help="launch as a GPU without griddepcontrol does (sm_80, sm_86, sm_89)",
    )
    ap.add_argument(
        "--stream-only",
        action="store_true",
        help="with --sms: make only the green context's stream current, not the context",
    )
    args = ap.parse_args()
    if args.stream_only and not args.sms:
        ap.error("--stream-only needs --sms N (the green context's multiprocessors)")
    sys.path.insert(0, os.path.join(ROOT, "kernels", args.target))
    import harness as h

    mod = h.load_module(os.path.join(ROOT, "kernels", args.target, "sparse_mla_mma.py"))
    if args.no_pdl:
        mod._pdl = lambda device: False
    device = torch.device("cuda")
    full_sms = mod.device_sms(device)
    sms = args.sms or full_sms
    report = dict(
        target=args.target,
        sms=sms,
        device_sms=full_sms,
        pdl=not args.no_pdl,
        stream_only=args.stream_only,
        rows=[],
    )
    stream = None
    if args.sms:
        from torch.cuda.green_contexts import GreenContext

        gc = GreenContext.create(args.sms, 0)
        gc.set_context()
        stream = gc.Stream()
        if args.stream_only:
            # The stream stays the green context's (as SGLang's fallback
            # makes its streams: push the context, create, pop).
            gc.pop_context()
        torch.cuda.set_stream(stream)
        report["device_sms_in_context"] = seen = mod.device_sms(device)
        print(f"device_sms on the green context's stream: {seen}", flush=True)
        if seen != args.sms:
            print(f"FAIL: the module found {seen} multiprocessors, not {args.sms}")
            return 1

    def told_whole_gpu(calls):
        """Time `calls` with the module's driver lookup answering the whole
        GPU's count, then let it ask the driver again."""
        driver, mod._driver_sms = mod._driver_sms, lambda index, stream: full_sms
        mod._STREAM_SMS.clear()
        mod._PLANS.clear()
        try:
            return timed(calls)
        finally:
            mod._driver_sms = driver
            mod._STREAM_SMS.clear()
            mod._PLANS.clear()

    def timed(calls):
        if stream is None:
            return min(h.time_graph(calls, REPS_MS) for _ in range(2))
        for c in calls:
            c()
        torch.cuda.synchronize()
        return min(h.time_eager(calls, REPS_MS) for _ in range(2))

    def measure(row, what, entry, by_name, ok, whole_gpu_fit):
        """Time the entry point and the table's configuration for `row` (and
        the entry as told the whole GPU's count, where that fits another
        split count), record it and print its line."""
        row.update(passed=ok, entry_us=timed(entry), table_us=timed(by_name))
        told = ""
        if whole_gpu_fit != row["fitted"]:
            row.update(whole_gpu_fit=whole_gpu_fit, whole_gpu_us=told_whole_gpu(entry))
            told = (
                f" (told {full_sms}: {whole_gpu_fit} {row['whole_gpu_us']:7.1f}"
                f" x{row['whole_gpu_us'] / row['entry_us']:5.2f})"
            )
        report["rows"].append(row)
        print(
            f"{what} B {row['batch']:3d} "
            f"{row['table']:24s} {row['table_us']:7.1f} -> "
            f"{row['fitted']:24s} {row['entry_us']:7.1f} "
            f"x{row['table_us'] / row['entry_us']:5.2f} {'ok' if ok else 'FAIL'}{told}",
            flush=True,
        )

    gen = torch.Generator(device=device)
    gen.manual_seed(1)
    scale = h.HEAD_DIM**-0.5
    if args.sms:
        # Does the partition hold? One split a row at B 128: 128 programs.
        sets = h.timing_sets(128, 2048, 64, gen, device)
        name = mod.select(128, 2048, 64)
        calls = [
            (lambda s=s: mod.sparse_decode_with(name, s[2], s[1], s[3], s[4], scale))
            for s in sets
        ]
        report["calibration"] = dict(config=name, us=timed(calls))
        print(
            f"calibration {name} B 128 topk 2048 on {sms} SMs: {report['calibration']['us']:.1f} us",
            flush=True,
        )

    for heads in HEADS:
        for topk in TOPKS:
            for batch in BATCHES:
                table = mod.select(batch, topk, heads)
                fitted = mod.select(batch, topk, heads, sms)
                if table == fitted:
                    continue
                sets = h.timing_sets(batch, topk, heads, gen, device)
                mod._PLANS.clear()
                entry = [
                    (lambda s=s: mod.sparse_decode(s[2], s[1], s[3], s[4], scale))
                    for s in sets
                ]
                by_name = [
                    (
                        lambda s=s: mod.sparse_decode_with(
                            table, s[2], s[1], s[3], s[4], scale
                        )
                    )
                    for s in sets
                ]
                buf, kc, q, idx, tl_ = sets[0]
                out, lse = entry[0]()
                ran = sorted(
                    {p.message for p in mod._PLANS.values() if p.refusal is None}
                )
                ref_out, ref_lse = h.reference(
                    q, h.dequantize(buf, 64), idx, tl_, scale
                )
                rel = float((out.double() - ref_out).norm() / ref_out.norm())
                lse_err = float((lse.double() - ref_lse).abs().max())
                ok = (
                    rel <= h.RTOL_OUT
                    and lse_err <= h.ATOL_LSE
                    and fitted in " ".join(ran)
                )
                row = dict(
                    entry="per cache",
                    heads=heads,
                    topk=topk,
                    batch=batch,
                    table=table,
                    fitted=fitted,
                    ran=ran,
                    rel_err=rel,
                    lse_err=lse_err,
                )
                measure(
                    row,
                    f"per cache H {heads:3d} topk {topk:5d}",
                    entry,
                    by_name,
                    ok,
                    mod.select(batch, topk, heads, full_sms),
                )
    for heads, batch in WHOLE:
        tokens = 128 + 2048
        table = mod.select_full(heads, batch, tokens)
        fitted = mod.select_full(heads, batch, tokens, sms)
        if table == fitted or table not in mod.CONFIGS:
            continue
        sets = [
            h.whole_call_set(heads, batch, 128, 2048, gen, device) for _ in range(3)
        ]
        mod._PLANS.clear()
        entry = [h.mlagen_entry(mod, s["kw"]) for s in sets]
        by_name = [
            (lambda s=s: mod.sparse_decode_full_with(table, **s["kw"])) for s in sets
        ]
        out, lse = entry[0]()
        ran = sorted({p.message for p in mod._PLANS.values() if p.refusal is None})
        verdict = h.compare_full(out, lse, h.whole_call_reference(sets[0]))
        ok = verdict["passed"] and fitted in " ".join(ran)
        row = dict(
            entry="whole call",
            heads=heads,
            topk=tokens,
            batch=batch,
            table=table,
            fitted=fitted,
            ran=ran,
            **verdict,
        )
        measure(
            row,
            f"whole call H {heads:3d} tokens {tokens:5d}",
            entry,
            by_name,
            ok,
            mod.select_full(heads, batch, tokens, full_sms),
        )
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    failed = sum(not r["passed"] for r in report["rows"])
    print(f"{args.target} on {sms} SMs: {len(report['rows'])} shapes, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
