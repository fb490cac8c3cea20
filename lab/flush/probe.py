"""Does do_bench's L2 flush leave a cost inside the timed call?

triton.testing.do_bench clears the L2 cache before each timed call by
zeroing a 256 MB buffer, which leaves the cache full of dirty lines: the
timed call's first loads must write them back to DRAM. The harness's
graph_us (one call a graph) would pay that; a layer figure, the
difference of two graphs that start after the same flush, should mostly
not (the question this answers for both). This times one module's call,
replayed as a graph of one call and of 8 calls on their own inputs, with
two flushes before each replay:

  dirty  cache.zero_() on 256 MB, as do_bench does;
  clean  a read of 256 MB (a sum), which leaves only clean lines.

Median of REPS replays each, CUDA events around the replay alone, in one
process per module.

    python3 lab/flush/probe.py MODULE_DIR LABEL OUT.json [--old DIR]
"""

import importlib.util
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
REPS = 200
LAYERS = 8
SHAPES = {
    "sm90": [
        (16, 512, 16),
        (16, 512, 64),
        (16, 512, 128),
        (16, 2048, 16),
        (16, 2048, 64),
        (16, 2048, 128),
        (64, 2048, 128),
    ],
    "sm120": [(16, 2048, 128), (64, 512, 128), (64, 2048, 64), (64, 2048, 128)],
}


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(replay, flush, reps=REPS):
    for _ in range(10):
        flush()
        replay()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for s, e in zip(starts, ends):
        flush()
        s.record()
        replay()
        e.record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends))
    return times[len(times) // 2]


def main():
    mod_dir, label, out = sys.argv[1], sys.argv[2], sys.argv[3]
    target = os.path.basename(os.path.normpath(mod_dir)).replace("old-", "")
    h = load("harness", os.path.join(ROOT, "kernels", target, "harness.py"))
    mods = {label: load(label, os.path.join(mod_dir, "sparse_mla_mma.py"))}
    if "--old" in sys.argv:
        old = sys.argv[sys.argv.index("--old") + 1]
        mods["then"] = load("then", os.path.join(old, "sparse_mla_mma.py"))
    device = torch.device("cuda")
    h.DEVICE = device
    gen = torch.Generator(device=device).manual_seed(0)
    h.settle_graph_replay(device)
    buf = torch.empty(256 << 20, dtype=torch.int8, device=device)
    total = torch.empty((), dtype=torch.float32, device=device)
    flushes = {
        "dirty": lambda: buf.zero_(),
        "clean": lambda: torch.sum(buf, dim=0, dtype=torch.float32, out=total),
    }
    rows = []
    for heads, topk, batch in SHAPES[target]:
        sets = h.timing_sets(batch, topk, heads, gen, device, count=LAYERS)
        for name, mod in mods.items():
            if name == "then" and heads != 16:
                continue
            calls = h.shape_calls(mod, sets)
            g1, g8 = h.capture_graph(calls[:1]), h.capture_graph(calls)
            row = {"module": name, "heads": heads, "topk": topk, "batch": batch}
            for f, flush in flushes.items():
                t1, t8 = timed(g1, flush), timed(g8, flush)
                row[f"{f}_one"] = t1
                row[f"{f}_layer"] = (t8 - t1) / (LAYERS - 1)
            row["do_bench_one"] = h.bench_us(g1, 100)
            rows.append(row)
            print(
                f"{name:5s} H {heads:3d} topk {topk:5d} B {batch:4d} | one call: dirty {row['dirty_one']:7.1f} "
                f"clean {row['clean_one']:7.1f} (do_bench {row['do_bench_one']:7.1f}) | layer: dirty "
                f"{row['dirty_layer']:7.1f} clean {row['clean_layer']:7.1f}",
                flush=True,
            )
        del sets
        torch.cuda.empty_cache()
    env = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": __import__("triton").__version__,
        "disable_mma_v3": os.environ.get("DISABLE_MMA_V3", ""),
    }
    with open(out, "w") as f:
        json.dump({"target": target, "env": env, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
