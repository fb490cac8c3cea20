"""lab/wpf: the sm_120 module's whole call at 16 heads, with and without
the L2 prefetch its 16-head tile was timed with (lab/l2pp). ptxas for
sm_120 drops that prefetch from the whole call's build (six of Q's column
groups in registers, 255 registers), while the sm_90 build the lent GPU
runs keeps it: the GPU timed a whole call no card runs. NOTES.md here.

Copies (git-ignored), from the repository root:
  python3 lab/wpf/prepare.py      # lab/wpf/{base,card,g3,g2,one,blk}

  base  HEAD's sm_120 module (d45ef25): six groups, the prefetch.
  card  base without the prefetch: the whole call as ptxas builds it for
        sm_120 (its per-cache tile keeps the prefetch on a card).
  g3    base with three of Q's groups in registers in the one-piece
        16-head tile: ptxas for sm_120 keeps the prefetch there.
  g2    the same with two.
  one   base with one prefetch a thread, not two: the first four 128-byte
        lines of each row (bytes 0-511 of 576, no scale word); ptxas for
        sm_120 keeps it in both entries.
  blk   base with each row (576 bytes) and its scale word started by one
        bulk prefetch each (`cp.async.bulk.prefetch.L2`, sm_90 and later,
        addresses rounded down to 16 bytes and sizes up), from the row's
        first lane; ptxas for sm_120 keeps it in both entries.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

GROUPS = "_PP_Q_REG_GROUPS_ONE_PIECE_H16 = 6"
PREFETCH = "_PP_PREFETCH_H16 = gl.constexpr(True)"
LINES = """    col = gl.arange(0, 8, layout=gl.SliceLayout(0, play))
    line = gl.minimum(col * 128, TOKEN_DATA_BYTES - 1)
    at = gl.where(col[None, :] < 6, data[:, None] + line[None, :], scales_at[:, None])
    on = ok[:, None] & (col[None, :] < 7)
    gl.inline_asm_elementwise(
        "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p prefetch.global.L2 [$1]; mov.b32 $0, 0; }",
        "=r,l,r",
        [kv + at, on.to(gl.int32)],
"""
PLAY = "[1, 8 // LANES], [32 // LANES, LANES], [NUM_WARPS, 1], [1, 0]"
ONE = [
    (PLAY, PLAY.replace("8 // LANES", "4 // LANES")),
    (
        "col = gl.arange(0, 8, layout=gl.SliceLayout(0, play))",
        "col = gl.arange(0, 4, layout=gl.SliceLayout(0, play))",
    ),
]
BULK = """    col = gl.arange(0, 8, layout=gl.SliceLayout(0, play))
    row = col[None, :] == 0
    lo = gl.where(row, data[:, None], scales_at[:, None])
    hi = lo + gl.where(row, TOKEN_DATA_BYTES, TOKEN_SCALE_BYTES)
    lo = lo & -16
    size = ((hi + 15) & -16) - lo
    on = ok[:, None] & (col[None, :] < 2)
    gl.inline_asm_elementwise(
        "{ .reg .pred p; setp.ne.b32 p, $3, 0; "
        "@p cp.async.bulk.prefetch.L2.global [$1], $2; mov.b32 $0, 0; }",
        "=r,l,r,r",
        [kv + lo, size.to(gl.int32), on.to(gl.int32)],
"""


def main():
    copies.base(HERE, commit="d45ef25")
    copies.edited(HERE, "card", [(PREFETCH, PREFETCH.replace("True", "False"))])
    for g in (3, 2):
        copies.edited(HERE, f"g{g}", [(GROUPS, GROUPS.replace("= 6", f"= {g}"))])
    copies.edited(HERE, "one", ONE)
    copies.edited(HERE, "blk", [(LINES, BULK)])


if __name__ == "__main__":
    main()
