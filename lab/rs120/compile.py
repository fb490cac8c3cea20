"""Compile a lab/rs120 copy's role-split kernel for the given targets (no GPU):
shared memory, registers at launch and per partition (setmaxnreg), spills,
the SASS's HMMA, LDSM, USETMAXREG, SYNCS and BAR counts, and each
partition's tile loop, per cache and as the whole call.

    python3 lab/rs120/compile.py 120,90 [COPY [CONFIG...]]    # COPY: rs (default), rs5, ...
"""

import os
import re
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


def loop_line(body):
    n = lambda k: sum(k in x for x in body)  # noqa: E731
    return (
        f"{len(body)} instructions ({n('HMMA')} HMMA, {n('LDSM')} LDSM, "
        f"{n('BAR.SYNC')} BAR, {n('FMUL')} FMUL, {n('STL') + n('LDL')} STL/LDL)"
    )


def main():
    caps = [int(c) for c in sys.argv[1].split(",")]
    copy = sys.argv[2] if len(sys.argv) > 2 else "rs"
    m = calibrate.load_kernel(
        os.path.join(ROOT, "lab", "rs120", copy, "sparse_mla_mma.py")
    )
    names = sys.argv[3:] or [f"pp_h64_t{m._RS_TILE}_k1_w8_s{m._RS_SLOTS}"]
    for name in names:
        for whole in (False, True):
            for cap in caps:
                tag = f"{copy} {name}{' whole' if whole else ''} sm_{cap}"
                try:
                    ck, log, _, _ = narrowcompile.compiled(
                        m, name, whole, m._RS_MAXNREG, cap, m._rs_decode_kernel
                    )
                except Exception as e:
                    if os.environ.get("RS_DEBUG"):
                        import traceback

                        traceback.print_exc()
                    print(tag, "Triton refuses:", " ".join(str(e).split())[:1500])
                    continue
                ptx = ck.asm["ptx"]
                use = calibrate.ptxas_usage(ptx, cap, log)
                code = S.disassemble_at(ck.asm["cubin"])[0]
                sass = "\n".join(x for _, x in code)
                setmax = re.findall(
                    r"setmaxnreg\.(inc|dec)\.sync\.aligned\.u32\s+(\d+)", ptx
                )
                print(
                    f"{tag}: smem {ck.metadata.shared} B, {use['regs']} registers at launch, "
                    f"spill {use['spill']} B, setmaxnreg {sorted(set(setmax))}, "
                    f"HMMA {sass.count('HMMA')}, LDSM {sass.count('LDSM')}, "
                    f"HGMMA {sass.count('HGMMA')}, USETMAXREG {sass.count('SETMAXREG')}, "
                    f"SYNCS {sass.count('SYNCS')}, BAR {sass.count('BAR.SYNC')}",
                    flush=True,
                )
                loops = narrowcompile.partition_loops(code)
                print("  loops:", "; ".join(loop_line(b) for b in loops))


if __name__ == "__main__":
    main()
