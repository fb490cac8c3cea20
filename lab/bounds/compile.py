"""Cross-compile lab/bounds' loops for sm_90a (no GPU) and count, in the
SASS of each timed loop's body, the MMA instructions, ldmatrix loads (and
their bytes a warp), shared-memory stores and barriers: the rates bench.py
reports rest on these counts.

    .venv/torch/bin/python lab/bounds/compile.py
"""

import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "calib"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
os.chdir(ROOT)

import calibrate  # noqa: E402
import sass  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

import bench  # noqa: E402
import narrowcompile  # noqa: E402  (lab/narrowcompile.py)

KERNELS = [
    ("hmma_reg w8", bench._hmma_reg_kernel, {"NUM_WARPS": 8}, 8),
    ("hmma_smem w8", bench._hmma_smem_kernel, {"NUM_WARPS": 8}, 8),
    ("pp_tile", bench._pp_tile_kernel, {"SOFTMAX": 0}, 8),
    ("pp_tile+softmax", bench._pp_tile_kernel, {"SOFTMAX": 1}, 8),
    ("narrow", bench._narrow_kernel, {"SOFTMAX": 0}, 4),
    ("narrow+softmax", bench._narrow_kernel, {"SOFTMAX": 1}, 4),
]

# ldmatrix bytes a warp: .x4 moves four 8x8 matrices of 16-bit values.
LDSM_BYTES = {"1": 128, "2": 256, "4": 512}


def report(name, nw, ck):
    body = narrowcompile.loop_body(sass.disassemble_at(ck.asm["cubin"])[0])
    ops = collections.Counter(x.split()[0] for x in body)
    mma = sum(v for k, v in ops.items() if k.startswith(("HMMA", "HGMMA")))
    ldsm = {k: v for k, v in ops.items() if k.startswith("LDSM")}
    ldsm_bytes = sum(v * LDSM_BYTES[k.rsplit(".", 1)[1]] for k, v in ldsm.items())
    bars = sum(v for k, v in ops.items() if k.startswith("BAR"))
    sts = sum(v for k, v in ops.items() if k.startswith(("STS", "STSM")))
    print(
        f"{name:22s} warps={nw} loop: {len(body)} instructions, MMA={mma}, "
        f"LDSM={sum(ldsm.values())} ({ldsm_bytes} B a warp), STS/STSM={sts}, BAR={bars}"
    )


def shipped(name):
    """The shipped sm_120 module's configuration, compiled as its per-cache
    entry launches it (for sm_90a: the H200 runs this code)."""
    module = calibrate.load_kernel("kernels/sm120/sparse_mla_mma.py")
    ck, _, _, options = narrowcompile.compiled(module, name)
    report("shipped " + name, options["num_warps"], ck)


def main():
    shipped("pp_h64_t32_k1_w8_s1")
    for name, fn, cx, nw in KERNELS:
        sig = {n: "constexpr" for n in cx}
        sig.update({"Out": "*fp32", "ITERS": "i32"})
        src = GluonASTSource(
            fn=fn,
            signature=sig,
            constexprs={(fn.arg_names.index(k),): v for k, v in cx.items()},
        )
        ck, _ = calibrate.compile_logged(src, 90, {"num_warps": nw})
        report(name, nw, ck)


main()
