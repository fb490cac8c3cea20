"""Compile lab/l2pp's copies (prepare.py) for sm_90 (DISABLE_MMA_V3, as
on the device) and sm_120, no GPU: registers, spills, shared memory and
the tile loop's instruction counts, per cache and as the whole call.

    python3 lab/l2pp/prepare.py && .venv/bin/python lab/l2pp/compile.py [CONFIG...]
"""

import os
import sys

os.environ.setdefault("DISABLE_MMA_V3", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "calib"))
sys.path.insert(0, os.path.join(ROOT, "lab"))
import narrowcompile  # noqa: E402

OPS = ("HMMA", "LDSM", "LDG", "CCTL", "FMUL", "BAR", "STS", "BRA")


def main():
    names = sys.argv[1:] or ["pp_h64_t32_k1_w8_s1", "pp_h16_t64_k1_w8_s1"]
    narrowcompile.print_pp_loop_mixes(
        [(c, os.path.join(HERE, c, "sparse_mla_mma.py")) for c in ("base", "pf")],
        names,
        OPS,
    )


if __name__ == "__main__":
    main()
