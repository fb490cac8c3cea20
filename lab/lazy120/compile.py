"""Compile lab/lazy120's copy of the sm_120 module (prepare.sh) and the
shipped one (no GPU; DISABLE_MMA_V3 as on the device) for sm_90 and
sm_120: registers, spills, shared memory and the tile loop's instruction
counts (both of the loop's paths: the rescale sits in a branch).

    bash lab/lazy120/prepare.sh && python3 lab/lazy120/compile.py [CONFIG...]
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

OPS = ("HMMA", "LDSM", "FMUL", "MUFU", "BAR", "STS", "LDS", "SHFL", "BRA")


def main():
    names = sys.argv[1:] or ["pp_h64_t32_k1_w8_s1", "pp_h16_t64_k1_w8_s1"]
    for folder in ("kernels/sm120", "/tmp/lazy120-module"):
        m = calibrate.load_kernel(os.path.join(ROOT, folder, "sparse_mla_mma.py"))
        for name in names:
            for whole in (False, True):
                for cap in (90, 120):
                    regs, spill, smem, n, c = narrowcompile.pp_loop_mix(
                        m, name, whole, cap
                    )
                    print(
                        f"{folder} {name}{' whole' if whole else ''} sm_{cap}: "
                        f"regs {regs} spill {spill} smem {smem}; "
                        f"loop {n}: " + " ".join(f"{o} {c[o]}" for o in OPS),
                        flush=True,
                    )


if __name__ == "__main__":
    main()
