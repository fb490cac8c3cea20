"""lab/splits36: 3 and 6 splits beside the shipped counts. At batches where
fit_splits, given them, picks another count than it does without them (the
shipped module's fit at 23853f1), the copy's entry point (new count)
against that choice by name, on the copy; the entry's output checked against float64 (RTOL_OUT, ATOL_LSE).
CUDA-graph replay, the faster of two passes.

    python3 lab/splits36/probe.py sm90 OUT.json     # DISABLE_MMA_V3=1 for sm120
"""

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
REPS_MS = 60
PICK = {  # (heads, topk): batches, chosen where the model moves the count
    (16, 512): (34, 41),
    (16, 2048): (20, 38, 74, 88),
    (64, 512): (18, 36, 43, 79),
    (64, 2048): (21, 39, 68, 82, 170),
}


def main():
    target, out_path = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(ROOT, "kernels", target))
    import harness as h

    mod = h.load_module(os.path.join(HERE, target, "sparse_mla_mma.py"))
    both = mod._SPLIT_SIBLINGS
    # The shipped module's fit: the same siblings without 3 and 6.
    before = {
        n: {k: v for k, v in s.items() if k not in (3, 6)} for n, s in both.items()
    }

    def shipped_select(batch, topk, heads, sms):
        mod._SPLIT_SIBLINGS = before
        try:
            return mod.select(batch, topk, heads, sms)
        finally:
            mod._SPLIT_SIBLINGS = both

    device = torch.device("cuda")
    sms = mod.device_sms(device)
    gen = torch.Generator(device=device)
    gen.manual_seed(1)
    scale = h.HEAD_DIM**-0.5
    rows = []
    for (heads, topk), batches in PICK.items():
        for batch in batches:
            shipped = shipped_select(batch, topk, heads, sms)
            new = mod.select(batch, topk, heads, sms)
            if new == shipped:
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
                        shipped, s[2], s[1], s[3], s[4], scale
                    )
                )
                for s in sets
            ]
            buf, q, idx, tl_ = h.make_inputs(64, batch, heads, topk, True, gen, device)
            kc = h.as_k_cache(buf, 64)
            mod._PLANS.clear()
            out, lse = mod.sparse_decode(q, kc, idx, tl_, scale)
            ran = sorted({p.message for p in mod._PLANS.values() if p.refusal is None})
            ref_out, ref_lse = h.reference(q, h.dequantize(buf, 64), idx, tl_, scale)
            rel = float((out.double() - ref_out).norm() / ref_out.norm())
            fin = torch.isfinite(ref_lse)
            lse_err = float((lse.double() - ref_lse)[fin].abs().max())
            ok = rel <= h.RTOL_OUT and lse_err <= h.ATOL_LSE and new in " ".join(ran)
            t_new = min(h.time_graph(entry, REPS_MS) for _ in range(2))
            t_old = min(h.time_graph(by_name, REPS_MS) for _ in range(2))
            rows.append(
                dict(
                    heads=heads,
                    topk=topk,
                    batch=batch,
                    shipped=shipped,
                    new=new,
                    shipped_us=t_old,
                    new_us=t_new,
                    rel_err=rel,
                    lse_err=lse_err,
                    passed=ok,
                )
            )
            print(
                f"H {heads:2d} topk {topk:4d} B {batch:3d} {shipped:22s} {t_old:7.1f} -> "
                f"{new:22s} {t_new:7.1f} x{t_old / t_new:5.2f} {'ok' if ok else 'FAIL'}",
                flush=True,
            )
            with open(out_path, "w") as f:
                json.dump(dict(target=target, sms=sms, rows=rows), f, indent=1)
    print(f"{target}: {len(rows)} shapes, {sum(not r['passed'] for r in rows)} failed")


if __name__ == "__main__":
    main()
