"""Cross-compile lab/w16's 64-head pipelined configurations for sm_120 (no
GPU): shared memory, registers, spills, per cache and as the whole call.

    .venv/bin/python lab/w16/compile.py [copy...]
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "calib"))

import calibrate  # noqa: E402
from sass import decode_job  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402


def one(copy, name, whole, cap=120):
    module = calibrate.load_kernel(os.path.join(HERE, copy, "sparse_mla_mma.py"))
    c = module.CONFIGS[name]
    fn, sig, constexprs, options, _ = decode_job(module, c._asdict(), cap, whole)
    # The launch's own constexprs and options (decode_job knows the 8-warp tile).
    constexprs["SUBTILES"] = 2 if c.block_t == 32 and c.num_warps == 8 else 1
    constexprs["Q_REG_GROUPS"] = module._pp_q_reg_groups(c)
    options["maxnreg"] = min(module._PP_MAXNREG, 65536 // (32 * c.num_warps))
    src = GluonASTSource(
        fn=fn,
        signature=sig,
        constexprs=constexprs,
        attrs=calibrate.specialised(fn, sig),
    )
    ck, log = calibrate.compile_logged(src, cap, options)
    use = calibrate.ptxas_usage(ck.asm["ptx"], cap, log)
    print(
        f"{copy:4s} {name:22s} sm_{cap} whole={int(whole)} smem={ck.metadata.shared} "
        f"regs={use['regs']} spill={use['spill']}"
    )


def main():
    for copy in sys.argv[1:] or ["w16"]:
        for name in ("pp_h64_t32_k1_w8_s1", "pp_h64_t32_k1_w16_s1"):
            for whole in (False, True):
                one(copy, name, whole)


if __name__ == "__main__":
    main()
