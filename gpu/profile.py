"""Run one emitted variant on one shape a few times, for a profiler to watch.

    ncu --clock-control none -k regex:_mma_decode_kernel --launch-skip 2 --launch-count 1 \\
        python3 gpu/profile.py kernels/sm90/mma_h16_t64_k32_w8_s1.py 1 2048
"""

import importlib.util
import os
import sys

import torch


def main():
    path, batch, topk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    here = os.path.dirname(path)
    spec = importlib.util.spec_from_file_location(
        "harness", os.path.join(here, "harness.py")
    )
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    module = harness.load_module(path)
    gen = torch.Generator(device="cuda").manual_seed(0)
    ((_, kc, q, idx, topk_length),) = harness.timing_sets(
        batch, topk, 64, gen, torch.device("cuda"), count=1
    )
    for _ in range(4):
        module.sparse_decode(q, kc, idx, topk_length, 512**-0.5)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
