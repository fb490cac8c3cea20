"""lab/l2pp: the pipelined (pp_*) tiles with the rows of the tile after
next started into L2, as the sm_90 producer's prefetch does (lab/vpf,
run 13 of NOTES.md's first table), which no pp tile had had (NOTES.md
here says why, what each call measured, and what shipped).

Copies (git-ignored), from the repository root:
  python3 lab/l2pp/prepare.py      # lab/l2pp/base, lab/l2pp/pf

  base  the sm_120 module before the prefetch (2d36912).
  pf    the module the prefetch shipped in (2b0252e), with it on in every
        one-buffer-set tile, the 64-head ones too, as the first call
        timed it. The first call's copy was the prototype these helpers
        were ported from; this one compiles to the same machine code
        (pp_h64_t32 and pp_h16_t64, per cache and whole call, sm_90 and
        sm_120 builds), so the template is not copied here.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

SHIPPED = (
    "PREFETCH: gl.constexpr = BLOCK_H == 16 and NUM_BUFS == 1 and _PP_PREFETCH_H16"
)
EVERY_TILE = "PREFETCH: gl.constexpr = NUM_BUFS == 1"


def main():
    copies.base(HERE, commit="2d36912")
    copies.base(HERE, commit="2b0252e", name="shipped")
    copies.edited(HERE, "pf", [(SHIPPED, EVERY_TILE)], source="shipped")


if __name__ == "__main__":
    main()
