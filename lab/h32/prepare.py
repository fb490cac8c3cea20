"""lab/h32's module copies (git-ignored): base/, the sm_120 module of
commit 31cdb3d; h32/, base with pipelined configurations of 32 heads and 4
warps (each warp 16 heads, as in the 64-head tile), small enough in shared
memory and registers for two programs an SM on sm_120, so that 64 heads
run as two programs, each tile gathered twice (lab/h32/NOTES.md).

    python3 lab/h32/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

NEW = "".join(
    f'    "pp_h32_t{t}_k{k}_w4_s1": Config("pp", 32, {t}, {k}, 4, 1, False),\n'
    for t in (16, 32)
    for k in (1, 2, 4, 8)
)

copies.base(HERE, commit="31cdb3d")
copies.edited(
    HERE,
    "h32",
    [
        (
            '    "pp_h64_t32_k1_w8_s1": Config("pp", 64, 32, 1, 8, 1, False),\n',
            NEW + '    "pp_h64_t32_k1_w8_s1": Config("pp", 64, 32, 1, 8, 1, False),\n',
        ),
        (
            "    return _PP_Q_REG_GROUPS_ONE_PIECE_H16 if c.block_h == 16 else 0",
            "    if c.block_h == 32:\n"
            "        return _PP_Q_REG_GROUPS_HALVES\n"
            "    return _PP_Q_REG_GROUPS_ONE_PIECE_H16 if c.block_h == 16 else 0",
        ),
    ],
)
print("prepared base, h32")
