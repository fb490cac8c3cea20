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
import narrowcompile  # noqa: E402

OPS = ("HMMA", "LDSM", "FMUL", "MUFU", "BAR", "STS", "LDS", "SHFL", "BRA")


def main():
    names = sys.argv[1:] or ["pp_h64_t32_k1_w8_s1", "pp_h16_t64_k1_w8_s1"]
    narrowcompile.print_pp_loop_mixes(
        [
            (f, os.path.join(ROOT, f, "sparse_mla_mma.py"))
            for f in ("kernels/sm120", "/tmp/lazy120-module")
        ],
        names,
        OPS,
    )


if __name__ == "__main__":
    main()
