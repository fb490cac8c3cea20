"""Make lab/ahead's module copies (git-ignored) from the shipped sm_90
module (a42b63e): `base` as it is, and `p2` and `p3`, whose
warp-specialised producer starts each tile's rows into L2 two (p2) or
three (p3) tiles ahead, with the indices for that prefetch loaded one
iteration before it (P + 1 tiles ahead), so no prefetch waits for an index
load issued in its own iteration.

Neither half alone was tried with the other: lab/idx2 loaded indices two
ahead with the prefetch one ahead (no change: the prefetch distance left
at one tile), lab/pf2 prefetched two ahead with those indices loaded in the
same iteration (1.04-1.16x slower: every prefetch still waited a DRAM
round trip for its indices, mid-iteration, in front of the dequantisation).
Only the narrow 16-head kernel prefetches in its producer (PREFETCH); the
64-head kernels' value group does it and is unchanged here.

    python3 lab/ahead/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

COMMIT = "a42b63e"

HEAD = (
    "    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)\n"
    "    for i in range(n_tiles):\n"
    "        buf = i % NUM_BUFS\n"
    "        idx = idx_next\n"
)
PREFETCH = (
    "        if PREFETCH:\n"
    "            _prefetch_rows(kv_n, idx_next, stride_n, size_n)\n"
)
ARGS = (
    "base1, len0, n_virt, idx_row, idx1_row, KV, KV1, "
    "page_stride, page_stride1, page_size, page_size1"
)

HELPERS = '''@gluon.jit
def _ahead_idx(t, end, rows, base1, len0, n_virt, idx_row, idx1_row, KV, KV1,
               page_stride, page_stride1, page_size, page_size1,
               HAS_EXTRA: gl.constexpr):
    """lab/ahead: the token ids of the tile at virtual token t (-1 past end)."""
    if HAS_EXTRA:
        _, _, row, left, _, _, _ = _gl_tile_source(
            t, base1, len0, n_virt, idx_row, idx1_row, KV, KV1,
            page_stride, page_stride1, page_size, page_size1, True)
        return gl.load(row + rows, mask=(rows < left) & (t < end), other=-1)
    else:
        tok = t + rows
        return gl.load(idx_row + tok, mask=tok < end, other=-1)


@gluon.jit
def _ahead_prefetch(t, idx, base1, len0, n_virt, idx_row, idx1_row, KV, KV1,
                    page_stride, page_stride1, page_size, page_size1,
                    HAS_EXTRA: gl.constexpr):
    """lab/ahead: _prefetch_rows for the tile at virtual token t."""
    if HAS_EXTRA:
        _, _, _, _, kv, stride, size = _gl_tile_source(
            t, base1, len0, n_virt, idx_row, idx1_row, KV, KV1,
            page_stride, page_stride1, page_size, page_size1, True)
        _prefetch_rows(kv, idx, stride, size)
    else:
        _prefetch_rows(KV, idx, page_stride, page_size)


'''


def edits(p):
    names = [f"idx_a{k}" for k in range(p + 1)]  # tiles i .. i + p
    pre = "".join(
        f"    {names[k]} = _ahead_idx(start + {k} * BLOCK_T, end, rows, {ARGS}, HAS_EXTRA)\n"
        for k in range(1, p + 1)
    )
    head = (
        "    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)\n"
        f"    # lab/ahead: indices of tiles 1..{p} before the loop.\n"
        + pre
        + f"    {names[0]} = idx_next\n"
        "    for i in range(n_tiles):\n"
        "        buf = i % NUM_BUFS\n"
        f"        idx = {names[0]}\n"
        f"        # lab/ahead: tile i + {p + 1}'s indices, for the prefetch next iteration.\n"
        f"        idx_new = _ahead_idx(start + (i + {p + 1}) * BLOCK_T, end, rows, {ARGS}, HAS_EXTRA)\n"
    )
    first = "".join(
        f"                _ahead_prefetch(start + {k} * BLOCK_T, {names[k]}, {ARGS}, HAS_EXTRA)\n"
        for k in range(1, p)
    )
    pf = (
        "        if PREFETCH:\n"
        "            if i == 0:\n"
        + first
        + f"            _ahead_prefetch(start + (i + {p}) * BLOCK_T, {names[p]}, {ARGS}, HAS_EXTRA)\n"
        f"        {', '.join(names)} = {', '.join(names[1:] + ['idx_new'])}\n"
    )
    return [
        ("@gluon.jit\ndef _ws_producer(", HELPERS + "@gluon.jit\ndef _ws_producer("),
        (HEAD, head),
        (PREFETCH, pf),
        # The old one-ahead index loads, now unused.
        (
            "            idx_next = gl.load(row_n + rows, mask=next_ok, other=-1)\n",
            "            # lab/ahead: indices come from idx_new.\n",
        ),
        (
            "            idx_next = gl.load(idx_row + tok, mask=tok < end, other=-1)\n",
            "            # lab/ahead: indices come from idx_new.\n",
        ),
    ]


def main():
    d = copies.base(HERE, commit=COMMIT, name="base", target="sm90")
    print(d)
    for p in (2, 3):
        print(copies.edited(HERE, f"p{p}", edits(p)))


if __name__ == "__main__":
    main()
