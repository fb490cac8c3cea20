"""lab/f16's module copies (git-ignored): base/, the sm_120 module of
commit 31cdb3d (as shipped since the tenth session); f16/, base with the
64-head pipelined tile's MMAs taking fp16 operands made in registers from
the e4m3 bytes (f16.patch, lab/f16/NOTES.md); f16s/, f16 with each
tile's scales worked out once, as the tile is stored, instead of by every
warp where it uses them (f16s.patch).

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
print("prepared base, f16, f16s")
