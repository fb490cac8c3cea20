"""Make lab/lazy's module copies (git-ignored) from the sm_90 module at
f28c7e3: `base` as it is, and `lazy`, whose narrow 16-head consumer
rescales its accumulator and row sums only when some head's maximum score
grew past the reference it exponentiates against by more than 2^8
(conditional rescaling, as FlashAttention-4 does): otherwise the tile's
probabilities are taken against the old reference (at most 256, exact in
fp32 and as wide as bf16 needs), and the 64 + 8 multiplies a thread and
the exp2 of the factors are skipped. The decision is one max over the
heads, which every warp of the group holds whole after the tokens' max
(heads on the wgmma's N side): a shuffle within the warp, no barrier.

    python3 lab/lazy/prepare.py     # lab/lazy/{base,lazy}
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

OLD = """        s = gl.where(valid[:, None], s * qk_scale, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(s, 0))
        m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = gl.exp2(m_i - m_safe)
        p = gl.exp2(s - m_safe[None, :])
        l_part = l_part * alpha[None, :] + p
        acc = acc * alpha[None, :]
"""
NEW = """        s = gl.where(valid[:, None], s * qk_scale, float("-inf"))
        m_tile = gl.max(s, 0)
        if gl.max((m_tile > m_i + 8.0).to(gl.int32), 0) > 0:
            m_new = gl.maximum(m_i, m_tile)
            m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
            alpha = gl.exp2(m_i - m_safe)
            l_part = l_part * alpha[None, :]
            acc = acc * alpha[None, :]
            m_i = m_new
        m_ref = gl.where(m_i == float("-inf"), 0.0, m_i)
        p = gl.exp2(s - m_ref[None, :])
        l_part = l_part + p
"""
LOOP_END = """        mbarrier.arrive(empty.index(buf), count=1)
        m_i = m_new

    if SPLIT_K > 1:
        _launch_dependents()
    l_i = gl.sum(l_part, 0)"""


def main():
    copies.base(HERE, commit="f28c7e3", target="sm90")
    copies.edited(
        HERE,
        "lazy",
        [(OLD, NEW), (LOOP_END, LOOP_END.replace("        m_i = m_new\n", ""))],
    )


if __name__ == "__main__":
    main()
