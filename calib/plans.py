"""Check on the CPU that every configuration of a kernel module builds its
launches, per cache and as the whole call, and that its decode launch is
the compile the calibration measures (no GPU needed).

A plan binds a value to every parameter of every kernel it launches
(_Kernel raises "no value for [...]" when one has none). For the Gluon
families (ws, pp) nothing else on a machine without a GPU would notice a
launch that forgets an argument or a constexpr the template gave the
kernel: the interpreter skips them (calib/interp.py), and the calibration
compiles the decode kernel from its own constexprs (calib/sass.py
decode_job), not from the launch. So this builds each configuration's
plan for both entries from the harness's own inputs, on CPU tensors,
exactly as a call's first use would, and fails on any plan that cannot
be built.

It also holds each plan's launches against calib/sass.py for the same
configuration and entry (the decode kernel against decode_job, a combine
against one of combine_jobs' shapes): the same kernel, the same
constexprs and the same launch options (launch_pdl aside), or the
calibration would budget a kernel other than the one that runs. The CPU
has no griddepcontrol (the module's _pdl says no), so calib/sass.py is
asked for a GPU without it (compute capability 8.0).

    python3 calib/plans.py kernels/sm120 [kernels/sm90 ...]
"""

import os
import sys

import torch
from qdesc import load_harness  # calib/, the script's own folder, is on sys.path
from sass import combine_jobs, decode_job

# What the CPU's plans are built for: no griddepcontrol, as on sm_80.
CPU_CAP = 80


def inputs(harness, batch, heads):
    """q and the caches of both entries, as the harness makes them on the
    CPU: a 512-slot main cache with mixed lengths, a 128-slot extra cache
    as SGLang passes it ([B, 1, topk] indices), a sink."""
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(batch, 1, heads, harness.HEAD_DIM, generator=gen)
    q = q.to(torch.bfloat16)
    pad = harness.page_pad(64)
    _, k0, i0, l0 = harness.cache_inputs(64, pad, batch, 512, "mixed", gen, "cpu")
    _, k1, i1, l1 = harness.cache_inputs(64, pad, batch, 128, "full", gen, "cpu")
    i1 = i1.view(batch, 1, -1)
    sink = torch.zeros(heads)
    return q, [(k0, i0, l0)], [(k0, i0, l0), (k1, i1, l1)], sink


def differs(job, kernel):
    """How launch `kernel` differs from the compile job (fn, sig,
    constexprs, options) ("" when it does not)."""
    fn, sig, constexprs, options = job
    launched = {
        n: v
        for n, v in kernel.constexprs.items()
        if n in fn.arg_names and sig.get(n) == "constexpr"
    }
    launch_options = {n: v for n, v in kernel.options.items() if n != "launch_pdl"}
    if fn is not kernel.fn:
        return f"calibrates {fn.__name__}, launches {kernel.fn.__name__}"
    if launched != constexprs:
        differ = sorted(set(launched.items()) ^ set(constexprs.items()))
        return f"{fn.__name__}'s constexprs differ: {differ}"
    if launch_options != options:
        return f"{fn.__name__}: calibrated {options}, launched {launch_options}"
    return ""


def calibrated_differently(module, name, whole_call, kernels):
    """How a plan's launches (the decode kernel, then any combine) differ
    from what calib/sass.py compiles for configuration `name` ("" when
    they do not): the decode launch against decode_job, each combine
    launch against one of combine_jobs' shapes."""
    tile = module.CONFIGS[name]._asdict()
    decode = decode_job(module, tile, CPU_CAP, whole_call)
    why = differs(decode[:4], kernels[0])
    if why:
        return why
    combines = [j[1:5] for j in combine_jobs(module, tile, CPU_CAP, whole_call)]
    if len(kernels) > 1 and not combines:
        return f"launches {kernels[1].fn.__name__}, which calib/sass.py never compiles"
    for kernel in kernels[1:]:
        whys = [differs(job, kernel) for job in combines]
        if all(whys):
            return whys[0]
    return ""


def calls(harness, module, head_major=False):
    """(heads, configuration, entry, q, caches, sink) of every call this
    check builds a plan for (and calib/launch.py launches): 16 and 64
    heads, every configuration, both entries, the harness's CPU inputs;
    with head_major, the per-cache entry also with Q stored head-major (a
    Q the ws kernels read through a contiguous copy)."""
    for heads in (16, 64):
        q, per_cache, whole, sink = inputs(harness, 3, heads)
        q_hm = harness.lay_out_q(q, "head_major")
        for name in module.CONFIGS:
            yield heads, name, module._PER_CACHE, q, per_cache, None
            yield heads, name, module._WHOLE_CALL, q, whole, sink
            if head_major:
                yield heads, name, module._PER_CACHE, q_hm, per_cache, None


def q_strides_differ(plan, q):
    """How the Q strides a plan binds differ from those of the Q its
    kernels are handed (plan.kernel_q) ("" when they do not)."""
    seen = plan.kernel_q(q)
    want = dict(stride_q_batch=seen.stride(0), stride_q_head=seen.stride(2))
    for kernel in plan.kernels:
        bound = {n: kernel.fixed[n] for n in want if n in kernel.fixed}
        if any(bound[n] != want[n] for n in bound):
            return f"{kernel.fn.__name__} binds Q strides {bound}, reads a Q of {want}"
    return ""


def check(d):
    """(configurations, plans built, failures): the plans of directory d's
    module that cannot be built, whose decode launch is not what the
    calibration compiles, or whose Q strides are not those of the Q its
    kernels read, as lines."""
    harness = load_harness(d)
    module = harness.load_module(os.path.join(d, "sparse_mla_mma.py"))
    failures, plans = [], 0
    for heads, name, entry, q, caches, sink in calls(harness, module, True):
        plans += 1
        try:
            plan = module._Plan(entry, name, q, caches, sink)
            if not plan.kernels:
                raise RuntimeError("no launch")
            why = calibrated_differently(
                module, name, entry == module._WHOLE_CALL, plan.kernels
            )
            why = why or q_strides_differ(plan, q)
            if why:
                raise RuntimeError(why)
        except Exception as e:  # what a first call would raise
            failures.append(f"{name} ({entry}, H {heads}): {e}")
    return len(module.CONFIGS), plans, failures


def main(dirs):
    bad = 0
    for d in dirs:
        count, plans, failures = check(d)
        for line in failures:
            print(f"{d}: {line} FAIL")
        print(
            f"{d}: {count} configurations, {plans - len(failures)} of {plans} plans"
            " built as calibrated (per cache, per cache with"
            " a head-major Q, and whole call; 16 and 64 heads)"
        )
        bad += len(failures)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
