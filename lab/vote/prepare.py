"""lab/vote: copies of the sm_120 module (git-ignored) for the 64-head
tile's rescale skipped by each warp whose rows' maxima did not move
(NOTES.md). From the repository root: python3 lab/vote/prepare.py"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

OLD_SOFTMAX = """    m_new = gl.maximum(m_i, gl.max(gl.maximum(s_lo, s_hi), 1))
    # A tile with no valid token leaves m at -inf; subtracting it would give NaN.
    m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = gl.exp2(m_i - m_safe)
"""
# A row's reference maximum moves only when its tile maximum exceeds it by
# more than _VOTE_SLACK (log2 units), so the probabilities stay below
# 2^_VOTE_SLACK and alpha is exactly 1 where it did not move.
NEW_SOFTMAX = """    m_tile = gl.max(gl.maximum(s_lo, s_hi), 1)
    m_new = gl.where(m_tile > m_i + _VOTE_SLACK, m_tile, m_i)
    # A tile with no valid token leaves m at -inf; subtracting it would give NaN.
    m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = gl.exp2(m_i - m_safe)
"""
OLD_PV = """    p_lo = gl.convert_layout(p_lo.to(gl.bfloat16), dot_a)
    accs = _pp_pv(p_lo, lo, accs, alpha, dot_b)
"""
OLD_STEP = """    m_new, alpha, p = _pp_softmax_step(s, m_i)
    l2 = l2 * alpha[:, None] + p
    p = gl.convert_layout(p.to(gl.bfloat16), dot_a)
    accs = _pp_pv(p, kset, accs, alpha, dot_b)
"""
NEW_STEP = """    m_tile = gl.max(s, 1)
    m_new = gl.where(m_tile > m_i + _VOTE_SLACK, m_tile, m_i)
    # A tile with no valid token leaves m at -inf; subtracting it would give NaN.
    m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = gl.exp2(m_i - m_safe)
    p = gl.exp2(s - m_safe[:, None])
    l2 = l2 * alpha[:, None] + p
    p = gl.convert_layout(p.to(gl.bfloat16), dot_a)
    accs = _pp_pv_add(p, kset, _vote_all(accs, alpha, 4), dot_b)
"""
NEW_PV1 = """    p_lo = gl.convert_layout(p_lo.to(gl.bfloat16), dot_a)
    accs = _pp_pv_add(p_lo, lo, _vote_all(accs, alpha, 16), dot_b)
"""


def vote_all_asm(n):
    """One asm block for the 8 accumulators' n values a thread each: one
    warp vote, one branch over the 8n multiplies. Operands: the 8n results
    (accumulator g's value j is 8-major: g * n + j), the 8n accumulators
    tied to them, then alpha's n values (value 0 is row r, value n - 1 row
    r + 8)."""
    a = 16 * n
    muls = "".join(f"mul.f32 ${k}, ${k}, ${a + k % n}; " for k in range(8 * n))
    asm = (
        f"{{ .reg .pred p, q; setp.neu.f32 p, ${a}, 0f3F800000; "
        f"setp.neu.f32 q, ${a + n - 1}, 0f3F800000; or.pred p, p, q; "
        f"vote.sync.any.pred p, p, 0xffffffff; @!p bra.uni SKIP; {muls}SKIP: }}"
    )
    cons = ",".join(["=f"] * (8 * n) + [str(k) for k in range(8 * n)] + ["f"] * n)
    return asm, cons


HELPERS1 = "\n\n_VOTE_SLACK = gl.constexpr(8.0)\n"
for n in (4, 16):
    asm, cons = vote_all_asm(n)
    HELPERS1 += f"_VOTE_ASM{n} = gl.constexpr({asm!r})\n_VOTE_CONS{n} = gl.constexpr({cons!r})\n"
HELPERS1 += """

@gluon.jit
def _vote_all(accs, alpha, N: gl.constexpr):
    a = gl.broadcast(accs[0], alpha[:, None])[1]
    f = gl.float32
    if N == 16:
        asm: gl.constexpr = _VOTE_ASM16
        cons: gl.constexpr = _VOTE_CONS16
    else:
        asm: gl.constexpr = _VOTE_ASM4
        cons: gl.constexpr = _VOTE_CONS4
    return gl.inline_asm_elementwise(
        asm,
        cons,
        [accs[0], accs[1], accs[2], accs[3], accs[4], accs[5], accs[6], accs[7], a],
        dtype=(f, f, f, f, f, f, f, f),
        is_pure=True,
        pack=N,
    )


@gluon.jit
def _pp_attend_halves("""


def main():
    base = copies.base(HERE, commit="03b3df0")
    # One vote and one branch a tile, at 64 and at 16 heads.
    copies.edited(
        HERE,
        "vote1",
        [
            (OLD_SOFTMAX, NEW_SOFTMAX),
            (OLD_PV, NEW_PV1),
            (OLD_STEP, NEW_STEP),
            ("\n\n@gluon.jit\ndef _pp_attend_halves(", HELPERS1),
        ],
    )
    # The stale maximum alone (the multiplies kept): what the slack costs.
    copies.edited(
        HERE, "slack", [(OLD_SOFTMAX, NEW_SOFTMAX.replace("_VOTE_SLACK", "8.0"))]
    )
    print(base)


if __name__ == "__main__":
    main()
