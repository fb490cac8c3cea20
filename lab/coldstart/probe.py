"""lab/coldstart: what a server's first decode calls cost while the
module's kernels compile, with Triton's cache empty (a fresh container).

One process a module, TRITON_CACHE_DIR a fresh directory: the whole call
(window 128 plus an extra cache of 2048 tokens, a sink) at SGLang's CUDA
graph capture batches, as its capture walks them (largest first), for 64
and 16 heads. Each first call is timed to its end (torch.cuda.synchronize);
the configurations it ran are read off the module's plans. Then the same
calls again (warm) for the difference.

    DISABLE_MMA_V3=1 python3 lab/coldstart/probe.py sm120 OUT.json
"""

import json
import os
import sys
import tempfile
import time

os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="coldstart-")

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
# SGLang's default capture list up to 160 (1, 2, 4, 8, then steps of 8).
BATCHES = [1, 2, 4] + list(range(8, 161, 8))


def main():
    target, out_path = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(ROOT, "kernels", target))
    import harness as h

    mod = h.load_module(os.path.join(ROOT, "kernels", target, "sparse_mla_mma.py"))
    device = torch.device("cuda")
    gen = torch.Generator(device=device)
    gen.manual_seed(1)
    rows = []
    for heads in (64, 16):
        seen = set()
        cold_total = warm_total = 0.0
        for batch in sorted(BATCHES, reverse=True):
            s = h.whole_call_set(heads, batch, 128, 2048, gen, device)
            call = h.mlagen_entry(mod, s["kw"])
            torch.cuda.synchronize()
            t = time.perf_counter()
            call()
            torch.cuda.synchronize()
            cold = time.perf_counter() - t
            t = time.perf_counter()
            call()
            torch.cuda.synchronize()
            warm = time.perf_counter() - t
            name = mod.select_full(heads, batch, 128 + 2048, mod.device_sms(device))
            new = name not in seen
            seen.add(name)
            cold_total += cold
            warm_total += warm
            rows.append(
                dict(
                    heads=heads,
                    batch=batch,
                    config=name,
                    new=new,
                    cold_s=cold,
                    warm_s=warm,
                )
            )
            print(
                f"H {heads} B {batch:3d} {name:24s} {'new' if new else '   '} first {cold:7.3f} s, again {warm * 1e3:7.2f} ms",
                flush=True,
            )
        print(
            f"H {heads}: {len(BATCHES)} batches, {len(seen)} configurations, first calls {cold_total:.1f} s in all (again {warm_total * 1e3:.1f} ms)",
            flush=True,
        )
    with open(out_path, "w") as f:
        json.dump(dict(target=target, batches=BATCHES, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
