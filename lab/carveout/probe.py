"""Whether the SM's shared-memory carveout costs a call between its kernels.

A split call runs the decode kernel (most of the SM's shared memory) and
then its combine (none). Each kernel has no carveout preference, so the
driver may configure an SM for the combine's larger L1 and back for the
next decode: lab/chain saw the decode's programs start 1.47 µs after the
previous kernel's, a trivial kernel's 0.96. This times each shape's call
as shipped (its own selection) with every kernel of its plan at the
default preference and with the preference at the maximum shared memory
(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 100, set by the
driver API on the compiled functions the plan launches), alternating,
twice each, the faster kept. CUDA-graph replay, do_bench median with the
L2 flushed, the harness's own timing inputs.

    python3 lab/carveout/probe.py sm90 OUT.json      # DISABLE_MMA_V3=1 for sm120
"""

import ctypes
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
REPS_MS = 100
CARVEOUT = 9  # CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
SHAPES = {
    "sm90": [(16, 512, b) for b in (1, 16, 64, 128)]
    + [(16, 2048, b) for b in (1, 16, 64, 128)]
    + [(64, 512, 16), (64, 512, 64), (64, 2048, 16)],
    "sm120": [
        (16, 512, 16),
        (16, 2048, 16),
        (64, 512, 16),
        (64, 512, 64),
        (64, 2048, 64),
    ],
}


def main():
    target, out_path = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(ROOT, "kernels", target))
    import harness as h

    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuFuncSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]

    def prefer(plans, value):
        for plan in plans:
            for kernel in plan.kernels:
                err = cuda.cuFuncSetAttribute(kernel.function, CARVEOUT, value)
                if err:
                    raise RuntimeError(f"cuFuncSetAttribute: CUresult {err}")

    mod = h.load_module(os.path.join(ROOT, "kernels", target, "sparse_mla_mma.py"))
    device = torch.device("cuda")
    h.settle_graph_replay(device)
    gen = torch.Generator(device=device)
    gen.manual_seed(1)
    rows = []
    for heads, topk, batch in SHAPES[target]:
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
        best = {-1: None, 100: None}
        for _ in range(2):
            for value in (-1, 100):
                prefer(plans, value)
                t = h.time_graph(calls, REPS_MS)
                best[value] = t if best[value] is None else min(best[value], t)
        prefer(plans, -1)
        row = dict(
            target=target,
            heads=heads,
            topk=topk,
            batch=batch,
            config=config,
            launches=len(plans[0].kernels) if plans else 0,
            default_us=best[-1],
            max_shared_us=best[100],
        )
        rows.append(row)
        print(
            f"{target} H {heads:3d} topk {topk:5d} B {batch:4d} {config:24s} "
            f"launches {row['launches']} default {best[-1]:6.1f} "
            f"max shared {best[100]:6.1f} ratio {best[100] / best[-1]:.3f}",
            flush=True,
        )
        mod._PLANS.clear()
    with open(out_path, "w") as f:
        json.dump(dict(rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
