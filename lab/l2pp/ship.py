"""The module before lab/l2pp's prefetch (lab/l2pp/base, prepare.py)
beside the one emitted with it (kernels/<target>), through their entry
points, on the shipped harness's timing inputs: per cache (sparse_decode)
at H 16 and 64, topk 512 and 2048, B 1, 16, 64 and 128, and as the whole
call (supports_full / sparse_decode_full: a 128-token window, an extra
cache of 512 or 2,048, a sink) at the same heads and batches. Each shape:
the two modules' outputs compared, then timed one call a graph and as
layers (8 calls back to back), in alternating order, the faster of two.

    DISABLE_MMA_V3=1 python3 lab/l2pp/ship.py sm120 OUT.json
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
WINDOW = 128
REPS_MS = 100
LAYERS = 8


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def per_cache(h, mods, heads, topk, batch, gen, device):
    layer_sets = h.timing_sets(batch, topk, heads, gen, device, count=LAYERS)
    sets = layer_sets[: h.ROTATING_SETS]

    def calls(m, s):
        return h.shape_calls(mods[m], s)

    return run(h, "cache", heads, topk, batch, calls, sets, layer_sets)


def whole(h, mods, heads, extra, batch, gen, device):
    layer_sets = [
        h.whole_call_set(heads, batch, WINDOW, extra, gen, device)
        for _ in range(LAYERS)
    ]
    sets = layer_sets[: h.ROTATING_SETS]

    def calls(m, s):
        return [h.mlagen_entry(mods[m], one["kw"]) for one in s]

    return run(h, "whole", heads, extra, batch, calls, sets, layer_sets)


def run(h, entry, heads, tokens, batch, calls, sets, layer_sets):
    o_then, l_then = calls("then", sets[:1])[0]()
    o_now, l_now = calls("now", sets[:1])[0]()
    diff = (o_then.float() - o_now.float()).abs().max().item()
    rel = diff / max(o_now.float().abs().max().item(), 1e-30)
    lse = (l_then.float() - l_now.float()).abs().max().item()
    row = {"entry": entry, "heads": heads, "tokens": tokens, "batch": batch}
    row.update(out_rel_diff=rel, lse_diff=lse)
    for order in (("then", "now"), ("now", "then")):
        for m in order:
            t = h.time_graph(calls(m, sets), REPS_MS)
            row[m] = min(row.get(m, t), t)
            t = h.time_graph_layers(calls(m, layer_sets), REPS_MS)
            row[m + "_layer"] = min(row.get(m + "_layer", t), t)
    print(
        f"{entry:5s} H {heads:3d} tokens {tokens:5d} B {batch:4d} "
        f"then {row['then']:7.1f} now {row['now']:7.1f} now/then {row['now'] / row['then']:5.3f} "
        f"layers {row['then_layer']:7.1f} {row['now_layer']:7.1f} now/then {row['now_layer'] / row['then_layer']:5.3f} "
        f"out diff {rel:.1e} lse diff {lse:.1e}",
        flush=True,
    )
    return row


def main():
    target, out_path = sys.argv[1], sys.argv[2]
    shipped = os.path.join(ROOT, "kernels", target)
    h = load(f"harness_{target}", os.path.join(shipped, "harness.py"))
    mods = {
        "then": load("then", os.path.join(HERE, "base", "sparse_mla_mma.py")),
        "now": load("now", os.path.join(shipped, "sparse_mla_mma.py")),
    }
    device = torch.device("cuda")
    h.DEVICE = device
    gen = torch.Generator(device=device).manual_seed(0)
    h.settle_graph_replay(device)
    rows = []
    for fn, tokens in ((per_cache, TOPKS), (whole, TOPKS)):
        for heads in HEADS:
            for t in tokens:
                for batch in BATCHES:
                    try:
                        rows.append(fn(h, mods, heads, t, batch, gen, device))
                    except Exception as e:  # report the shape and go on
                        print(
                            f"{fn.__name__} H {heads} {t} B {batch} ERROR {e!r}"[:2000],
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
