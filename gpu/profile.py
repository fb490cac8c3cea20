"""Run one emitted variant on one shape a few times, for a profiler to watch.

    ncu --clock-control none -k regex:_mma_decode_kernel --launch-skip 2 --launch-count 1 \\
        python3 gpu/profile.py kernels/sm90/mma_h16_t64_k32_w8_s1.py 1 2048

Optionally HEADS (64 unless given) and, for a module with several
configurations, CONFIG: that configuration runs (sparse_decode_with)
instead of the module's own selection:

    python3 gpu/profile.py kernels/sm90/sparse_mla_mma.py 128 2048 16 ws_h16_t64_k1_w4_s2
"""

import importlib.util
import os
import sys

import torch


def main():
    path, batch, topk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    heads = int(sys.argv[4]) if len(sys.argv) > 4 else 64
    config = sys.argv[5] if len(sys.argv) > 5 else None
    here = os.path.dirname(path)
    spec = importlib.util.spec_from_file_location(
        "harness", os.path.join(here, "harness.py")
    )
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    module = harness.load_module(path)
    gen = torch.Generator(device="cuda").manual_seed(0)
    ((_, kc, q, idx, topk_length),) = harness.timing_sets(
        batch, topk, heads, gen, torch.device("cuda"), count=1
    )
    for _ in range(4):
        if config is None:
            module.sparse_decode(q, kc, idx, topk_length, 512**-0.5)
        else:
            module.sparse_decode_with(config, q, kc, idx, topk_length, 512**-0.5)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
