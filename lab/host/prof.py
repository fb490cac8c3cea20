"""Where the whole call's host time goes (issue 25's eager bound): each
stage of one eager call of a module's entry points, timed alone on the
host clock, at the shapes where the call is host-bound. On the device:

    python3 lab/host/prof.py DIR...   # DIR holds sparse_mla_mma.py and harness.py

One line per (module, shape, stage): median µs of three runs of 1,000.
"""

import json
import os
import sys
import time

import torch


def host_us(fn, count=1000):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(count):
            fn()
        runs.append((time.perf_counter() - start) / count * 1e6)
        torch.cuda.synchronize()
    return sorted(runs)[1]


def load(d):
    """(harness, module) of the module copy in folder d."""
    sys.path.insert(0, d)
    harness = __import__("harness")
    sys.path.pop(0)
    del sys.modules["harness"]
    return harness, harness.load_module(os.path.join(d, "sparse_mla_mma.py"))


def stages(d, heads, batch, extra):
    harness, m = load(d)
    gen = torch.Generator(device="cuda").manual_seed(0)
    one = harness.whole_call_set(heads, batch, 128, extra, gen, torch.device("cuda"))
    kw = one["kw"]
    q, k0, i0, l0 = kw["q"], kw["k_cache"], kw["indices"], kw["topk_length"]
    k1, i1, l1 = kw["extra_k_cache"], kw["extra_indices"], kw["extra_topk_length"]
    sink = kw["attn_sink"]

    def call():
        if not m.supports_full(**kw):
            raise RuntimeError("refused")
        return m.sparse_decode_full(**kw)

    call()
    torch.cuda.synchronize()
    plan = m._full_plan(None, q, k0, i0, l0, sink, 512, k1, i1, l1)
    out = torch.empty(plan.out_shape, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(plan.lse_shape, dtype=torch.float32, device="cuda")
    work = torch.empty(max(plan.work_bytes, 16), dtype=torch.uint8, device="cuda")
    at = work.data_ptr()
    values = dict(
        q=q.data_ptr(),
        k0=k0.data_ptr(),
        i0=i0.data_ptr(),
        l0=l0.data_ptr(),
        k1=k1.data_ptr(),
        i1=i1.data_ptr(),
        l1=l1.data_ptr(),
        sink=sink.data_ptr(),
        out=out.data_ptr(),
        lse=lse.data_ptr(),
        part=at,
        plse=at + plan.plse_offset,
        scale=0.1,
    )
    stream = m._raw_stream(q.get_device())
    rows = {
        "whole call (supports_full + sparse_decode_full)": host_us(call),
        "supports_full": host_us(lambda: m.supports_full(**kw)),
        "_full_key": host_us(
            lambda: m._full_key(None, q, k0, i0, l0, sink, 512, k1, i1, l1)
        ),
        "plan.run": host_us(lambda: plan.run(q, k0, i0, l0, k1, i1, l1, sink, 0.0625)),
        "torch.empty out": host_us(
            lambda: torch.empty(plan.out_shape, dtype=torch.bfloat16, device="cuda")
        ),
        "torch.empty out (plan.device)": host_us(
            lambda: torch.empty(
                plan.out_shape, dtype=torch.bfloat16, device=plan.device
            )
        ),
        "q.new_empty out": host_us(
            lambda: q.new_empty(plan.out_shape, dtype=torch.bfloat16)
        ),
        "raw stream": host_us(lambda: m._raw_stream(plan.dev_index)),
        "12 data_ptr": host_us(
            lambda: (
                q.data_ptr(),
                k0.data_ptr(),
                i0.data_ptr(),
                l0.data_ptr(),
                k1.data_ptr(),
                i1.data_ptr(),
                l1.data_ptr(),
                sink.data_ptr(),
                out.data_ptr(),
                lse.data_ptr(),
                work.data_ptr(),
                q.data_ptr(),
            )
        ),
    }
    for n, kernel in enumerate(plan.kernels):
        name = kernel.fn.__name__
        rows[f"launch {n} {name} ({len(kernel.template)} args)"] = host_us(
            lambda kernel=kernel: kernel.launch(values, q, stream)
        )
        if kernel.raw is not None:
            args = kernel.template.copy()
            for i, v in kernel.slots:
                args[i] = values[v]
            gx, gy, gz = kernel.xyz

            def raw(kernel=kernel, args=args):
                kernel.raw(
                    gx,
                    gy,
                    gz,
                    stream,
                    kernel.function,
                    kernel.coop,
                    kernel.pdl,
                    None,
                    None,
                    kernel.packed,
                    None,
                    None,
                    None,
                    *args,
                )

            rows[f"raw C launch {n} {name}"] = host_us(raw)
    rows["config"] = plan.message
    return rows


def main():
    dirs = sys.argv[1:]
    shapes = [(64, 1, 512), (64, 1, 2048), (128, 1, 512)]
    result = []
    for heads, batch, extra in shapes:
        for d in dirs:
            rows = stages(d, heads, batch, extra)
            result.append(
                {"dir": d, "heads": heads, "batch": batch, "extra": extra, **rows}
            )
            for k, v in rows.items():
                v = v if isinstance(v, str) else f"{v:8.2f} µs"
                print(f"{d:>16} H{heads} B{batch} e{extra} {k:55s} {v}", flush=True)
    out = os.environ.get("OUT", "/tmp")
    with open(os.path.join(out, "host-prof.json"), "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
