"""lab/ss120's module copies (git-ignored, under lab/ss120/): `base`, the
sm_120 module at COMMIT (HEAD unless told), and `ss0`, `ss1`, `ss2`, base
with ss.py.in's kernel for the 64-head one-buffer configurations
(pp_h64_t32_k*_w8_s1), which differ in where the first half of the next
tile's store goes: before the scores (0), after them (1), after the
softmax (2); `ss0l`, `ss1l`, `ss2l` the same with the next loads after
the tile's second P.V half instead of before it; `ssc`, the control:
the same kernel with both halves stored after the tile's last MMA;
`ch4`, base with the halves tile's score MMAs in four accumulator
chains instead of two; `ch4b`, ch4 with the one-piece tiles' (16
heads) in four too.

    python3 lab/ss120/prepare.py [COMMIT]
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

ROUTE_OLD = (
    "    return _pp_decode_kernel, dict(num_warps=c.num_warps, maxnreg=_PP_MAXNREG)\n"
)
ROUTE_NEW = (
    "    if c.block_h == 64 and c.num_stages == 1 and c.num_warps == 8:\n"
    "        return _ss_decode_kernel, dict(num_warps=c.num_warps, maxnreg=_PP_MAXNREG)\n"
    + ROUTE_OLD
)
ANCHOR = "@gluon.jit\ndef _pp_row_sum("
# (copy, where the early half-store goes, loads after the second P.V half)
COPIES = (
    [(f"ss{e}", e, False) for e in (0, 1, 2)]
    + [(f"ss{e}l", e, True) for e in (0, 1, 2)]
    + [("ssc", 3, True)]
)


# ch4: the halves tile's two score chains (one a half, 32 dependent MMAs
# each) as four (even and odd column groups apart), summed after.
CH4 = [
    (
        """    s_lo = z
    s_hi = z
    for g in gl.static_range(8):
        a = _pp_q_group(qs, g, dot_a)
        s_lo = mma_v2(a, lo[g].permute((1, 0)).load(dot_b), s_lo)
        s_hi = mma_v2(a, hi[g].permute((1, 0)).load(dot_b), s_hi)
""",
        """    s_lo = z
    s_hi = z
    s_lo1 = z
    s_hi1 = z
    for j in gl.static_range(4):
        a = _pp_q_group(qs, 2 * j, dot_a)
        s_lo = mma_v2(a, lo[2 * j].permute((1, 0)).load(dot_b), s_lo)
        s_hi = mma_v2(a, hi[2 * j].permute((1, 0)).load(dot_b), s_hi)
        a = _pp_q_group(qs, 2 * j + 1, dot_a)
        s_lo1 = mma_v2(a, lo[2 * j + 1].permute((1, 0)).load(dot_b), s_lo1)
        s_hi1 = mma_v2(a, hi[2 * j + 1].permute((1, 0)).load(dot_b), s_hi1)
    s_lo = s_lo + s_lo1
    s_hi = s_hi + s_hi1
""",
    )
]


# ch4b: ch4, and the one-piece tiles' scores (_pp_scores: two chains of
# 16) in four chains of 8.
CH4B = CH4 + [
    (
        """    s0 = z
    s1 = z
    for j in gl.static_range(4):
        s0 = mma_v2(
            _pp_q_group(qs, 2 * j, dot_a),
            kset[2 * j].permute((1, 0)).load(dot_b),
            s0,
        )
        s1 = mma_v2(
            _pp_q_group(qs, 2 * j + 1, dot_a),
            kset[2 * j + 1].permute((1, 0)).load(dot_b),
            s1,
        )
    return s0 + s1
""",
        """    s0 = z
    s1 = z
    s2 = z
    s3 = z
    for j in gl.static_range(2):
        s0 = mma_v2(
            _pp_q_group(qs, 4 * j, dot_a), kset[4 * j].permute((1, 0)).load(dot_b), s0
        )
        s1 = mma_v2(
            _pp_q_group(qs, 4 * j + 1, dot_a),
            kset[4 * j + 1].permute((1, 0)).load(dot_b),
            s1,
        )
        s2 = mma_v2(
            _pp_q_group(qs, 4 * j + 2, dot_a),
            kset[4 * j + 2].permute((1, 0)).load(dot_b),
            s2,
        )
        s3 = mma_v2(
            _pp_q_group(qs, 4 * j + 3, dot_a),
            kset[4 * j + 3].permute((1, 0)).load(dot_b),
            s3,
        )
    return (s0 + s1) + (s2 + s3)
""",
    )
]


def main():
    commit = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    root = os.path.dirname(os.path.dirname(HERE))
    copies.base(root, commit, "lab/ss120/base")
    with open(os.path.join(HERE, "ss.py.in")) as f:
        code = f.read()
    for name, early, late in COPIES:
        block = (
            f"_SS_EARLY = gl.constexpr({early})\n"
            f"_SS_FETCH_LATE = gl.constexpr({late})\n\n\n" + code
        )
        copies.edited(
            root,
            f"lab/ss120/{name}",
            [(ROUTE_OLD, ROUTE_NEW), (ANCHOR, block + ANCHOR)],
            source="lab/ss120/base",
        )
    copies.edited(root, "lab/ss120/ch4", CH4, source="lab/ss120/base")
    copies.edited(root, "lab/ss120/ch4b", CH4B, source="lab/ss120/base")


if __name__ == "__main__":
    main()
