"""Recreate lab/ablate's module copies (not checked in): base/ is commit
5af65b3's sm_120 module; each other folder is that module with one part of
the 64-head pipelined kernel's tile taken out, for timing only (their
results are wrong by design):

  nodq      the dequantisation: each raw word converted to bf16 as is (the
            gather stays; the UE8M0 scales go unused)
  nogather  the gather: every raw load predicated off at run time (the
            instructions stay, no bytes move)
  noqk      the score MMAs and their operand loads: scores of zero
  nomax     the row maximum across the two warps that share a row: the
            running maximum held at 0
  nopv      P.V: the accumulators never change (nor are the probabilities
            converted to the MMA operand layout)

From the repository root:  python3 lab/ablate/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

EDITS = {
    "nodq": [
        (
            """    x = gl.join(
        gl.join(_pp_byte(w, 0, scale), _pp_byte(w, 2, scale)),
        gl.join(_pp_byte(w, 1, scale), _pp_byte(w, 3, scale)),
    )
    return gl.reshape(x, [w.shape[0], 64])""",
            """    b = w.to(gl.bfloat16)
    x = gl.join(gl.join(b, b), gl.join(b, b))
    return gl.reshape(x, [w.shape[0], 64])""",
        )
    ],
    "nogather": [
        (
            "    wok = gl.convert_layout(valid, wrows, assert_trivial=True)[:, None]",
            "    wok = gl.convert_layout(valid & (data < 0), wrows, assert_trivial=True)[:, None]",
        ),
        (
            "gl.load((kv + scales_at).to(gl.pointer_type(gl.int64)), mask=valid, other=0)",
            "gl.load((kv + scales_at).to(gl.pointer_type(gl.int64)), mask=valid & (data < 0), other=0)",
        ),
    ],
    "noqk": [
        (
            """    for g in gl.static_range(8):
        if g < _PP_Q_REG_GROUPS:
            a = qs[1 + g]
        else:
            a = qs[0].slice(g * 64, 64, dim=1).load(dot_a)
        s_lo = mma_v2(a, lo[g].permute((1, 0)).load(dot_b), s_lo)
        s_hi = mma_v2(a, hi[g].permute((1, 0)).load(dot_b), s_hi)
""",
            "",
        )
    ],
    "nomax": [
        (
            "    m_new = gl.maximum(m_i, gl.max(gl.maximum(s_lo, s_hi), 1))\n    # A tile with no valid token",
            "    m_new = gl.maximum(m_i, 0.0)\n    # A tile with no valid token",
        )
    ],
    "nopv": [
        (
            """    p_lo = gl.convert_layout(p_lo.to(gl.bfloat16), dot_a)
    accs = _pp_pv(p_lo, lo, accs, alpha, dot_b)
    p_hi = gl.convert_layout(p_hi.to(gl.bfloat16), dot_a)
    accs = _pp_pv_add(p_hi, hi, accs, dot_b)
""",
            "",
        )
    ],
}


def main():
    copies.base(HERE)
    for name, edits in EDITS.items():
        copies.edited(HERE, name, edits)
    print("prepared", ", ".join(["base", *EDITS]))


if __name__ == "__main__":
    main()
