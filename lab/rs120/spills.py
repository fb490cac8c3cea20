"""Where a shipped sm_120 configuration's spills sit (no GPU): the bytes
ptxas reports, the local stores and loads in all, and those inside each
tile loop (a partition's, for the role split), per cache and as the whole
call. Run it under the Triton release to look at:

    .venv/triton-3.9.0/bin/python lab/rs120/spills.py [CONFIG...]
"""

import os
import sys

os.environ.setdefault("DISABLE_MMA_V3", "1")
ROOT = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
)
sys.path.insert(0, os.path.join(ROOT, "calib"))
sys.path.insert(0, os.path.join(ROOT, "lab"))
import calibrate  # noqa: E402
import narrowcompile  # noqa: E402  (lab/narrowcompile.py)
import sass as S  # noqa: E402

CONFIGS = ("pp_h16_t64_k1_w8_s1", "pp_h64_t32_k1_w8_s1", "pp_h64_t16_k1_w16_s3")


def local(body):
    return sum("STL" in x for x in body), sum("LDL" in x for x in body)


def main():
    import triton

    m = calibrate.load_kernel(
        os.path.join(ROOT, "kernels", "sm120", "sparse_mla_mma.py")
    )
    for name in sys.argv[1:] or CONFIGS:
        kernel, options = m._pp_program(m.CONFIGS[name])
        for whole in (False, True):
            ck, log, _, _ = narrowcompile.compiled(
                m, name, whole, options["maxnreg"], 120, kernel
            )
            use = calibrate.ptxas_usage(ck.asm["ptx"], 120, log)
            code = S.disassemble_at(ck.asm["cubin"])[0]
            loops = narrowcompile.partition_loops(code)
            st, ld = local([x for _, x in code])
            print(
                f"Triton {triton.__version__} {name} {'whole' if whole else 'cache'}: "
                f"spill {use['spill']} B, {st} STL and {ld} LDL in all; tile loops "
                + ", ".join(
                    f"{len(b)} instructions ({local(b)[0]} STL, {local(b)[1]} LDL)"
                    for b in loops
                )
            )


if __name__ == "__main__":
    main()
