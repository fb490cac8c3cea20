"""Make lab/sk's module copies (git-ignored) from the shipped sm_120
module (15e13e5): `base` as it is, and `sk2` and `sk4`, in which the
64-head, 8-warp, 32-token pipelined configurations (pp_h64_t32_k*_w8_s1)
run `_sk_body` (sk.py.in): the score MMAs split along their 512-long
reduction over SK = 2 or 4 slices of warps (one batched mma_v2 whose
batch is the slice), Q's first chunk of SK column groups in registers,
the SK partial scores summed across warps, and P.V with 2 warps down the
heads and 4 across the columns.

The shipped tile gives each of its 8 warps 16 heads by 16 tokens of the
scores, so per 32-token tile every warp reads its 16 heads' Q (bar the
2 column groups it keeps in registers) and 16 tokens' K, all 512 columns,
and 16 heads by 256 columns of P.V: about 46 KB of ldmatrix a warp, 360
KB an SM, and lab/bounds found that phase at 95% of the ldmatrix rate.
With SK = 4 a warp reads 32 tokens' K over its 2 groups (8 KB), its
other Q group for 32 heads (4 KB; the first is in registers) and 32
tokens' V over 128 columns (8 KB): about 20 KB a warp, at the price of
one cross-warp sum of [4, 64, 32] fp32 a tile.

    python3 lab/sk/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

COMMIT = "15e13e5"


def wrapped(text, body, extra, added):
    """The base module with the text `added` and _pp_decode_kernel calling
    `body` (with _pp_decode_kernel's arguments, then `extra`) for the
    64-head, 32-token, 8-warp, one-buffer tile, and its own body, renamed
    _pp_body, for every other configuration."""
    at = text.index("@gluon.jit\ndef _pp_decode_kernel(")
    head = text.index("(", at) + 1
    close = text.index("):\n", head)
    params = [p.strip() for p in text[head:close].split(",") if p.strip()]
    names = [p.split(":")[0].strip() for p in params]
    text = text[:at] + text[at:].replace("def _pp_decode_kernel(", "def _pp_body(", 1)
    call = "".join(f"            {n},\n" for n in names)
    wrapper = (
        "@gluon.jit\ndef _pp_decode_kernel(\n"
        + "".join(f"    {p},\n" for p in params)
        + "):\n"
        + "    if BLOCK_H == 64 and BLOCK_T == 32 and WARPS_N == 2 and NUM_BUFS == 1:\n"
        + f"        {body}(\n"
        + call
        + "".join(f"            {x},\n" for x in extra)
        + "        )\n"
        + "    else:\n"
        + "        _pp_body(\n"
        + call
        + "        )\n\n\n"
    )
    at = text.index("@gluon.jit\ndef _pp_body(")
    return text[:at] + wrapper + added.lstrip("\n") + "\n\n" + text[at:]


def sk_text(text, sk):
    """The base module with _sk_body added and _pp_decode_kernel calling it,
    with SK = sk, for the 64-head, 32-token, 8-warp, one-buffer tile."""
    added = open(os.path.join(HERE, "sk.py.in")).read()
    return wrapped(text, "_sk_body", (sk,), added)


def main():
    d = copies.base(HERE, commit=COMMIT, name="base", target="sm120")
    text = open(os.path.join(d, copies.MODULE)).read()
    for sk in (2, 4):
        copies.written(HERE, f"sk{sk}", sk_text(text, sk))


if __name__ == "__main__":
    main()
