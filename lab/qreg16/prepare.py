"""Recreate the module copies lab/qreg16 compares (not checked in): base/ is
commit bbc9f3c's sm_120 module; q4/, q6/, q8/ keep Q's first 4, 6 or 8
column groups in registers as the score MMA's A operand in the 16-head
tile (one piece, SUBTILES 1), instead of every warp reading all of Q from
shared memory every tile. From the repository root:
    .venv/bin/python lab/qreg16/prepare.py
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import copies  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

OPERANDS = """    if SUBTILES == 1 or _PP_Q_REG_GROUPS == 0:
        return (q_smem,)
"""
SCORES = """    s = _pp_scores(qs[0], kset, z, dot_a, dot_b)
"""


def edits(n):
    loads = "".join(
        f"            q_smem.slice({64 * g}, 64, dim=1).load(dot_a),\n"
        for g in range(n)
    )
    operands = f"""    if SUBTILES == 1:
        return (
            q_smem,
{loads}        )
    elif _PP_Q_REG_GROUPS == 0:
        return (q_smem,)
"""
    scores = f"""    s0 = z
    s1 = z
    for g in gl.static_range(0, 8, 2):
        if g < {n}:
            a0 = qs[1 + g]
        else:
            a0 = qs[0].slice(g * 64, 64, dim=1).load(dot_a)
        if g + 1 < {n}:
            a1 = qs[2 + g]
        else:
            a1 = qs[0].slice(g * 64 + 64, 64, dim=1).load(dot_a)
        s0 = mma_v2(a0, kset[g].permute((1, 0)).load(dot_b), s0)
        s1 = mma_v2(a1, kset[g + 1].permute((1, 0)).load(dot_b), s1)
    s = s0 + s1
"""
    return [(OPERANDS, operands), (SCORES, scores)]


copies.base(HERE, commit="bbc9f3c")
for n in (4, 6, 8):
    copies.edited(HERE, f"q{n}", edits(n))
