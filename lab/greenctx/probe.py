"""Host time of an eager call, before and after the entry points look up
their stream's multiprocessor count on every call (lab/greenctx/NOTES.md).

Both modules of one target in one process, alternated five times: the
shipped one (kernels/<target>) and 76c1a70's (prepare.py). Per cache and
as the whole call, 16 and 64 heads, B 16; the harness's time_host (calls
queued without waiting for the GPU, median of 3 runs of 200).

    python3 lab/greenctx/probe.py sm90 OUT.json   # DISABLE_MMA_V3=1 for sm120
"""

import json
import os
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def main(target, out):
    sys.path.insert(0, os.path.join(ROOT, "kernels", target))
    import harness as h

    mods = {
        "after": h.load_module(
            os.path.join(ROOT, "kernels", target, "sparse_mla_mma.py")
        ),
        "before": h.load_module(
            os.path.join(HERE, f"before-{target}", "sparse_mla_mma.py")
        ),
    }
    device = torch.device("cuda")
    gen = torch.Generator(device=device)
    gen.manual_seed(1)
    scale = h.HEAD_DIM**-0.5
    rows = []
    for heads in (16, 64):
        sets = h.timing_sets(16, 2048, heads, gen, device)
        whole = [h.whole_call_set(heads, 16, 128, 2048, gen, device) for _ in range(3)]
        for entry in ("per cache", "whole call"):
            calls = {
                name: (
                    [
                        (
                            lambda s=s, m=m: m.sparse_decode(
                                s[2], s[1], s[3], s[4], scale
                            )
                        )
                        for s in sets
                    ]
                    if entry == "per cache"
                    else [h.mlagen_entry(m, s["kw"]) for s in whole]
                )
                for name, m in mods.items()
            }
            us = {name: [] for name in mods}
            for _ in range(5):
                for name in mods:
                    us[name].append(h.time_host(calls[name]))
            row = dict(
                entry=entry,
                heads=heads,
                batch=16,
                **{f"{n}_us": statistics.median(v) for n, v in us.items()},
                runs=us,
            )
            rows.append(row)
            print(
                f"{target} {entry:10s} H {heads:2d} B 16: host µs a call before "
                f"{row['before_us']:5.1f}, after {row['after_us']:5.1f} "
                f"(+{row['after_us'] - row['before_us']:.2f})",
                flush=True,
            )
    with open(out, "w") as f:
        json.dump(dict(target=target, rows=rows), f, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:])
