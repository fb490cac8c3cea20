"""lab/wpf's copies (prepare.py) through their entry points, on the
shipped harness's timing inputs, at 16 heads: the whole call
(supports_full / sparse_decode_full: a 128-token window, an extra cache
of 512 or 2,048, a sink) for every copy, and per cache (sparse_decode,
topk 512 and 2048) for base, g3 and g2; B 1, 16, 64, 128. Other copies
by name: WHOLE and CACHE, comma-separated lists, base first. Each shape:
every copy's output against base's, then each timed one call a graph and
as layers (8 calls back to back), in one order and then the reverse, the
faster of two.

    DISABLE_MMA_V3=1 python3 lab/wpf/time.py OUT.json [WHOLE CACHE]
    # the second call: ... time.py OUT.json base,card,one,blk base,one,blk
"""

import importlib.util
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
HEADS = 16
TOKENS = (512, 2048)
BATCHES = (1, 16, 64, 128)
WINDOW = 128
REPS_MS = 100
LAYERS = 8
WHOLE = ("base", "card", "g3", "g2")
CACHE = ("base", "g3", "g2")


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shape(h, mods, names, entry, tokens, batch, gen, device):
    if entry == "whole":
        layer_sets = [
            h.whole_call_set(HEADS, batch, WINDOW, tokens, gen, device)
            for _ in range(LAYERS)
        ]

        def calls(m, s):
            return [h.mlagen_entry(mods[m], one["kw"]) for one in s]

    else:
        layer_sets = h.timing_sets(batch, tokens, HEADS, gen, device, count=LAYERS)

        def calls(m, s):
            return h.shape_calls(mods[m], s)

    sets = layer_sets[: h.ROTATING_SETS]
    row = {"entry": entry, "heads": HEADS, "tokens": tokens, "batch": batch}
    o_ref, l_ref = calls("base", sets[:1])[0]()
    for m in names[1:]:
        o, l = calls(m, sets[:1])[0]()
        rel = (o.float() - o_ref.float()).abs().max().item() / max(
            o_ref.float().abs().max().item(), 1e-30
        )
        row[m + "_out_rel_diff"] = rel
        row[m + "_lse_diff"] = (l.float() - l_ref.float()).abs().max().item()
    for order in (names, names[::-1]):
        for m in order:
            t = h.time_graph(calls(m, sets), REPS_MS)
            row[m] = min(row.get(m, t), t)
            t = h.time_graph_layers(calls(m, layer_sets), REPS_MS)
            row[m + "_layer"] = min(row.get(m + "_layer", t), t)
    print(
        f"{entry:5s} tokens {tokens:5d} B {batch:4d} | "
        + " ".join(f"{m} {row[m]:6.1f}" for m in names)
        + " | /base "
        + " ".join(f"{m} {row[m] / row['base']:5.3f}" for m in names[1:])
        + " | layers /base "
        + " ".join(
            f"{m} {row[m + '_layer'] / row['base_layer']:5.3f}" for m in names[1:]
        )
        + " | max out diff "
        + f"{max(row[m + '_out_rel_diff'] for m in names[1:]):.1e}",
        flush=True,
    )
    return row


def main():
    out_path = sys.argv[1]
    whole_names, cache_names = WHOLE, CACHE
    if len(sys.argv) > 2:
        whole_names = tuple(sys.argv[2].split(","))
        cache_names = tuple(sys.argv[3].split(","))
    h = load("harness_wpf", os.path.join(HERE, "base", "harness.py"))
    mods = {
        m: load(f"wpf_{m}", os.path.join(HERE, m, "sparse_mla_mma.py"))
        for m in set(whole_names) | set(cache_names)
    }
    device = torch.device("cuda")
    h.DEVICE = device
    gen = torch.Generator(device=device).manual_seed(0)
    h.settle_graph_replay(device)
    rows = []
    for entry, names in (("whole", whole_names), ("cache", cache_names)):
        for tokens in TOKENS:
            for batch in BATCHES:
                try:
                    rows.append(
                        shape(h, mods, names, entry, tokens, batch, gen, device)
                    )
                except Exception as e:  # report the shape and go on
                    print(f"{entry} {tokens} B {batch} ERROR {e!r}"[:2000], flush=True)
                torch.cuda.empty_cache()
    env = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": __import__("triton").__version__,
        "disable_mma_v3": os.environ.get("DISABLE_MMA_V3", ""),
    }
    with open(out_path, "w") as f:
        json.dump({"env": env, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
