"""Which path a decode call takes on a patched copy of SGLang's sm_120 files.

Run on the GPU, from the repository root, after gpu/route/prepare.sh:

    python3 gpu/route/check.py gpu/route/work/sm90 [gpu/route/work/sm120]

Each tree is a patched copy of SGLang 0.5.23's entry module, SIMT module and
environ.py. SGLang chooses its backend at import, so every scenario runs in a
fresh process:

    unset-default  gate unset, default backend: FlashInfer's branch runs (a
                   stand-in records it: FlashInfer is not installed here)
    unset-triton   gate unset, SGLANG_SM120_FLASHMLA_BACKEND=triton: SGLang's
                   SIMT kernel, on both caches
    set-default    gate set after import, default backend: the MMA kernel
    set-torch      gate set after import, backend torch: the MMA kernel
    set-peer       gate set after import, default backend, and the module's
                   whole-call table (FULL_SELECTION) replaced, in that
                   process only, by one of the same shape whose every bucket
                   names "peer:flashinfer": defers_full() leaves the call to
                   SGLang's backend choice, so FlashInfer's branch runs (the
                   stand-in records it), with no MMA kernel entry point
                   (supports_full, sparse_decode_full, sparse_decode) and no
                   SIMT call reached
    set-window     gate set after import, default backend, the window cache
                   alone (extra_k_cache None) and a rank's 16 heads padded to
                   64 (the padding NaN, the sink's zero): what SGLang's
                   DSpark draft model passes under tensor parallelism 4, and
                   a layer without compression wherever the model still pads
                   (docs/sglang.md): the MMA kernel, the 16 real heads right
    unset-triton-window  the same call, gate unset, backend triton: SGLang's
                   SIMT kernel, on the one cache

Calling flash_mla_with_kvcache_sm120 with FlashMLA's keywords (a window cache,
an extra cache unless the scenario ends in -window, topk lengths, an
attention sink), it counts the calls that
reach SGLang's SIMT kernel and the kernel module's entry points, keeps the
module's "mlagen: ..." log lines, checks the result against a float64
reference built with the emitted harness's helpers, and replays the call from
a CUDA graph (the result must equal the eager one). One line per scenario;
exit 1 when a scenario takes another path than expected or is wrong. The
sm_120 tree's kernels run here as mma.sync (DISABLE_MMA_V3=1 in its
scenarios' environment). --interpret runs tiny shapes on the CPU under the
Triton interpreter (no graph replay), where the module's Triton kernels run
and its Gluon ones cannot: CI runs the sm_120 tree that way (make route),
at one batch row, where its selection picks Triton kernels.
"""

import importlib
import importlib.util
import json
import logging
import os
import subprocess
import sys
import types

import torch

GATE = "SGLANG_SM120_MMA_FLASHMLA"
ENTRY = "flash_mla_with_kvcache_sm120"
PKG = "sglang.kernels.ops.attention"
SCENARIOS = {
    "unset-default": {},
    "unset-triton": {"SGLANG_SM120_FLASHMLA_BACKEND": "triton"},
    "set-default": {},
    "set-torch": {"SGLANG_SM120_FLASHMLA_BACKEND": "torch"},
    "set-peer": {},
    "set-window": {},
    "unset-triton-window": {"SGLANG_SM120_FLASHMLA_BACKEND": "triton"},
}
# The whole-call bucket set-peer gives to a peer, as mlagen select writes it.
PEER = "peer:flashinfer"


class TookFlashInfer(Exception):
    """Raised by the FlashInfer stand-in: the default branch was taken."""


def fake_flashinfer():
    """Stand-in flashinfer package: reaching its decode proves the branch."""

    def decode(*args, **kwargs):
        raise TookFlashInfer()

    inner = types.ModuleType("flashinfer.mla._sparse_mla_sm120")
    inner._DECODE_MAX_TOKENS = 64
    inner._DECODE_DSV4_DISPATCH = ()
    inner._sparse_mla_sm120_paged_attention = decode
    mla = types.ModuleType("flashinfer.mla")
    mla._sparse_mla_sm120 = inner
    mla.trtllm_batch_decode_with_kv_cache_mla = decode
    top = types.ModuleType("flashinfer")
    top.mla = mla
    sys.modules.update(
        {"flashinfer": top, "flashinfer.mla": mla, inner.__name__: inner}
    )


def counted(module, name, calls):
    """Replace module.name by a wrapper that counts its calls."""
    real = getattr(module, name, None)
    if real is None:
        return
    calls[name] = 0

    def wrapper(*args, **kwargs):
        calls[name] += 1
        return real(*args, **kwargs)

    setattr(module, name, wrapper)


def peer_table(table):
    """A selection table of the same shape whose every bucket names PEER."""
    if isinstance(table, str):
        return PEER
    return tuple(peer_table(row) for row in table)


def errors(out, lse, ref_out, ref_lse):
    """Relative error of out, largest LSE difference (where finite), NaNs."""
    diff = (out.double() - ref_out).abs().max().item()
    rel = diff / max(ref_out.abs().max().item(), 1e-30)
    finite = torch.isfinite(ref_lse)
    lse_err = (
        (lse.double() - ref_lse)[finite].abs().max().item() if finite.any() else 0.0
    )
    same_inf = bool((torch.isfinite(lse) == finite).all())
    return rel, lse_err, bool(out.isnan().any()) or not same_inf


def child(tree, scenario, interpret):
    """One scenario in this process; prints its observations as JSON."""
    sys.path.insert(0, tree)
    fake_flashinfer()
    if (
        interpret
    ):  # the interpreter has no benchmarker: autotuning takes the first config
        from triton.runtime import autotuner

        autotuner.Autotuner.do_bench = property(
            lambda self: lambda fn, quantiles=None: [1.0, 1.0, 1.0]
        )
        # Triton 3.6's interpreter multiplies bf16 dot operands as raw bits:
        # calib/interp.py's fix, installed by importing it.
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "calib"))
        import interp  # noqa: F401
    records = []
    handler = logging.Handler()
    handler.emit = lambda r: records.append(r.getMessage())
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)
    entry = importlib.import_module(PKG + ".flash_mla_sm120")
    simt = importlib.import_module(PKG + ".flash_mla_sm120_triton")
    mma = importlib.import_module(PKG + ".flash_mla_sm120_mma")
    calls = {}
    # The entry's own calls too: the graph check calls it again (twice to
    # warm up, once under capture), and every call goes down the same path.
    counted(entry, ENTRY, calls)
    counted(simt, "_run_triton_sparse_decode", calls)
    for name in ("defers_full", "supports_full", "sparse_decode", "sparse_decode_full"):
        counted(mma, name, calls)
    if scenario == "set-peer":
        mma.FULL_SELECTION = peer_table(mma.FULL_SELECTION)
    harness = os.path.join("kernels", mma.TARGET.replace("_", ""), "harness.py")
    spec = importlib.util.spec_from_file_location("route_harness", harness)
    h = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(h)
    if scenario.startswith("set"):
        os.environ[GATE] = "1"  # after import: the guards read it at call time
    device = torch.device("cpu" if interpret else "cuda")
    gen = torch.Generator(device=device).manual_seed(0)
    # Under the interpreter one batch row: the sm_120 selection gives the
    # pipelined (Gluon) kernels every bucket above batch 1. make_inputs makes
    # its last row empty; this one keeps a length short of its tokens.
    batch, heads, window, extra = (1, 16, 16, 32) if interpret else (4, 64, 128, 512)
    window_only = scenario.endswith("-window")
    if window_only:
        heads = 64  # a rank's 16 padded to 64, as SGLang pads them
    buf, q, idx, length = h.make_inputs(64, batch, heads, window, True, gen, device)
    # Drawn for the window scenarios too, which pass no extra cache, so that
    # every scenario's window cache, Q and sink come from the same draws.
    ebuf, _, eidx, elength = h.make_inputs(64, batch, heads, extra, True, gen, device)
    if interpret:
        length.fill_(window - 3)
        elength.fill_(extra - 5)
    caches = [(buf, idx, length)] + ([] if window_only else [(ebuf, eidx, elength)])
    sink = torch.randn(heads, generator=gen, device=device, dtype=torch.float32)
    real = heads
    if window_only:
        real = h.TP_REAL_HEADS
        q = h.lay_out_q(q, "tp_padded")
        sink[real:] = 0.0  # SGLang pads the sink with zeros
    scale = q.shape[-1] ** -0.5
    kwargs = dict(
        q=q,
        k_cache=h.as_k_cache(buf, 64),
        indices=idx.view(batch, 1, -1),
        topk_length=length,
        attn_sink=sink,
        head_dim_v=512,
        softmax_scale=scale,
        extra_k_cache=None,
        extra_indices_in_kvcache=None,
        extra_topk_length=None,
    )
    if not window_only:
        kwargs.update(
            extra_k_cache=h.as_k_cache(ebuf, 64),
            extra_indices_in_kvcache=eidx.view(batch, 1, -1),
            extra_topk_length=elength,
        )
    seen = {
        "scenario": scenario,
        "target": mma.TARGET,
        "flashinfer": False,
        "caches": len(caches),
    }
    try:
        out, lse = getattr(entry, ENTRY)(**kwargs)
    except TookFlashInfer:
        seen.update(flashinfer=True, calls=calls, log=records)
        print(json.dumps(seen))
        return
    kvs = [h.dequantize(b, 64) for b, _, _ in caches]
    idxs, lens = [c[1] for c in caches], [c[2] for c in caches]
    # The real heads alone: a padded row's result is no one's (SGLang drops it).
    ref = h.reference_full(q[:, :, :real], kvs, idxs, lens, sink[:real], scale)
    seen["out_err"], seen["lse_err"], seen["nan"] = errors(
        out[:, :, :real], lse[:, :real], *ref
    )
    seen["graph"] = (
        "skipped (CPU)" if interpret else replay(entry, kwargs, out, lse, real)
    )
    seen.update(calls=calls, log=records)
    print(json.dumps(seen))


def replay(entry, kwargs, out, lse, real):
    """Capture the call in a CUDA graph, replay it, compare with eager: the
    first `real` heads (a padded head's NaN equals nothing, itself included)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            getattr(entry, ENTRY)(**kwargs)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        g_out, g_lse = getattr(entry, ENTRY)(**kwargs)
    graph.replay()
    torch.cuda.synchronize()
    same = torch.equal(g_out[:, :, :real], out[:, :, :real]) and torch.equal(
        g_lse[:, :real], lse[:, :real]
    )
    return "equal" if same else "differs"


def judge(seen):
    """The problems of one scenario's observations ([] when it passed)."""
    calls, sc = seen["calls"], seen["scenario"]
    entries = calls.get(ENTRY, 0)
    simt = calls.get("_run_triton_sparse_decode", 0)
    full, per = calls.get("sparse_decode_full", 0), calls.get("sparse_decode", 0)
    bad = []
    asked = calls.get("defers_full", 0)
    if sc.startswith("unset") and asked:
        bad.append("gate unset, but the route guard asked defers_full()")
    elif sc.startswith("set") and asked != entries:
        bad.append("the route guard did not ask defers_full() once per call")
    if sc == "unset-default":
        if not seen["flashinfer"] or simt or full or per:
            bad.append("the default backend did not take FlashInfer's branch alone")
        return bad
    if sc == "set-peer":
        if not seen["flashinfer"] or simt or full or per or calls.get("supports_full"):
            bad.append(
                "a bucket given to a peer did not go to SGLang's backend choice"
                " (FlashInfer's branch) alone"
            )
        peer = PEER.split(":", 1)[1]
        if not any(
            f"gives this shape to {peer}" in line and "backend choice runs" in line
            for line in seen["log"]
        ):
            bad.append(f"no 'gives this shape to {peer}' log line")
        return bad
    if seen["flashinfer"]:
        return ["took FlashInfer's branch"]
    if seen["nan"] or seen["out_err"] > 1e-2 or seen["lse_err"] > 1e-2:
        bad.append("wrong result")
    if seen["graph"] == "differs":
        bad.append("graph replay differs from eager")
    caches = seen["caches"]
    if sc.startswith("unset-triton"):
        if simt != caches * entries or full or per:
            bad.append(
                f"gate unset did not run SGLang's SIMT kernel on its {caches} cache(s) alone"
            )
        return bad
    whole = "sparse_decode_full" in calls
    want = "whole call" if whole else "per cache"
    ran = (full == entries and not per) if whole else per == caches * entries
    if simt or not ran:
        bad.append(f"gate set did not run the MMA kernel ({want})")
    if not any(f"on the MMA kernel ({want}" in line for line in seen["log"]):
        bad.append(f"no 'on the MMA kernel ({want}' log line")
    return bad


def path_of(seen):
    c = seen["calls"]
    if seen["flashinfer"]:
        return "FlashInfer branch"
    parts = [f"{n} x{k}" for n, k in sorted(c.items()) if k and n != ENTRY]
    return f"{c.get(ENTRY, 0)} calls: " + (", ".join(parts) or "no counted call")


def main(argv):
    if argv[:1] == ["--child"]:
        return child(argv[1], argv[2], "--interpret" in argv)
    interpret = "--interpret" in argv
    trees = [a for a in argv if not a.startswith("--")]
    if not trees:
        print(__doc__)
        return 2
    failed = 0
    for tree in trees:
        for name, extra in SCENARIOS.items():
            env = dict(os.environ, **extra)
            env.pop(GATE, None)
            if interpret:
                env["TRITON_INTERPRET"] = "1"
            if "sm120" in tree:
                env["DISABLE_MMA_V3"] = "1"  # mma.sync on an H200, as on sm_120
            args = [sys.executable, __file__, "--child", tree, name]
            run = subprocess.run(
                args + (["--interpret"] if interpret else []),
                env=env,
                capture_output=True,
                text=True,
            )
            if run.returncode != 0 or not run.stdout.strip():
                print(f"FAIL {tree} {name}: the scenario crashed\n{run.stderr[-4000:]}")
                failed += 1
                continue
            seen = json.loads(run.stdout.strip().splitlines()[-1])
            bad = judge(seen)
            failed += bool(bad)
            errs = (
                ""
                if seen["flashinfer"]
                else f", out err {seen['out_err']:.1e}, lse err {seen['lse_err']:.1e}, graph {seen['graph']}"
            )
            print(
                f"{'FAIL' if bad else 'ok  '} {tree} {name}: {path_of(seen)}{errs}; "
                + "; ".join(bad)
            )
            for line in seen["log"]:
                if line.startswith("mlagen"):
                    print(f"       log: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
