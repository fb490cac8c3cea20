"""CPU check of the whole-call prototypes under the Triton interpreter.

Runs every Triton (tl.dot) configuration of sm90_fused.py and sm120_fused.py
through the whole call on every case of fused_ref.CASES_CPU and compares
with the float64 reference; also the per-cache entry against the shipped
harness's reference, today's glue path (fused_ref.glue_whole_call over the
shipped module) against the same reference, and the refusals and log lines
of supports_full. The Gluon kernels have no interpreter: compile_check.py
compiles them for sm_90.

    TRITON_INTERPRET=1 .venv/bin/python3 lab/fused/cpu_check.py [--quick]

Exit status 1 when any row fails.
"""

import argparse
import json
import logging
import os
import sys

if os.environ.get("TRITON_INTERPRET") != "1":
    sys.exit("run with TRITON_INTERPRET=1 (the Triton interpreter, torch on the CPU)")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.runtime import interpreter as _interp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import base_harness as bh  # noqa: E402
import fused_ref as fr  # noqa: E402

# Configurations with SPLIT_K 1 exercise the sink in the kernel's own
# epilogue; the bundles select none of them for sm_90, so they are added here.
EXTRA_CONFIGS = {
    "sm90": {"mma_h16_t16_k1_w8_s1": (16, 16, 1, 8, 1, False, False)},
    "sm120": {},
}


def _bf16_dot_fix():
    """Triton 3.6's interpreter multiplies bf16 dot operands as their raw
    uint16 bits (InterpreterBuilder.create_dot: bf16 is stored as uint16 and
    only 8-bit floats are converted first), so every bf16 tl.dot returns
    garbage, the shipped kernels' too. The GPU multiplies the bf16 values
    exactly and accumulates in fp32; this converts bf16 operands to fp32
    (exact: a 16-bit shift) before the interpreter's matmul."""
    dot = _interp.InterpreterBuilder.create_dot

    def widen(h):
        if h.dtype.scalar != tl.bfloat16:
            return h
        wide = (h.data.astype(np.uint32) << 16).view(np.float32)
        return _interp.TensorHandle(wide, tl.float32)

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        return dot(self, widen(a), widen(b), d, input_precision, max_num_imprecise_acc)

    _interp.InterpreterBuilder.create_dot = create_dot


def whole_call(mod, name, kw):
    """The whole call through configuration `name`, as sparse_decode_full runs
    it once supports_full has accepted (CPU tensors: supports_full refuses)."""
    caches = [(kw["k_cache"], kw["indices"], kw["topk_length"])]
    if kw.get("extra_k_cache") is not None:
        caches.append(
            (kw["extra_k_cache"], kw["extra_indices"], kw["extra_topk_length"])
        )
    plan = mod._Plan(mod._WHOLE_CALL, name, kw["q"], caches, kw["attn_sink"], True)
    extra = caches[1] if len(caches) == 2 else (None, None, None)
    scale = kw["softmax_scale"] or kw["q"].shape[-1] ** -0.5
    return plan.run(kw["q"], *caches[0], *extra, kw["attn_sink"], scale)


def check_logging(mod, gen):
    """supports_full on CPU tensors refuses, says why once, and says it in
    the contract's words."""
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger(mod.__name__)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    kw, _ = fr.build_case(fr.CASES_CPU[0], gen, torch.device("cpu"))
    answers = [mod.supports_full(**kw) for _ in range(3)]
    logger.removeHandler(handler)
    text = [r.getMessage() for r in records]
    want = (
        "mlagen: sparse-MLA decode not on the MMA kernel (whole call): "
        "supports_full() refused: q is not on a CUDA device; SGLang's kernel runs"
    )
    ok = (
        answers == [False] * 3
        and text == [want]
        and records[0].levelno == logging.WARNING
    )
    return dict(case="supports_full_refusal_logged_once", passed=ok, messages=text)


def check_case(target, mod, base, names, case, gen, device):
    """One case's rows: every configuration's whole call, today's glue path
    over the shipped kernel, and the prototype's per-cache entry (cache 0
    alone, no sink) against the shipped harness's reference."""
    kw, ref = fr.build_case(case, gen, device)
    rows = []
    for name in names:
        out, lse = whole_call(mod, name, kw)
        rows.append({"config": name, **fr.compare(out, lse, ref)})
    config = base.CONFIGS[names[0]]
    out, lse = fr.glue_whole_call(
        lambda q, k, i, n, s: base._launch(q, k, i, n, s, *config), **kw
    )
    rows.append({"config": "glue:" + names[0], **fr.compare(out, lse, ref)})
    q, k0, i0, l0 = kw["q"], kw["k_cache"], kw["indices"], kw["topk_length"]
    scale = q.shape[-1] ** -0.5
    plan = mod._Plan(mod._PER_CACHE, names[0], q, [(k0, i0, l0)], None, False)
    out, lse = plan.run(q, k0, i0, l0, None, None, None, None, scale)
    buf0 = torch.as_strided(
        k0.view(torch.uint8), (k0.shape[0], k0.stride(0)), (k0.stride(0), 1)
    )
    ref_out, ref_lse = bh.reference(q, bh.dequantize(buf0, k0.shape[1]), i0, l0, scale)
    verdict = fr.compare(out, lse.permute(0, 2, 1), (ref_out, ref_lse.permute(0, 2, 1)))
    rows.append(
        {"config": "per_cache:" + names[0], **verdict, "lse_shape": list(lse.shape)}
    )
    return [{"target": target, "case": case[0], **r} for r in rows]


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--quick", action="store_true", help="first configuration of each bundle only"
    )
    ap.add_argument("--json", default=os.path.join(HERE, "results", "cpu_check.json"))
    args = ap.parse_args()
    device = torch.device("cpu")
    _bf16_dot_fix()
    rows = []
    for target in ("sm90", "sm120"):
        mod = bh.load_module(os.path.join(HERE, f"{target}_fused.py"))
        base = bh.load_module(os.path.join(HERE, f"base_{target}.py"))
        mod.CONFIGS.update(EXTRA_CONFIGS[target])
        names = [n for n, c in mod.CONFIGS.items() if len(c) < 6 or not c[5]]
        if args.quick:
            names = names[:1]
        gen = torch.Generator(device=device).manual_seed(0)
        found = [{"target": target, **check_logging(mod, gen)}]
        for case in fr.CASES_CPU:
            found += check_case(target, mod, base, names, case, gen, device)
        for row in found:
            print(
                f"{target:6s} {row.get('config', ''):28s} {row['case']:34s} "
                f"rel {row.get('rel_err', 0):.2e} lse {row.get('lse_err', 0):.1e} "
                f"{'ok' if row['passed'] else 'FAIL'}",
                flush=True,
            )
        rows += found
    failed = sum(not r["passed"] for r in rows)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(
            {"torch": torch.__version__, "interpreter": True, "rows": rows}, f, indent=1
        )
    print(f"{len(rows)} rows, {failed} failed; wrote {args.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
