"""Compile lab/cs120's column-split tile for sm_120 (ptxas-blackwell) and
sm_90 (no GPU; DISABLE_MMA_V3 as on the device): shared memory,
registers, spills, and the tile loop's HMMA, LDSM, LDS, STS and BAR
counts, per cache and as the whole call.

    python3 lab/cs120/compile.py [FOLDER [CONFIG...]]
    # kernels/sm120, pp_h64_t16_k1_w8_s2 unless told

FOLDER is a module's folder (or a copy's under lab/cs120). The column
split left kernels/sm120 at d74e1a0: give a copy of 63d83e3's.
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
import narrowcompile  # noqa: E402
import sass as S  # noqa: E402


def count(body, op):
    n = sum(op in x for x in body)
    if op == "LDS":
        n -= sum("LDSM" in x for x in body)
    return n


def main():
    copy = sys.argv[1] if len(sys.argv) > 1 else "kernels/sm120"
    names = sys.argv[2:] or ["pp_h64_t16_k1_w8_s2"]
    folder = copy if "/" in copy else os.path.join("lab", "cs120", copy)
    m = calibrate.load_kernel(os.path.join(ROOT, folder, "sparse_mla_mma.py"))
    for name in names:
        fn, opts = m._pp_program(m.CONFIGS[name])
        for whole in (False, True):
            for cap in (120, 90):
                tag = f"{copy} {name}{' whole' if whole else ''} sm_{cap}"
                try:
                    ck, log, _, _ = narrowcompile.compiled(
                        m, name, whole, opts["maxnreg"], cap, fn
                    )
                except Exception as e:
                    import traceback

                    traceback.print_exc()
                    print(tag, "Triton refuses:", " ".join(str(e).split())[:3000])
                    continue
                use = calibrate.ptxas_usage(ck.asm["ptx"], cap, log)
                code = S.disassemble_at(ck.asm["cubin"])[0]
                loops = narrowcompile.partition_loops(code)
                body = max(loops, key=len) if loops else []
                ops = (
                    "HMMA",
                    "LDSM",
                    "LDS",
                    "STS",
                    "BAR.SYNC",
                    "LDG",
                    "SHFL",
                    "FMUL",
                    "STL",
                    "LDL",
                )
                print(
                    f"{tag}: smem {ck.metadata.shared} B, regs {use['regs']}, spill {use['spill']} B; "
                    f"loop {len(body)} instr: "
                    + " ".join(f"{o} {count(body, o)}" for o in ops),
                    flush=True,
                )
                if os.environ.get("CS_SASS"):
                    with open(f"/tmp/cs-{name}-{int(whole)}-{cap}.sass", "w") as f:
                        f.write("\n".join(x for _, x in code))


if __name__ == "__main__":
    main()
