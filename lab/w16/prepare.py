"""Recreate the module copies lab/w16 compares (not checked in): base/ is
the sm_120 module as of commit 65a3e1f; w16/ adds 16-warp configurations
of the 64-head pipelined tile (pp_h64_t32_k{1,2,4,8}_w16_s1): 4 warps down
the heads and 4 across the tile's 32 tokens (one piece, SUBTILES 1, Q read
from shared memory), each warp's share of the output 16 heads x 128
columns, launched at 128 registers (65,536 / 512 threads). The 8-warp
configurations are unchanged in w16/. From the repository root:
    .venv/bin/python lab/w16/prepare.py
"""

import os
import textwrap
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import copies  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG = '    "pp_h64_t32_k8_w8_s1": Config("pp", 64, 32, 8, 8, 1, False),\n'
W16 = "".join(
    f'    "pp_h64_t32_k{k}_w16_s1": Config("pp", 64, 32, {k}, 16, 1, False),\n'
    for k in (1, 2, 4, 8)
)
EDITS = [
    (CONFIG, CONFIG + W16),
    (
        "    if c.block_t == _PP_HALVES_BLOCK_T:\n        return _PP_Q_REG_GROUPS_HALVES\n",
        "    if c.num_warps == 16:\n        return 0\n"
        "    if c.block_t == _PP_HALVES_BLOCK_T:\n        return _PP_Q_REG_GROUPS_HALVES\n",
    ),
    (
        "        SUBTILES=2 if c.block_t == _PP_HALVES_BLOCK_T else 1,\n",
        "        SUBTILES=2 if c.block_t == _PP_HALVES_BLOCK_T and c.num_warps == 8 else 1,\n",
    ),
    (
        "    options = dict(num_warps=c.num_warps, maxnreg=_PP_MAXNREG)\n",
        "    options = dict(\n"
        "        num_warps=c.num_warps, maxnreg=min(_PP_MAXNREG, 65536 // (32 * c.num_warps))\n"
        "    )\n",
    ),
]


QGROUP = """        return qs[0].slice(g * 64, 64, dim=1).load(dot_a)
"""
QGROUP_NEW = """        # qs[0]: Q's last len(qs[0]) groups in shared memory (qd below).
        return qs[0][g - (8 - len(qs[0]))].load(dot_a)
"""
OPERANDS = """    qs = (q_smem,)
"""
OPERANDS_NEW = """    qs = (
        (
            q_smem.slice(0, 64, dim=1),
            q_smem.slice(64, 64, dim=1),
            q_smem.slice(128, 64, dim=1),
            q_smem.slice(192, 64, dim=1),
            q_smem.slice(256, 64, dim=1),
            q_smem.slice(320, 64, dim=1),
            q_smem.slice(384, 64, dim=1),
            q_smem.slice(448, 64, dim=1),
        ),
    )
"""
ALLOC = """    q_smem = gl.allocate_shared_memory(
        gl.bfloat16,
        [BLOCK_H, HEAD_DIM],
        gl.NVMMASharedLayout.get_default_for([BLOCK_H, HEAD_DIM], gl.bfloat16),
    )
    _pp_load_q(
        Q,
        q_smem,
        pid_b,
        stride_q_batch,
        stride_q_head,
        h0,
        num_heads,
        BLOCK_H,
        NUM_WARPS,
    )
"""
ALLOC_NEW = """    # qd: at 4 warps across the tokens, Q's first group is loaded straight
    # into registers and only the other 7 go to shared memory (8 KB less,
    # room for P's layout change at this tile).
    Q_DIRECT: gl.constexpr = 1 if WARPS_N == 4 else 0
    q_lay: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [NUM_WARPS, 1], [1, 0])
    q_heads = h0 + gl.arange(0, BLOCK_H, layout=gl.SliceLayout(1, q_lay))
    q_dims = gl.arange(0, 64, layout=gl.SliceLayout(0, q_lay))
    q_ptr = (
        Q + pid_b * stride_q_batch + q_heads[:, None] * stride_q_head + q_dims[None, :]
    )
    q_ok = (q_heads < num_heads)[:, None]
    q_gl: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_H, 64], gl.bfloat16)
    if Q_DIRECT == 1:
        q_bufs = ()
        for g in gl.static_range(1, 8):
            q_bufs = q_bufs + (
                gl.allocate_shared_memory(
                    gl.bfloat16,
                    [BLOCK_H, 64],
                    q_gl,
                    gl.load(q_ptr + g * 64, mask=q_ok, other=0.0),
                ),
            )
    else:
""" + textwrap.indent(
    ALLOC, "    "
)
OPER = """    qs = _pp_q_operands(q_smem, Q_REG_GROUPS, mma)
"""
OPER_NEW = """    if Q_DIRECT == 1:
        dot_a0: gl.constexpr = gl.DotOperandLayout(
            operand_index=0, parent=mma, k_width=2
        )
        q0 = gl.load(q_ptr, mask=q_ok, other=0.0)
        qs = (q_bufs, gl.convert_layout(q0, dot_a0))
    else:
        qs = _pp_q_operands(q_smem, Q_REG_GROUPS, mma)
"""
QD_EDITS = [
    (QGROUP, QGROUP_NEW),
    (OPERANDS, OPERANDS_NEW),
    (ALLOC, ALLOC_NEW),
    (OPER, OPER_NEW),
]

copies.base(HERE, commit="65a3e1f")
copies.edited(HERE, "w16", EDITS)
copies.edited(HERE, "qd", EDITS + QD_EDITS)
