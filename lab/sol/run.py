"""Run one configuration of the shipped sm_90 module on one shape a few
times, for ncu to watch (lab/sol/device.sh).

    python3 lab/sol/run.py CONFIG HEADS BATCH TOPK
"""

import importlib.util
import os
import sys

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    config, heads, batch, topk = sys.argv[1], *map(int, sys.argv[2:5])
    d = os.path.join(ROOT, "kernels", "sm90")
    harness = load("harness", os.path.join(d, "harness.py"))
    module = load("sparse_mla_mma", os.path.join(d, "sparse_mla_mma.py"))
    gen = torch.Generator(device="cuda").manual_seed(0)
    ((_, kc, q, idx, topk_length),) = harness.timing_sets(
        batch, topk, heads, gen, torch.device("cuda"), count=1
    )
    for _ in range(4):
        module.sparse_decode_with(config, q, kc, idx, topk_length, 512**-0.5)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
