"""Cross-compile lab/rawcons' loops for sm_90a (no GPU): registers, spills,
shared memory, and the SASS of each loop body (MMAs, shared-memory loads
and stores, conversions, barriers).

    .venv/torch/bin/python lab/rawcons/compile.py
"""

import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "calib"))
sys.path.insert(0, os.path.join(ROOT, "lab"))
sys.path.insert(0, HERE)
os.chdir(ROOT)

import calibrate  # noqa: E402
import sass  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

import bench  # noqa: E402  (lab/rawcons/bench.py)
from narrowcompile import loop_body  # noqa: E402


def report(name, fn, sig, cx):
    src = GluonASTSource(
        fn=fn,
        signature=sig,
        constexprs={(fn.arg_names.index(k),): v for k, v in cx.items()},
    )
    ck, log = calibrate.compile_logged(src, 90, {"num_warps": 4})
    use = calibrate.ptxas_usage(ck.asm["ptx"], 90, log)
    body = loop_body(sass.disassemble_at(ck.asm["cubin"])[0])
    ops = collections.Counter(x.split()[0].split(".")[0] for x in body)
    keys = (
        "HGMMA",
        "LDS",
        "LDSM",
        "STS",
        "F2FP",
        "PRMT",
        "BAR",
        "WARPGROUP",
        "FMUL",
        "FFMA",
        "MUFU",
    )
    print(
        f"{name:8s} regs={use['regs']} spill={use['spill']} smem={ck.metadata.shared} "
        f"loop={len(body)} " + " ".join(f"{k}={ops.get(k, 0)}" for k in keys),
        flush=True,
    )
    return ck


if __name__ == "__main__":
    sig = {
        "Out": "*fp32",
        "ITERS": "i32",
        "Kraw": "*i16",
        "Rope": "*bf16",
        "Words": "*i64",
        "Qn": "*fp16",
        "Qr": "*bf16",
        "qk_scale": "fp32",
        "CHECK": "constexpr",
        "PIPE": "constexpr",
    }
    report("raw", bench._raw_kernel, sig, {"CHECK": False, "PIPE": False})
    ck = report("rawpipe", bench._raw_kernel, sig, {"CHECK": False, "PIPE": True})
    if "--sass" in sys.argv:
        body = loop_body(sass.disassemble_at(ck.asm["cubin"])[0])
        print("\n".join(body))
