"""lab/balanced: the pipelined tile over the GPU's multiprocessors, a
program's tiles running on from one row into the next (`ppb_*`, at most two
pieces a program), against what the shipped entry point runs at the same
shape (fit_splits' split count). Both from lab/balanced/bal's copy of the
sm_120 module; CUDA-graph replay, the faster of two passes. Correctness:
the balanced output against float64 on inputs with mixed row lengths, an
empty row and -1 slots (make_inputs), per cache and as the whole call.

    DISABLE_MMA_V3=1 python3 lab/balanced/probe.py OUT.json [--sms N]
"""

import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
REPS_MS = 60
HEADS = (16, 64)
TOPKS = (512, 2048)
BATCHES = (24, 40, 48, 56, 72, 96, 112, 128)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sms", type=int, default=None)
    ap.add_argument("--batches", default=None)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "kernels", "sm120"))
    import harness as h

    mod = h.load_module(os.path.join(HERE, "bal", "sparse_mla_mma.py"))
    device = torch.device("cuda")
    sms = args.sms or mod.device_sms(device)
    stream = None
    if args.sms:
        from torch.cuda.green_contexts import GreenContext

        gc = GreenContext.create(args.sms, 0)
        gc.set_context()
        stream = gc.Stream()
        mod.device_sms = lambda d: args.sms
        torch.cuda.set_stream(stream)

    def timed(calls):
        if stream is None:
            return min(h.time_graph(calls, REPS_MS) for _ in range(2))
        for c in calls:
            c()
        torch.cuda.synchronize()
        return min(h.time_eager(calls, REPS_MS) for _ in range(2))

    batches = [int(b) for b in args.batches.split(",")] if args.batches else BATCHES
    gen = torch.Generator(device=device)
    gen.manual_seed(1)
    scale = h.HEAD_DIM**-0.5
    rows = []
    for heads in HEADS:
        for topk in TOPKS:
            for batch in batches:
                if batch > sms:
                    continue
                fitted = mod.select(batch, topk, heads, sms)
                c = mod.CONFIGS[fitted]
                if c.family != "pp":
                    continue
                bal = f"ppb_h{c.block_h}_t{c.block_t}_w{c.num_warps}_s{c.num_stages}"
                # correctness, mixed lengths
                buf, q, idx, tl_ = h.make_inputs(
                    64, batch, heads, topk, True, gen, device
                )
                kc = h.as_k_cache(buf, 64)
                mod._PLANS.clear()
                out, lse = mod.sparse_decode_with(bal, q, kc, idx, tl_, scale)
                plan = [p for p in mod._PLANS.values() if p.refusal is None][0]
                ref_out, ref_lse = h.reference(
                    q, h.dequantize(buf, 64), idx, tl_, scale
                )
                rel = float((out.double() - ref_out).norm() / ref_out.norm())
                fin = torch.isfinite(ref_lse)
                lse_err = float((lse.double() - ref_lse)[fin].abs().max())
                lse_inf_ok = bool(torch.all(torch.isinf(lse.double()[~fin])))
                ok = rel <= h.RTOL_OUT and lse_err <= h.ATOL_LSE and lse_inf_ok
                sets = h.timing_sets(batch, topk, heads, gen, device)
                mod._PLANS.clear()
                t_fit = timed(
                    [
                        (lambda s=s: mod.sparse_decode(s[2], s[1], s[3], s[4], scale))
                        for s in sets
                    ]
                )
                mod._PLANS.clear()
                t_bal = timed(
                    [
                        (
                            lambda s=s: mod.sparse_decode_with(
                                bal, s[2], s[1], s[3], s[4], scale
                            )
                        )
                        for s in sets
                    ]
                )
                row = dict(
                    heads=heads,
                    topk=topk,
                    batch=batch,
                    fitted=fitted,
                    balanced=bal,
                    balance=plan.balance,
                    rel_err=rel,
                    lse_err=lse_err,
                    passed=ok,
                    fitted_us=t_fit,
                    balanced_us=t_bal,
                )
                rows.append(row)
                with open(args.out, "w") as f:
                    json.dump(dict(sms=sms, rows=rows), f, indent=1)
                print(
                    f"H {heads:2d} topk {topk:4d} B {batch:3d} {fitted:22s} {t_fit:7.1f} | "
                    f"{bal} {plan.balance} {t_bal:7.1f} x{t_fit / t_bal:5.2f} "
                    f"{'ok' if ok else 'FAIL'} rel {rel:.1e} lse {lse_err:.1e}",
                    flush=True,
                )
    # whole call, correctness and time, one shape a heads count
    for heads, batch in ((64, 48), (16, 72)):
        fitted = mod.select_full(heads, batch, 128 + 2048, sms)
        c = mod.CONFIGS[fitted]
        bal = f"ppb_h{c.block_h}_t{c.block_t}_w{c.num_warps}_s{c.num_stages}"
        sets = [
            h.whole_call_set(heads, batch, 128, 2048, gen, device) for _ in range(3)
        ]
        mod._PLANS.clear()
        out, lse = mod.sparse_decode_full_with(bal, **sets[0]["kw"])
        verdict = h.compare_full(out, lse, h.whole_call_reference(sets[0]))
        t_fit = timed([h.mlagen_entry(mod, s["kw"]) for s in sets])
        mod._PLANS.clear()
        t_bal = timed(
            [(lambda s=s: mod.sparse_decode_full_with(bal, **s["kw"])) for s in sets]
        )
        row = dict(
            entry="whole call",
            heads=heads,
            batch=batch,
            fitted=fitted,
            balanced=bal,
            passed=verdict["passed"],
            fitted_us=t_fit,
            balanced_us=t_bal,
            verdict=verdict,
        )
        rows.append(row)
        print(
            f"whole H {heads} B {batch} {fitted} {t_fit:7.1f} | {bal} {t_bal:7.1f} x{t_fit / t_bal:5.2f} "
            f"{'ok' if verdict['passed'] else 'FAIL'}",
            flush=True,
        )
    with open(args.out, "w") as f:
        json.dump(dict(sms=sms, rows=rows), f, indent=1)
    print(f"{len(rows)} shapes, {sum(not r['passed'] for r in rows)} failed")


if __name__ == "__main__":
    main()
