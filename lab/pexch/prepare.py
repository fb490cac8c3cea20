"""lab/pexch's module copies (git-ignored): base/, the sm_120 module of
commit 92eab0a; x1/, base with Q staged as eight 64-column buffers (the two
the 64-head loop keeps in registers are dead after the prologue, and their
bytes serve other buffers) and the two P halves written to a scratch of
their own and read after one barrier (x1.patch); x2/, x1 with P.V in a
layout of its own, every warp all 64 heads and 8 columns of each group, P
and the rescale factor reaching it through that same exchange (x2.patch).

    python3 lab/pexch/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

copies.base(HERE, commit="92eab0a")
copies.patched(HERE, "x1", "x1.patch")
copies.patched(HERE, "x2", "x2.patch", source="x1")
print("prepared base, x1, x2")
