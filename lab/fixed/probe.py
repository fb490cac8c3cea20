"""What a small-batch call pays besides its tiles (issue 26's B 16 cells).

For the shipped module of one target (kernels/<target>), per shape: the
call as shipped (its own selection), the same call with only its decode
kernel launched (the split-K combine left out: results wrong by design,
timing only), and a graph of one tiny kernel (the floor of any call under
this timing). CUDA-graph replay, do_bench median, L2 flushed between
calls, the harness's own timing inputs, the faster of two passes.

    python3 lab/fixed/probe.py sm90 OUT.json      # DISABLE_MMA_V3=1 for sm120
"""

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
REPS_MS = 100
SHAPES = [
    (16, 512, 1),
    (16, 512, 16),
    (16, 512, 64),
    (16, 2048, 16),
    (16, 2048, 64),
    (64, 512, 16),
    (64, 512, 64),
    (64, 2048, 16),
]


def main():
    target, out_path = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(ROOT, "kernels", target))
    import harness as h

    mod = h.load_module(os.path.join(ROOT, "kernels", target, "sparse_mla_mma.py"))
    device = torch.device("cuda")
    h.settle_graph_replay(device)
    gen = torch.Generator(device=device)
    gen.manual_seed(1)
    x = torch.zeros(1, device=device)
    floor = min(h.time_graph([lambda: x.add_(1)], REPS_MS) for _ in range(2))
    rows = []
    print(f"{target}: graph of one tiny kernel {floor:.1f} us")
    for heads, topk, batch in SHAPES:
        sets = h.timing_sets(batch, topk, heads, gen, device)
        scale = h.HEAD_DIM**-0.5
        config = mod.select(batch, topk, heads)
        calls = [
            (
                lambda q=q, kc=kc, idx=idx, tl_=tl_: mod.sparse_decode(
                    q, kc, idx, tl_, scale
                )
            )
            for _, kc, q, idx, tl_ in sets
        ]
        for c in calls:
            c()
        torch.cuda.synchronize()
        plans = [p for p in mod._PLANS.values() if getattr(p, "kernels", None)]
        full = decode = None
        for _ in range(2):
            t = h.time_graph(calls, REPS_MS)
            full = t if full is None else min(full, t)
            saved = [p.kernels for p in plans]
            for p in plans:
                p.kernels = p.kernels[:1]
            t = h.time_graph(calls, REPS_MS)
            decode = t if decode is None else min(decode, t)
            for p, k in zip(plans, saved):
                p.kernels = k
        launches = len(plans[0].kernels) if plans else 0
        row = dict(
            target=target,
            heads=heads,
            topk=topk,
            batch=batch,
            config=config,
            launches=launches,
            full_us=full,
            decode_only_us=decode,
            floor_us=floor,
        )
        rows.append(row)
        print(
            f"H {heads:3d} topk {topk:5d} B {batch:4d} {config:24s} launches {launches} "
            f"full {full:6.1f} decode only {decode:6.1f} combine {full - decode:5.1f} "
            f"above floor {full - floor:5.1f}",
            flush=True,
        )
        mod._PLANS.clear()
    with open(out_path, "w") as f:
        json.dump(dict(floor_us=floor, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
