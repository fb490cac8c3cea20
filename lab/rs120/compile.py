"""Compile a lab/rs120 copy's role-split kernel for the given targets (no GPU):
shared memory, registers at launch and per partition (setmaxnreg), spills,
and the SASS's HMMA, LDSM, USETMAXREG, SYNCS and BAR counts, per cache and
as the whole call.

    python3 lab/rs120/compile.py 120,90 [COPY [CONFIG...]]    # COPY: rs (default), rs5
"""

import os
import re
import sys

os.environ.setdefault("DISABLE_MMA_V3", "1")
ROOT = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
)
sys.path.insert(0, os.path.join(ROOT, "calib"))
import triton  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

import sass as S  # noqa: E402
from calibrate import (  # noqa: E402
    compile_logged,
    load_kernel,
    ptxas_usage,
    specialised,
)

S.BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")


def loops(sass):
    """The SASS's tile loops: a backward branch's range holding no
    setmaxnreg (the mbarrier waits' retry stubs and the partitions'
    dispatch also branch back), more than 50 instructions long; one line
    of SASS an instruction, 16 bytes each."""
    lines = sass.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = re.search(r"BRA(?:\.U)? (?:!?U?P\d, )?0x([0-9a-f]+)", line)
        if not m or int(m.group(1), 16) // 16 >= i:
            continue
        body = lines[int(m.group(1), 16) // 16 : i + 1]
        if len(body) > 50 and not any("USETMAXREG" in b for b in body):
            n = lambda k: sum(k in b for b in body)
            found.append(
                f"{len(body)} instructions ({n('HMMA')} HMMA, {n('LDSM')} LDSM, "
                f"{n('BAR.SYNC')} BAR, {n('FMUL')} FMUL, {n('STL') + n('LDL')} STL/LDL)"
            )
    return found


def main():
    caps = [int(c) for c in sys.argv[1].split(",")]
    copy = sys.argv[2] if len(sys.argv) > 2 else "rs"
    m = load_kernel(os.path.join(ROOT, "lab", "rs120", copy, "sparse_mla_mma.py"))
    names = sys.argv[3:] or [f"pp_h64_t{m._RS_TILE}_k1_w8_s{m._RS_SLOTS}"]
    for name in names:
        tile = S.tile_of(m.CONFIGS[name])
        for whole in (False, True):
            fn, sig, cx, opts, _ = S.decode_job(m, tile, caps[0], whole)
            fn = m._rs_decode_kernel
            opts = dict(opts, maxnreg=m._RS_MAXNREG)
            for cap in caps:
                cx = dict(cx, PDL=cap >= 90)
                src = GluonASTSource(
                    fn=fn, signature=sig, constexprs=cx, attrs=specialised(fn, sig)
                )
                tag = f"{copy} {name}{' whole' if whole else ''} sm_{cap}"
                try:
                    ck, log = compile_logged(src, cap, opts)
                except Exception as e:
                    if os.environ.get("RS_DEBUG"):
                        import traceback

                        traceback.print_exc()
                    print(tag, "Triton refuses:", " ".join(str(e).split())[:1500])
                    continue
                ptx = ck.asm["ptx"]
                use = ptxas_usage(ptx, cap, log)
                sass = "\n".join(S.disassemble(ck.asm["cubin"])[0])
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
                print("  loops:", "; ".join(loops(sass)))


if __name__ == "__main__":
    main()
