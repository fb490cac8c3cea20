"""What the per-call lookup costs by itself: timeit of the shipped module's
_call_sms(q) and of its per-cache plan key (_call_key) against 76c1a70's
key (prepare.py), on the GPU's host, default stream.

    python3 lab/greenctx/lookup.py sm90
"""

import os
import sys
import timeit

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def main(target):
    sys.path.insert(0, os.path.join(ROOT, "kernels", target))
    import harness as h

    after = h.load_module(os.path.join(ROOT, "kernels", target, "sparse_mla_mma.py"))
    before = h.load_module(os.path.join(HERE, f"before-{target}", "sparse_mla_mma.py"))
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)
    _, kc, q, idx, n = h.timing_sets(16, 2048, 16, gen, torch.device("cuda"), count=1)[
        0
    ]
    count = 200000
    cases = (
        ("_call_sms", lambda: after._call_sms(q)),
        ("key after", lambda: after._call_key(after._PER_CACHE, q, kc, idx, n)),
        ("key before", lambda: before._call_key(before._PER_CACHE, q, kc, idx, n)),
    )
    for _ in range(3):
        for what, fn in cases:
            us = timeit.timeit(fn, number=count) / count * 1e6
            print(f"{target} {what:10s} {us:.3f} µs", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
