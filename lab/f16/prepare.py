"""lab/f16's module copies (git-ignored): base/, the sm_120 module of
commit 31cdb3d (as shipped since the tenth session); f16/, base with the
64-head pipelined tile's MMAs taking fp16 operands made in registers from
the e4m3 bytes (f16.patch, lab/f16/NOTES.md); f16s/, f16 with each
tile's scales worked out once, as the tile is stored, instead of by every
warp where it uses them (f16s.patch); h16/, base with the 16-head tile's
nope groups 0-5 kept raw and its MMAs on fp16 operands made from them
(h16.patch), and h16q2/, h16q0/, h16 with 2 or none of Q's column groups
in registers instead of 6 (with 6 it spills 188-208 B).

    python3 lab/f16/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

copies.base(HERE, commit="31cdb3d")
copies.patched(HERE, "f16", "f16.patch")
copies.patched(HERE, "f16s", "f16s.patch", source="f16")
copies.patched(HERE, "h16", "h16.patch")
for n in (2, 0):
    copies.edited(
        HERE,
        f"h16q{n}",
        [
            (
                "_PP_Q_REG_GROUPS_ONE_PIECE_H16 = 6",
                f"_PP_Q_REG_GROUPS_ONE_PIECE_H16 = {n}",
            )
        ],
        source="h16",
    )
print("prepared base, f16, f16s, h16, h16q2, h16q0")
