"""Cross-compile lab/f16's copies' 64-head pipelined configurations (or
those NAMES lists) for sm_120 (ptxas-blackwell) and sm_90 (no GPU):
shared memory, registers, spills, and the tile loop's SASS (HMMA, LDSM,
STS, LDS, F2FP, BAR counts in the whole kernel).

    .venv/bin/python lab/f16/compile.py [COPY...]   # base f16 unless told
    NAMES=pp_h16_t64_k1_w8_s1 .venv/bin/python lab/f16/compile.py h16q2
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "..", "..", "calib"))

import calibrate  # noqa: E402
import narrowcompile  # noqa: E402
import sass as S  # noqa: E402

NAMES = tuple(
    os.environ.get("NAMES", "pp_h64_t32_k1_w8_s1,pp_h64_t32_k8_w8_s1").split(",")
)
OPS = ("HMMA", "LDSM", "STS", "LDS.", "LDS ", "F2FP", "BAR.SYNC", "PRMT", "LDG")


def main():
    copies = sys.argv[1:] or ["base", "f16"]
    for copy in copies:
        module = calibrate.load_kernel(os.path.join(HERE, copy, "sparse_mla_mma.py"))
        for cap in (120, 90):
            for name in NAMES:
                for whole in (False, True):
                    # The pipelined family's launch bound, as the module launches it.
                    ck, log, _, _ = narrowcompile.compiled(
                        module, name, whole, module._PP_MAXNREG, cap
                    )
                    use = calibrate.ptxas_usage(ck.asm["ptx"], cap, log)
                    text = "\n".join(S.disassemble(ck.asm["cubin"])[0])
                    counts = " ".join(
                        f"{op.strip('. ')}={text.count(op)}" for op in OPS
                    )
                    print(
                        f"{copy:5s} sm_{cap} {name} whole={int(whole)} "
                        f"smem={ck.metadata.shared} regs={use['regs']} "
                        f"spill={use['spill']} {counts}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
