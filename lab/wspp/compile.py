"""Compile lab/wspp/ws's warp-specialised kernel for the given targets (no
GPU): shared memory, registers, spills and the SASS's HMMA, USETMAXREG and
SYNCS counts, per cache and as the whole call.

    python3 lab/wspp/compile.py 120,90 [CONFIG]
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
from calibrate import (
    compile_logged,
    load_kernel,
    ptxas_usage,
    specialised,
)  # noqa: E402

S.BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")


def main():
    caps = [int(c) for c in sys.argv[1].split(",")]
    name = sys.argv[2] if len(sys.argv) > 2 else "pp_h64_t16_k1_w8_s2"
    m = load_kernel(os.path.join(ROOT, "lab", "wspp", "ws", "sparse_mla_mma.py"))
    tile = S.tile_of(m.CONFIGS[name])
    for whole in (False, True):
        fn, sig, cx, opts, _ = S.decode_job(m, tile, caps[0], whole)
        fn = m._wspp_decode_kernel
        opts = dict(opts, maxnreg=m._WSPP_MAXNREG)
        for cap in caps:
            src = GluonASTSource(
                fn=fn, signature=sig, constexprs=cx, attrs=specialised(fn, sig)
            )
            tag = f"{name}{' whole' if whole else ''} sm_{cap}"
            try:
                ck, log = compile_logged(src, cap, opts)
            except Exception as e:
                print(tag, "Triton refuses:", " ".join(str(e).split())[-400:])
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
                f"HMMA {sass.count('HMMA')}, HGMMA {sass.count('HGMMA')}, USETMAXREG {sass.count('SETMAXREG')}, "
                f"SYNCS {sass.count('SYNCS')}, BAR {sass.count('BAR.SYNC')}"
            )


if __name__ == "__main__":
    main()
