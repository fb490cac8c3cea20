"""Make lab/p16's module copies (git-ignored): `base`, the sm_90 module at
f33bd7e (this session's starting commit), and `p16`, the same with 16 producer warps beside the narrow 16-head
consumer instead of 8.

Triton 3.6 gives the default partition (the consumer warp group) what the
launch bound leaves once the workers have their requested registers: with
20 warps the bound is at most 65,536 / 640 = 102 (96 after rounding), and
16 producer warps at 80 leave 96 + (96 - 80) x 16 / 4 = 160 for the
consumer, which needs about 120 (it compiles without spills there). A 64-
token tile over 16 warps is 4 rows a warp, so each thread holds 8 values of
a column group instead of 16 (8 threads a row instead of 4, still 64
contiguous bytes a warp's row piece).

    python3 lab/p16/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402


def _prefetch_asm(text):
    """The prefetch's inline asm in _prefetch_rows, as the module has it (one
    lane of each row's 4 starts the row, the next its scale word)."""
    at = text.index("def _prefetch_rows(")
    first = "    gl.inline_asm_elementwise(\n"
    a = text.index(first, at)
    return text[a : text.index("\n    )\n", a) + len("\n    )\n")]


def _by_lanes(asm):
    """The same asm under `if LANES == 4`, and for 8 lanes a row (LANES 8)
    under `else`, picking one lane of 8."""
    indent = "".join("    " + line + "\n" for line in asm.splitlines())
    return (
        "    if LANES == 4:\n"
        + indent
        + "    else:\n"
        + indent.replace("and.b32 l, l, 3", "and.b32 l, l, 7")
    )


def edits(text):
    """The edits that make p16 from text, the sm_90 module."""
    asm = _prefetch_asm(text)
    return [
        (
            "WS_NARROW_PRODUCER_WARPS = gl.constexpr(8)",
            "WS_NARROW_PRODUCER_WARPS = gl.constexpr(16)",
        ),
        (
            "WS_NARROW_PRODUCER_REGS = gl.constexpr(96)",
            "WS_NARROW_PRODUCER_REGS = gl.constexpr(80)",
        ),
        # The producer's layouts: 8 rows a warp where the tile has them, else 4.
        (
            """    gl.static_assert(
        BLOCK_T % (8 * gl.num_warps()) == 0, "every producer thread holds whole rows"
    )
    lay: gl.constexpr = gl.BlockedLayout([1, 16], [8, 4], [gl.num_warps(), 1], [1, 0])
""",
            """    gl.static_assert(
        BLOCK_T % (4 * gl.num_warps()) == 0, "every producer thread holds whole rows"
    )
    ROWS_W: gl.constexpr = 8 if BLOCK_T >= 8 * gl.num_warps() else 4
    LANES: gl.constexpr = 32 // ROWS_W
    VALS: gl.constexpr = 64 // LANES
    lay: gl.constexpr = gl.BlockedLayout(
        [1, VALS], [ROWS_W, LANES], [gl.num_warps(), 1], [1, 0]
    )
""",
        ),
        (
            """    ROPE_COLS: gl.constexpr = 16 if CLUSTER_MERGE else 8
    rope_lay: gl.constexpr = gl.BlockedLayout(
        [1, ROPE_COLS], [8, 4], [gl.num_warps(), 1], [1, 0]
    )
""",
            """    ROPE_COLS: gl.constexpr = 16 if CLUSTER_MERGE else 8
    gl.static_assert(not CLUSTER_MERGE or VALS == 16, "the cluster path's PTX")
    rope_lay: gl.constexpr = gl.BlockedLayout(
        [1, ROPE_COLS], [ROWS_W, LANES], [gl.num_warps(), 1], [1, 0]
    )
""",
        ),
        # The prefetch: one lane of each row's lanes starts the row, the next
        # its scale word.
        (
            "def _prefetch_rows(KV, idx, page_stride, page_size):",
            "def _prefetch_rows(KV, idx, page_stride, page_size, LANES: gl.constexpr = 4):",
        ),
        (asm, _by_lanes(asm)),
        (
            "        _prefetch_rows(kv_n, idx_next, stride_n, size_n)",
            "        _prefetch_rows(kv_n, idx_next, stride_n, size_n, LANES)",
        ),
        # The narrow kernel's launch bound: 20 warps in 64K registers.
        (
            "        dict(num_warps=num_warps, maxnreg=_WS_MAXNREG),\n"
            "        cluster=c.split_k if c.cluster_merge else 1,",
            "        dict(num_warps=num_warps, maxnreg=96 if c.block_h < 64 else _WS_MAXNREG),\n"
            "        cluster=c.split_k if c.cluster_merge else 1,",
        ),
    ]


def main():
    d = copies.base(HERE, commit="f33bd7e", name="base", target="sm90")
    text = open(os.path.join(d, copies.MODULE)).read()
    print(copies.edited(HERE, "p16", edits(text)))


if __name__ == "__main__":
    main()
