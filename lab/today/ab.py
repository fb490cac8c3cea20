"""Issue 26's "today" in the same run as now: the module of one target as
it was when the issue was filed (lab/today/old-<target>, prepare.py) beside
the shipped one (kernels/<target>), per cache, each through its own
sparse_decode (its own selection), on the shipped harness's timing inputs
and timing (CUDA-graph replay, do_bench median, L2 flushed between calls).
Two passes in alternating order; the faster of the two per module and
shape. Before timing, the two modules' outputs on the same inputs are
compared (a broken copy shows there).

Each module is also timed as layers (`then_layer`, `now_layer`): the µs
one call adds to a CUDA graph of LAYERS calls back to back, each on its
own inputs, as a layer's call adds to a server's decode graph (the
harness's time_graph_layers; from the fifth run on, which flushed the L2
cache as do_bench does; from the sixth with the harness's clean flush,
bench_clean_us). One call a graph, as `then` and `now` are timed, also
counts the graph's launch and the timing events, and do_bench's flush
leaves dirty lines for the timed call to write back (lab/flush).

    python3 lab/today/ab.py sm90 OUT.json     # DISABLE_MMA_V3=1 for sm120
"""

import importlib.util
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
HEADS = (16, 64)
TOPKS = (512, 2048)
BATCHES = (1, 16, 64, 128)
REPS_MS = 100
LAYERS = 8


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shape(h, mods, heads, topk, batch, gen, device):
    """One shape: the two modules' outputs compared, then timed."""
    layer_sets = h.timing_sets(batch, topk, heads, gen, device, count=LAYERS)
    sets = layer_sets[: h.ROTATING_SETS]
    _, kc, q, idx, tl_ = sets[0]
    scale = h.HEAD_DIM**-0.5
    o_then, l_then = mods["then"].sparse_decode(q, kc, idx, tl_, scale)
    o_now, l_now = mods["now"].sparse_decode(q, kc, idx, tl_, scale)
    diff = (o_then.float() - o_now.float()).abs().max().item()
    rel = diff / max(o_now.float().abs().max().item(), 1e-30)
    lse = (l_then.float() - l_now.float()).abs().max().item()
    row = {
        "heads": heads,
        "topk": topk,
        "batch": batch,
        "out_rel_diff": rel,
        "lse_diff": lse,
    }
    for order in (("then", "now"), ("now", "then")):
        for m in order:
            t = h.time_shape(mods[m], batch, topk, sets, True, REPS_MS)
            row[m] = min(row.get(m, t), t)
            calls = h.shape_calls(mods[m], layer_sets)
            t = h.time_graph_layers(calls, REPS_MS)
            row[m + "_layer"] = min(row.get(m + "_layer", t), t)
    row["config_now"] = mods["now"].select(batch, topk, heads)
    row["config_then"] = mods["then"].select(batch, topk)
    print(
        f"H {heads:3d} topk {topk:5d} B {batch:4d} then {row['then']:8.1f} now {row['now']:8.1f} "
        f"then/now {row['then'] / row['now']:5.2f} layer then {row['then_layer']:8.1f} now {row['now_layer']:8.1f} "
        f"then/now {row['then_layer'] / row['now_layer']:5.2f} out diff {rel:.1e} lse diff {lse:.1e} "
        f"{row['config_then']} -> {row['config_now']}",
        flush=True,
    )
    return row


def main():
    target, out_path = sys.argv[1], sys.argv[2]
    shipped_dir = os.path.join(ROOT, "kernels", target)
    h = load(f"harness_{target}", os.path.join(shipped_dir, "harness.py"))
    mods = {
        "then": load(
            f"then_{target}", os.path.join(HERE, f"old-{target}", "sparse_mla_mma.py")
        ),
        "now": load(f"now_{target}", os.path.join(shipped_dir, "sparse_mla_mma.py")),
    }
    device = torch.device("cuda")
    h.DEVICE = device
    gen = torch.Generator(device=device).manual_seed(0)
    h.settle_graph_replay(device)
    rows = []
    for heads in HEADS:
        for topk in TOPKS:
            for batch in BATCHES:
                try:
                    rows.append(shape(h, mods, heads, topk, batch, gen, device))
                except Exception as e:  # report the shape and go on
                    print(
                        f"{target} H {heads} topk {topk} B {batch} ERROR {e!r}"[:2000],
                        flush=True,
                    )
                torch.cuda.empty_cache()
    env = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": __import__("triton").__version__,
        "disable_mma_v3": os.environ.get("DISABLE_MMA_V3", ""),
    }
    with open(out_path, "w") as f:
        json.dump({"target": target, "env": env, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
