"""Make lab/fp8's module copies (git-ignored) from the shipped sm_120
module (6b8e445): `base` as it is, and `f8`, in which the 64-head, 8-warp,
32-token, one-buffer pipelined configurations (pp_h64_t32_k*_w8_s1) run
`_f8_body` (f8.py.in): the tile on e4m3 MMAs as lab/fp8/NOTES.md's
`VTILE 1` form (Q and P as hi and lo e4m3 terms, K's bytes as stored, V's
transposed and re-quantised to each group's largest exponent so far, the
rope in bf16); `f8w`, the same gathering two tokens a thread, so
that V's transposed groups are stored 16 bits at a time instead of bytes;
`f8b`, as `f8` with K's bytes stored as e4m3 values (unpacked from the
words and packed again) instead of through a 32-bit view; and, for
debug.py, `f8q` (Q unscaled), `f8nn` (no nope scores), `f8nr` (no
rope scores), `f8g1` (every token's group factor 1, on the scores and in
V's re-quantisation: wrong by design, finite if nothing else is wrong) and
`f8qd` (Q's register groups loaded straight in the MMA operand layout, no
layout-change scratch in the prologue).

    python3 lab/fp8/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

sk = copies.lab_module("sk")

COMMIT = "6b8e445"


def f8_text(text, gather_rows=1, k_words=1, q_direct=0):
    """The base module with _f8_body added and _pp_decode_kernel calling it
    for the 64-head, 32-token, 8-warp, one-buffer tile (lab/sk's wrapper)."""
    added = open(os.path.join(HERE, "f8.py.in")).read()
    added = (
        f"F8_GATHER_ROWS = gl.constexpr({gather_rows})\n"
        f"F8_K_WORDS = gl.constexpr({k_words})\n"
        f"F8_Q_DIRECT = gl.constexpr({q_direct})\n\n\n" + added.lstrip("\n")
    )
    return sk.wrapped(text, "_f8_body", (), added)


def main():
    d = copies.base(HERE, commit=COMMIT, name="base", target="sm120")
    text = open(os.path.join(d, copies.MODULE)).read()
    copies.written(HERE, "f8", f8_text(text))
    copies.written(HERE, "f8w", f8_text(text, gather_rows=2))
    copies.written(HERE, "f8b", f8_text(text, k_words=0))
    # For debug.py's bisection: f8 with every head's power of two forced to
    # 1 (Q's hi and lo terms unscaled, nothing to undo after the scores).
    qe = "    qe = gl.minimum(gl.maximum(qe, -100.0), 100.0)\n"
    q1 = f8_text(text)
    assert q1.count(qe) == 1
    copies.written(HERE, "f8q", q1.replace(qe, qe + "    qe = qe * 0.0\n"))
    # And f8 without the nope groups' scores (f8nn) or without the rope's
    # (f8nr): wrong by design, they tell which part makes a NaN.
    nope = "            s = s + sg * f[None, :]\n"
    rope = (
        "        s = mma_v2(\n"
        "            q_rope.load(a16), rope_s.permute((1, 0)).load(b16), "
        "s * inv_qs[:, None]\n"
        "        )\n"
    )
    assert q1.count(nope) == 1 and q1.count(rope) == 1
    copies.written(HERE, "f8nn", q1.replace(nope, ""))
    copies.written(HERE, "f8nr", q1.replace(rope, "        s = s * inv_qs[:, None]\n"))
    # f8 with every token's group factor forced to 1 (exponent 127): on the
    # scores (f) and in V's re-quantisation (e8), whose running exponents are
    # then all 127 (no shift, no rescale). Wrong by design, but finite unless
    # the NaN comes from the operands themselves.
    factor = "            f = (e << 23).to(gl.float32, bitcast=True)\n"
    e8 = (
        "    e8 = ((words[:, None] >> (8 * g8[None, :]).to(gl.int64)) & 0xFF)"
        ".to(gl.int32)\n"
    )
    assert q1.count(factor) == 1 and q1.count(e8) == 1
    g1 = q1.replace(
        factor, "            f = ((e * 0 + 127) << 23).to(gl.float32, bitcast=True)\n"
    )
    copies.written(HERE, "f8g1", g1.replace(e8, e8 + "    e8 = e8 * 0 + 127\n"))
    # f8 with Q's two register groups loaded straight in the operand layout.
    copies.written(HERE, "f8qd", f8_text(text, q_direct=1))


if __name__ == "__main__":
    main()
