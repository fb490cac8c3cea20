"""Cross-compile lab/wst's copies for sm_90a (no GPU): shared memory,
registers, spills, the setmaxnreg counts and wgmma shapes in the PTX, and
the module's own launch checks (_compile_error), per copy and configuration.

    .venv/bin/python lab/wst/compile.py [copy...]
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "calib"))
sys.path.insert(0, os.path.join(HERE, ".."))

import calibrate  # noqa: E402
import narrowcompile  # noqa: E402  (lab/narrowcompile.py)


def one(copy, name, whole):
    module = calibrate.load_kernel(os.path.join(HERE, copy, "sparse_mla_mma.py"))
    ck, log, constexprs, _ = narrowcompile.compiled(
        module, name, whole, module._WST_MAXNREG
    )
    ptx = ck.asm["ptx"]
    use = calibrate.ptxas_usage(ptx, 90, log)
    regs = sorted(
        set(re.findall(r"setmaxnreg\.(inc|dec)\.sync\.aligned\.u32\s+(\d+)", ptx))
    )
    shapes = sorted(
        set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+)", ptx))
    )
    err = module._compile_error(ck, constexprs)
    print(
        f"{copy:4s} {name:22s} whole={int(whole)} smem={ck.metadata.shared} "
        f"regs={use['regs']} spill={use['spill']} setmaxnreg={regs} wgmma={shapes} "
        f"check={'ok' if err is None else err[:120]}"
    )


def main():
    copies = sys.argv[1:] or ["p4", "p8", "s4", "np", "pl"]
    for copy in copies:
        for name in [f"wst_h{h}_t64_k1_w4_s{s}" for h in (16, 32) for s in (2, 3)]:
            for whole in (False, True):
                try:
                    one(copy, name, whole)
                except Exception as e:  # report and go on
                    print(f"{copy} {name} whole={int(whole)} ERROR {str(e)[-1500:]}")


if __name__ == "__main__":
    main()
