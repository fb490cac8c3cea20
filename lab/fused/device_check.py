"""Check and time the whole-call prototypes on the GPU (one device call).

Steps, each writing its rows as it goes (a run cut short keeps them):

  compile   every kernel the later steps need, in parallel worker processes
            (Triton's file cache then serves the main process);
  check     every configuration of sm90_fused.py and sm120_fused.py on every
            case of fused_ref.CASES_GPU against the float64 reference of the
            whole function (outputs poisoned with NaN first), the public
            entry (supports_full + sparse_decode_full) on every case, today's
            glue path (shipped per-cache module twice + PyTorch merge and
            sink) on every case, the log lines, and CUDA-graph replay
            against eager;
  time      per shape (H, B, extra topk; window 128): the whole call with
            its selected configuration (graph and eager) and its candidate
            configurations (graph), today's glue path (graph and eager), one
            shipped kernel call over the same total number of tokens (graph
            and eager), and the prototype's own per-cache entry over those
            tokens (graph and eager).

sm_120 module kernels are compiled with DISABLE_MMA_V3=1 (mma.sync, no
wgmma), as DESIGN.md says an H200 timing must be to stand for sm_120.

    python3 lab/fused/device_check.py --out DIR [--budget 200] [--jobs 12]
"""

import argparse
import contextlib
import datetime
import json
import multiprocessing
import os
import sys
import time
import traceback

import torch
import triton
import triton.testing

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import base_harness as bh  # noqa: E402
import fused_ref as fr  # noqa: E402

T0 = time.time()
# A dry run of the check step's code on the CPU under the Triton interpreter:
# K2_DEVICE=cpu TRITON_INTERPRET=1 (first configuration and case only).
DEVICE = os.environ.get("K2_DEVICE", "cuda")
DRY = DEVICE == "cpu"
WINDOW = 128
# FlashMLA's whole call on the H200, CUDA-graph replay, µs (2026-12-01,
# issue 25): (heads, batch, extra topk) -> µs.
FLASHMLA_GRAPH_US = {
    (64, 1, 512): 12.8,
    (64, 16, 512): 16.9,
    (64, 64, 512): 36.4,
    (64, 128, 512): 57.7,
    (64, 1, 2048): 18.9,
    (64, 16, 2048): 27.8,
    (64, 64, 2048): 75.9,
    (64, 128, 2048): 131.3,
    (128, 1, 2048): 19.1,
    (128, 64, 2048): 99.4,
    (128, 128, 2048): 168.8,
}
SHAPES = [
    (h, b, e) for h in (64, 128, 16) for e in (512, 2048) for b in (1, 16, 64, 128)
]
# The batch buckets between the targets' batches, for the selection table.
SHAPES += [(h, b, e) for h in (64, 128) for e in (512, 2048) for b in (8, 32)]
# Graph-timed besides the selected configuration, per (heads bucket, batch).
CANDIDATES_SM90 = {
    (64, 1): [
        "mma_h16_t64_k32_w8_s1",
        "mma_h16_t16_k32_w8_s1",
        "mma_h16_t16_k40_w8_s1",
        "mma_h16_t16_k64_w8_s1",
        "ws_h64_t64_k32_w8_s2",
    ],
    (64, 8): [
        "wsc_h64_t64_k8_w8_s2",
        "ws_h64_t64_k16_w8_s2",
        "ws_h64_t64_k8_w8_s2",
        "ws_h64_t64_k32_w8_s2",
    ],
    (64, 16): ["ws_h64_t64_k8_w8_s2", "ws_h64_t64_k4_w8_s2", "wsc_h64_t64_k8_w8_s2"],
    (64, 32): [
        "ws_h64_t64_k4_w8_s2",
        "ws_h64_t64_k2_w8_s2",
        "wsc_h64_t64_k2_w8_s2",
        "ws_h64_t64_k8_w8_s2",
    ],
    (64, 64): ["wsc_h64_t64_k2_w8_s2", "ws_h64_t64_k2_w8_s2"],
    (64, 128): ["ws_h64_t64_k1_w8_s2", "wsc_h64_t64_k2_w8_s2"],
    (128, 1): [
        "mma_h16_t64_k32_w8_s1",
        "ws_h64_t64_k16_w8_s2",
        "ws_h64_t64_k32_w8_s2",
        "wsc_h64_t64_k8_w8_s2",
    ],
    (128, 8): [
        "ws_h64_t64_k8_w8_s2",
        "ws_h64_t64_k4_w8_s2",
        "ws_h64_t64_k16_w8_s2",
        "wsc_h64_t64_k8_w8_s2",
    ],
    (128, 16): ["ws_h64_t64_k4_w8_s2", "wsc_h64_t64_k2_w8_s2"],
    (128, 32): [
        "ws_h64_t64_k2_w8_s2",
        "ws_h64_t64_k1_w8_s2",
        "wsc_h64_t64_k2_w8_s2",
        "ws_h64_t64_k4_w8_s2",
    ],
    (128, 64): ["ws_h64_t64_k1_w8_s2", "wsc_h64_t64_k2_w8_s2"],
    (128, 128): ["ws_h64_t64_k1_w8_s2"],
    (16, 1): [
        "mma_h16_t64_k32_w8_s1",
        "mma_h16_t16_k40_w8_s1",
        "mma_h16_t16_k64_w8_s1",
        "ws_h64_t64_k32_w8_s2",
    ],
    (16, 16): ["ws_h64_t64_k8_w8_s2", "ws_h64_t64_k4_w8_s2"],
    (16, 64): ["wsc_h64_t64_k2_w8_s2", "ws_h64_t64_k2_w8_s2"],
    (16, 128): ["ws_h64_t64_k1_w8_s2"],
}
CANDIDATES_SM120 = {
    1: ["mma_h16_t32_k32_w4_s1", "mma_h16_t16_k32_w4_s1"],
    16: ["mma_h16_t32_k4_w4_s1", "mma_h16_t32_k16_w4_s1"],
    64: ["mma_h16_t32_k1_w4_s1", "mma_h16_t32_k4_w4_s1"],
    128: ["mma_h16_t32_k1_w4_s1"],
}


# One configuration of each kernel family, checked on every case; the other
# configurations on the first two cases (every flag but "no extra cache").
FAMILIES = {
    "sm90": [
        "mma_h16_t16_k32_w8_s1",
        "mma_h16_t64_k4_w8_s1",
        "ws_h64_t64_k1_w8_s2",
        "ws_h64_t64_k8_w8_s2",
        "wsc_h64_t64_k2_w8_s2",
        "wsc_h64_t64_k8_w8_s2",
    ],
    "sm120": ["mma_h16_t16_k32_w4_s1", "mma_h16_t32_k1_w4_s1"],
}


def case_configs(target, case_index):
    names = list(fused_mod(target).CONFIGS)
    if DRY:
        return names[:1]
    if case_index < 2:
        return names
    return [n for n in names if n in FAMILIES[target]]


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


@contextlib.contextmanager
def mma_v2_only(target):
    """DISABLE_MMA_V3=1 while sm_120 kernels compile (read by Triton's
    compiler at compile time, and part of its cache key)."""
    if target != "sm120":
        yield
        return
    old = os.environ.get("DISABLE_MMA_V3")
    os.environ["DISABLE_MMA_V3"] = "1"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("DISABLE_MMA_V3", None)
        else:
            os.environ["DISABLE_MMA_V3"] = old


_MODULES = {}


def module(name):
    if name not in _MODULES:
        _MODULES[name] = bh.load_module(os.path.join(HERE, name + ".py"))
    return _MODULES[name]


def fused_mod(target):
    return module(f"{target}_fused")


def base_mod(target):
    return module(f"base_{target}")


# ---------------------------------------------------------------- the calls


def plan_call(mod, name, kw):
    """The whole call forced through configuration `name` (a _Plan built for
    these inputs, its run as sparse_decode_full would call it)."""
    caches = [(kw["k_cache"], kw["indices"], kw["topk_length"])]
    if kw.get("extra_k_cache") is not None:
        caches.append(
            (kw["extra_k_cache"], kw["extra_indices"], kw["extra_topk_length"])
        )
    plan = mod._Plan(mod._WHOLE_CALL, name, kw["q"], caches, kw["attn_sink"], True)
    extra = caches[1] if len(caches) == 2 else (None, None, None)
    scale = kw["softmax_scale"] or kw["q"].shape[-1] ** -0.5

    def call():
        return plan.run(kw["q"], *caches[0], *extra, kw["attn_sink"], scale)

    return call


def entry_call(mod, kw):
    """What the patched SGLang function does, gate on: ask, then call."""

    def call():
        if not mod.supports_full(**kw):
            raise RuntimeError("supports_full refused")
        return mod.sparse_decode_full(**kw)

    return call


def per_cache_dispatch(mod):
    """Today's per-cache dispatcher (_run_sparse_decode, gate on)."""

    def run(q, k, i, n, scale):
        if not mod.supports(q, k, i):
            raise RuntimeError("supports refused")
        return mod.sparse_decode(q, k, i, n, scale)

    return run


def glue_call(mod, kw):
    run = per_cache_dispatch(mod)
    return lambda: fr.glue_whole_call(run, **kw)


def single_call(mod, single):
    run = per_cache_dispatch(mod)
    q, k, i, n = single
    scale = q.shape[-1] ** -0.5
    return lambda: run(q, k, i, n, scale)


# ------------------------------------------------------------------- inputs


def timing_set(heads, batch, extra, gen, device, pool=None):
    """One input set of a timing shape: (whole-call kwargs, single-cache
    (q, k_cache, indices, topk_length) over the same total tokens).
    Every slot valid and every row full, as the shipped harness times."""
    q = torch.randn(batch, 1, heads, 512, generator=gen, device=device).to(
        torch.bfloat16
    )
    kws = []
    for topk in (WINDOW, extra):
        _, k, i, n = fr.cache_inputs(
            64,
            576,
            batch,
            topk,
            "full",
            gen,
            device,
            pool or max(batch * topk, 1 << 16),
        )
        i.clamp_(min=0)
        kws.append((k, i, n))
    (k0, i0, l0), (k1, i1, l1) = kws
    kw = dict(
        q=q,
        k_cache=k0,
        indices=i0,
        topk_length=l0,
        attn_sink=fr.sink_values(heads, gen, device),
        head_dim_v=512,
        softmax_scale=None,
        extra_k_cache=k1,
        extra_indices=i1.view(batch, 1, -1),
        extra_topk_length=l1,
    )
    total = WINDOW + extra
    _, ks, is_, ns = fr.cache_inputs(
        64, 576, batch, total, "full", gen, device, pool or max(batch * total, 1 << 16)
    )
    is_.clamp_(min=0)
    return kw, (q, ks, is_, ns)


# ------------------------------------------------------------------ compile


def compile_jobs():
    """Everything the check and timing steps compile, one job per distinct
    compilation (a worker runs the call once for real)."""
    jobs, seen = [], set()
    for target in ("sm90", "sm120"):
        for ci, case in enumerate(fr.CASES_GPU):
            for name in case_configs(target, ci):
                jobs.append(("fused_case", target, name, case[0]))
            jobs.append(("glue_case", target, None, case[0]))
    for target in ("sm90", "sm120"):
        for heads, batch, extra in timing_shapes(target):
            for name in timing_configs(target, heads, batch, extra):
                key = (target, name, heads % 16 == 0, heads * batch <= 128)
                if key not in seen:
                    seen.add(key)
                    jobs.append(("fused_time", target, name, (heads, batch, extra)))
            key = (target, "glue", batch, extra, heads % 16 == 0, heads * batch <= 128)
            if key not in seen:
                seen.add(key)
                jobs.append(("glue_time", target, None, (heads, batch, extra)))
    return jobs


def timing_shapes(target):
    if target == "sm120":
        return [(64, b, e) for e in (512, 2048) for b in (1, 16, 64, 128)]
    return SHAPES


def timing_configs(target, heads, batch, extra):
    mod = fused_mod(target)
    selected = mod.select_full(heads, batch, WINDOW + extra)
    if target == "sm120":
        cands = CANDIDATES_SM120[batch]
    else:
        hb = 16 if heads <= 16 else 64 if heads <= 64 else 128
        cands = CANDIDATES_SM90[(hb, batch)]
    return [selected] + [c for c in cands if c != selected and c in mod.CONFIGS]


def run_job(job):
    kind, target, name, what = job
    t = time.time()
    device = torch.device(DEVICE)
    gen = torch.Generator(device=device).manual_seed(1)
    try:
        with mma_v2_only(target):
            if kind in ("fused_case", "glue_case"):
                case = next(c for c in fr.CASES_GPU if c[0] == what)
                kw, _ = fr.build_case(case, gen, device, reference=False)
            else:
                heads, batch, extra = what
                kw, single = timing_set(heads, batch, extra, gen, device, pool=1 << 13)
            if kind.startswith("fused"):
                plan_call(fused_mod(target), name, kw)()
            else:
                glue_call(base_mod(target), kw)()
            if kind == "glue_time":
                single_call(base_mod(target), single)()
                single_call(fused_mod(target), single)()
                entry_call(fused_mod(target), kw)()
        sync()
        return job, None, time.time() - t
    except Exception as err:  # reported, and the main process compiles it again
        return job, f"{type(err).__name__}: {str(err)[:300]}", time.time() - t


def precompile(jobs, workers):
    ctx = multiprocessing.get_context("spawn")
    done, errors = 0, []
    with ctx.Pool(workers) as pool:
        for job, err, secs in pool.imap_unordered(run_job, jobs):
            done += 1
            if err:
                errors.append({"job": list(map(str, job)), "error": err})
    return errors


# -------------------------------------------------------------------- check


def check_all(report, save):
    device = torch.device(DEVICE)
    gen = torch.Generator(device=device).manual_seed(0)
    for target in ("sm90", "sm120"):
        mod, base = fused_mod(target), base_mod(target)
        with mma_v2_only(target):
            for ci, case in enumerate(fr.CASES_GPU[:1] if DRY else fr.CASES_GPU):
                kw, ref = fr.build_case(fr.CASES_CPU[0] if DRY else case, gen, device)
                calls = [(n, plan_call(mod, n, kw)) for n in case_configs(target, ci)]
                calls.append(("entry:" + selected_name(mod, kw), entry_call(mod, kw)))
                calls.append(("glue:shipped", glue_call(base, kw)))
                # Each plan twice: its first launch goes through Triton's own
                # launcher, the second through the plan's direct one.
                runs = [
                    (n, c, launch)
                    for n, c in calls
                    for launch in ("first", "direct")
                    if not (n.startswith("glue") and launch == "direct")
                ]
                for name, call, launch in runs:
                    row = {
                        "target": target,
                        "config": name,
                        "case": case[0],
                        "launch": launch,
                    }
                    try:
                        bh.poison_allocator(device)
                        out, lse = call()
                        sync()
                        row.update(fr.compare(out, lse, ref))
                    except Exception as err:
                        row.update(
                            passed=False,
                            error=f"{type(err).__name__}: {str(err)[:300]}",
                        )
                        if "CUDA" in str(err) or "illegal" in str(err):
                            report["check"].append(row)
                            save()
                            raise
                    report["check"].append(row)
                    log(
                        f"check {target} {name:30s} {launch:6s} {case[0]:28s} "
                        + (
                            f"rel {row['rel_err']:.2e} lse {row['lse_err']:.1e} "
                            if "rel_err" in row
                            else ""
                        )
                        + ("ok" if row["passed"] else "FAIL " + row.get("error", ""))
                    )
            save()
    if DRY:
        return
    report["graph_check"] = graph_check(gen, device)
    report["log_check"] = log_check(gen, device)
    save()


def sync():
    if not DRY:
        torch.cuda.synchronize()


def selected_name(mod, kw):
    batch, _, heads, _ = kw["q"].shape
    tokens = kw["indices"].numel() // batch
    if kw.get("extra_indices") is not None:
        tokens += kw["extra_indices"].numel() // batch
    return mod.select_full(heads, batch, tokens)


def graph_check(gen, device):
    """The whole call captured in a CUDA graph, replayed after the inputs
    change in place, equals the eager call on the new inputs bit for bit."""
    rows = []
    mod = fused_mod("sm90")
    for heads, batch, extra in (
        (64, 1, 512),
        (64, 16, 2048),
        (64, 64, 512),
        (16, 128, 512),
    ):
        kw, _ = timing_set(heads, batch, extra, gen, device, pool=1 << 14)
        kw2, _ = timing_set(heads, batch, extra, gen, device, pool=1 << 14)
        call = entry_call(mod, kw)
        call()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            g_out, g_lse = call()
        for key in (
            "q",
            "indices",
            "topk_length",
            "attn_sink",
            "extra_indices",
            "extra_topk_length",
        ):
            kw[key].copy_(kw2[key])
        kw["k_cache"].copy_(kw2["k_cache"])
        kw["extra_k_cache"].copy_(kw2["extra_k_cache"])
        g.replay()
        e_out, e_lse = call()
        torch.cuda.synchronize()
        same = bool(torch.equal(g_out, e_out) and torch.equal(g_lse, e_lse))
        rows.append(
            {
                "shape": [heads, batch, extra],
                "config": selected_name(mod, kw),
                "equal": same,
            }
        )
        log(f"graph replay == eager {heads, batch, extra}: {same}")
    return rows


def log_check(gen, device):
    """The INFO line once per configuration; a refusal's WARNING once."""
    import logging

    mod = fused_mod("sm90")
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger(mod.__name__)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    mod._LOGGED.clear()
    kw, _ = timing_set(64, 16, 512, gen, device, pool=1 << 14)
    for _ in range(3):
        entry_call(mod, kw)()
    bad = dict(kw, q=torch.randn(16, 1, 20, 256, device=device).to(torch.bfloat16))
    answers = [mod.supports_full(**bad) for _ in range(3)]
    logger.removeHandler(handler)
    text = [r.getMessage() for r in records]
    return {
        "messages": text,
        "levels": [r.levelname for r in records],
        "refused": answers,
    }


# ------------------------------------------------------------------- timing


def bench(fn, reps_ms):
    return (
        triton.testing.do_bench(
            fn, warmup=max(reps_ms // 4, 5), rep=reps_ms, return_mode="median"
        )
        * 1e3
    )


def time_eager(calls, reps_ms):
    state = {"i": 0}

    def call():
        calls[state["i"] % len(calls)]()
        state["i"] += 1

    return bench(call, reps_ms)


def time_graph(calls, reps_ms):
    graphs = []
    for c in calls:
        c()  # compile and warm outside capture
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            c()
        graphs.append(g)
    state = {"i": 0}

    def replay():
        graphs[state["i"] % len(graphs)].replay()
        state["i"] += 1

    return bench(replay, reps_ms)


def host_time(calls, n):
    """Host µs per call: n calls queued without waiting for the GPU (the
    launch queue absorbs them), timed on the host clock; the median of 3."""
    for c in calls:
        c()
    torch.cuda.synchronize()
    runs = []
    for _ in range(3):
        t = time.perf_counter()
        for i in range(n):
            calls[i % len(calls)]()
        runs.append((time.perf_counter() - t) / n * 1e6)
        torch.cuda.synchronize()
    return sorted(runs)[1]


def time_all(report, save, budget, reps_ms):
    device = torch.device(DEVICE)
    gen = torch.Generator(device=device).manual_seed(2)
    bh.settle_graph_replay(device)
    for target in ("sm90", "sm120"):
        for heads, batch, extra in timing_shapes(target):
            if time.time() - T0 > budget:
                log(
                    f"time budget spent: {target} {heads, batch, extra} and later not timed"
                )
                report["timing_cut_at"] = [target, heads, batch, extra]
                save()
                return
            shape = dict(
                target=target,
                heads=heads,
                batch=batch,
                extra=extra,
                tokens=WINDOW + extra,
            )
            with mma_v2_only(target):
                sets = [timing_set(heads, batch, extra, gen, device) for _ in range(3)]
                try:
                    rows = time_shape(shape, sets, reps_ms)
                except Exception as err:
                    rows = [
                        dict(
                            shape,
                            path="error",
                            error=f"{type(err).__name__}: {str(err)[:300]}",
                        )
                    ]
                    traceback.print_exc()
            report["timing"].extend(rows)
            log(
                f"time {target} H{heads} B{batch} e{extra}: "
                + ", ".join(
                    f"{r['path']}{'/' + r['config'] if r.get('config') and r['path'] == 'fused' else ''}"
                    f" {r.get('graph_us', float('nan')):.1f}"
                    + (f"/{r['eager_us']:.1f}" if r.get("eager_us") else "")
                    for r in rows
                )
            )
            del sets
            torch.cuda.empty_cache()
            save()


def time_shape(shape, sets, reps_ms):
    """One shape's timing rows: the whole call's candidate configurations
    (graph), its entry point (graph, eager twice, host), today's glue path,
    one shipped kernel call over the same tokens, and the prototype's own
    per-cache entry over them."""
    target, batch, extra = shape["target"], shape["batch"], shape["extra"]
    mod, base = fused_mod(target), base_mod(target)
    kws = [s[0] for s in sets]
    singles = [s[1] for s in sets]
    names = timing_configs(target, shape["heads"], batch, extra)
    rows = []
    for i, name in enumerate(names):
        calls = [plan_call(mod, name, kw) for kw in kws]
        rows.append(
            dict(
                shape,
                path="fused",
                config=name,
                selected=i == 0,
                graph_us=time_graph(calls, reps_ms),
            )
        )
    entry = [entry_call(mod, kw) for kw in kws]
    first_eager = time_eager(entry, reps_ms)
    entry_row = dict(
        shape,
        path="fused_entry",
        config=names[0],
        graph_us=time_graph(entry, reps_ms),
        host_us=host_time(entry, 300),
    )
    glue = [glue_call(base, kw) for kw in kws]
    glue_row = dict(
        shape,
        path="glue_today",
        config=None,
        graph_us=time_graph(glue, reps_ms),
        eager_us=time_eager(glue, reps_ms),
        host_us=host_time(glue, 30),
    )
    # Eager twice, before and after the glue path: the device's host CPU
    # moves by several µs between measurements.
    both = [first_eager, time_eager(entry, reps_ms)]
    entry_row.update(eager_us=min(both), eager_us_each=both)
    rows += [entry_row, glue_row]
    single = [single_call(base, s) for s in singles]
    rows.append(
        dict(
            shape,
            path="single_shipped",
            config=base.select(batch, WINDOW + extra),
            graph_us=time_graph(single, reps_ms),
            eager_us=time_eager(single, reps_ms),
        )
    )
    fast = [single_call(mod, s) for s in singles]
    rows.append(
        dict(
            shape,
            path="single_prototype",
            config=mod.select(batch, WINDOW + extra),
            graph_us=time_graph(fast, reps_ms),
            eager_us=time_eager(fast, reps_ms),
            host_us=host_time(fast, 300),
        )
    )
    return rows


def table(report):
    """The short table: per shape, graph µs (eager µs) of the whole call,
    the best candidate, one kernel call, today's glue path, FlashMLA."""
    by = {}
    for r in report["timing"]:
        by.setdefault((r["target"], r["heads"], r["batch"], r["extra"]), []).append(r)
    lines = [
        "target H B extra | whole call graph (eager) | best candidate graph | one kernel graph"
        " (eager shipped; eager prototype) | whole/one | glue today graph (eager) | FlashMLA graph"
        " | whole/FlashMLA"
    ]
    for (target, h, b, e), rows in by.items():

        def get(path, field="graph_us"):
            for r in rows:
                if r["path"] == path and (path != "fused" or r.get("selected")):
                    return r.get(field)
            return None

        cands = [r for r in rows if r["path"] == "fused" and r.get("graph_us")]
        best = min(cands, key=lambda r: r["graph_us"]) if cands else None
        fg, fe = get("fused_entry"), get("fused_entry", "eager_us")
        sg, se = get("single_shipped"), get("single_shipped", "eager_us")
        pe = get("single_prototype", "eager_us")
        gg, ge = get("glue_today"), get("glue_today", "eager_us")
        fm = FLASHMLA_GRAPH_US.get((h, b, e)) if target == "sm90" else None
        f = lambda x: "-" if x is None else f"{x:.1f}"
        r2 = lambda a, b: f"{a / b:.2f}" if a and b else "-"
        lines.append(
            f"{target} H{h} B{b} e{e} | {f(fg)} ({f(fe)}) | "
            f"{(best['config'] + ' ' + f(best['graph_us'])) if best else '-'} | {f(sg)} ({f(se)}; {f(pe)}) | "
            f"{r2(fg, sg)} | {f(gg)} ({f(ge)}) | {f(fm)} | {r2(fg, fm)}"
        )
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", help="folder for the JSON report and table.txt")
    ap.add_argument("--name", default="fused", help="the report is OUT/NAME.json")
    ap.add_argument(
        "--table",
        nargs="+",
        help="only print the table and failures of these reports (merged)",
    )
    ap.add_argument(
        "--budget",
        type=float,
        default=200.0,
        help="seconds from start after which no new shape is timed",
    )
    ap.add_argument("--jobs", type=int, default=12, help="compile worker processes")
    ap.add_argument("--reps-ms", type=int, default=30)
    ap.add_argument(
        "--skip", default="", help="comma list of steps to skip: compile,check,time"
    )
    args = ap.parse_args()
    if args.table:
        report = merged(args.table)
        print(table(report))
        summary(report)
        return 0
    if not args.out:
        ap.error("--out is required")
    skip = set(args.skip.split(","))
    if DRY:
        import cpu_check

        cpu_check._bf16_dot_fix()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, args.name + ".json")
    report = dict(
        gpu=torch.cuda.get_device_name() if not DRY else "cpu",
        capability=(
            "sm_%d%d" % torch.cuda.get_device_capability() if not DRY else "interpreter"
        ),
        torch=torch.__version__,
        triton=triton.__version__,
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        command="python3 " + " ".join([os.path.relpath(__file__)] + sys.argv[1:]),
        compile_errors=[],
        check=[],
        timing=[],
    )

    def save():
        with open(path, "w") as f:
            json.dump(report, f, indent=1)

    if "compile" not in skip:
        jobs = compile_jobs()
        log(f"compiling: {len(jobs)} jobs on {args.jobs} workers")
        report["compile_errors"] = precompile(jobs, args.jobs)
        log(f"compiled; {len(report['compile_errors'])} jobs failed")
        for e in report["compile_errors"][:20]:
            log("  compile error", e)
        save()
    if "check" not in skip:
        check_all(report, save)
        failed = [r for r in report["check"] if not r["passed"]]
        log(f"check: {len(report['check'])} rows, {len(failed)} failed")
    if "time" not in skip:
        time_all(report, save, args.budget, args.reps_ms)
    save()
    text = table(report)
    if report["timing"]:
        with open(os.path.join(args.out, "table.txt"), "w") as f:
            f.write(text + "\n")
    failed = [r for r in report["check"] if not r["passed"]]
    print(text)
    summary(report)
    return 1 if failed else 0


def merged(paths):
    """The reports at paths as one (lists concatenated; a missing file is said)."""
    report = {"check": [], "timing": [], "compile_errors": []}
    for name in paths:
        if not os.path.exists(name):
            print(f"{name}: missing")
            continue
        with open(name) as f:
            part = json.load(f)
        for k, v in part.items():
            if isinstance(v, list) and k in report:
                report[k].extend(v)
            else:
                report.setdefault(k, v)
    return report


def summary(report):
    failed = [r for r in report["check"] if not r["passed"]]
    worst = max(
        (r.get("rel_err", 0) for r in report["check"] if r["passed"]), default=0
    )
    print(
        f"check rows {len(report['check'])}, failed {len(failed)}, worst passing rel err {worst:.2e}: "
        + ", ".join(
            f"{r['target']}/{r['config']}/{r.get('launch')}/{r['case']}"
            for r in failed[:16]
        )
    )
    print(
        "compile errors",
        len(report.get("compile_errors", [])),
        "graph==eager",
        [r["equal"] for r in report.get("graph_check", [])],
        "log",
        report.get("log_check", {}).get("messages"),
        report.get("log_check", {}).get("refused"),
    )


if __name__ == "__main__":
    sys.exit(main())
