"""lab/l2pp: the pipelined (pp_*) tiles with the rows of the tile after
next started into L2, as the sm_90 producer's prefetch does (lab/vpf,
run 13 of NOTES.md's first table), which no pp tile has had.

The shipped loop issues tile i + 2's register loads after tile i's MMAs,
with ids loaded an iteration before; lab/ablate's `nogather` (every load
predicated off, the instructions kept) took 8-10% off the 64-head tile,
so the bytes' arrival is not all hidden behind one tile. Here the ids go
one tile further ahead, and each iteration also starts tile i + 3's rows
(six 128-byte lines a 576-byte row, and the scale word) into L2 with
`prefetch.global.L2`, one line a thread in a layout with the gather's
rows (no layout change), so that tile i + 2's loads, a tile later, find
them there. `prefetch.global.L2` exists on every target the pp tiles
serve (sm_80 to sm_120); the bulk prefetch would need sm_90 and 16-byte
aligned rows.

Copies (git-ignored), from the repository root:
  python3 lab/l2pp/prepare.py      # lab/l2pp/base (HEAD's sm_120 module), lab/l2pp/pf
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

HELPERS = '''

@gluon.jit
def _pp_prefetch(kv, idx, page_stride, page_size, BLOCK_T: gl.constexpr, NUM_WARPS: gl.constexpr):
    """Start the rows of token ids idx (six lines of each 576-byte row)
    and their scale words into L2; nothing waits for them. idx is in the
    gather's row layout (LANES lanes a row); the lines are laid out with
    the same rows, one or two a thread."""
    LANES: gl.constexpr = NUM_WARPS * 32 // BLOCK_T
    play: gl.constexpr = gl.BlockedLayout(
        [1, 8 // LANES], [32 // LANES, LANES], [NUM_WARPS, 1], [1, 0]
    )
    prow: gl.constexpr = gl.SliceLayout(1, play)
    valid = idx >= 0
    data, scales_at = _token_offsets(gl.where(valid, idx, 0), page_stride, page_size)
    data = gl.convert_layout(data, prow, assert_trivial=True)
    scales_at = gl.convert_layout(scales_at, prow, assert_trivial=True)
    ok = gl.convert_layout(valid, prow, assert_trivial=True)
    col = gl.arange(0, 8, layout=gl.SliceLayout(0, play))
    line = gl.minimum(col * 128, TOKEN_DATA_BYTES - 1)
    at = gl.where(
        col[None, :] < 6, data[:, None] + line[None, :], scales_at[:, None]
    )
    on = ok[:, None] & (col[None, :] < 7)
    gl.inline_asm_elementwise(
        "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p prefetch.global.L2 [$1]; mov.b32 $0, 0; }",
        "=r,l,r",
        [kv + at, on.to(gl.int32)],
        dtype=gl.int32,
        is_pure=False,
        pack=1,
    )


@gluon.jit
def _pp_fetch_pf(
    src,
    idx,
    far,
    t_next,
    end,
    HAS_EXTRA: gl.constexpr,
    BLOCK_T: gl.constexpr,
    NUM_WARPS: gl.constexpr,
    lay: gl.constexpr,
    wlay: gl.constexpr,
):
    """_pp_fetch a tile further ahead: the loads of the tile before t_next
    (ids idx), the rows of the tile at t_next (ids far, loaded an iteration
    ago) started into L2, and the ids of the tile after it: (raw tile, ids
    of the tile at t_next, ids of the tile after it)."""
    if HAS_EXTRA:
        _, _, _, _, kv, stride, size = _pp_source(src, t_next - BLOCK_T)
        raw = _pp_raw(kv, idx, stride, size, lay, wlay)
        _, _, _, _, kv1, stride1, size1 = _pp_source(src, t_next)
        _pp_prefetch(kv1, far, stride1, size1, BLOCK_T, NUM_WARPS)
    else:
        raw = _pp_raw(src[0], idx, src[7], src[9], lay, wlay)
        _pp_prefetch(src[0], far, src[7], src[9], BLOCK_T, NUM_WARPS)
    offs = gl.arange(0, BLOCK_T, layout=gl.SliceLayout(1, lay))
    return raw, far, _pp_indices(src, t_next + BLOCK_T, end, HAS_EXTRA, offs)
'''

ANCHOR = """    offs = gl.arange(0, BLOCK_T, layout=gl.SliceLayout(1, lay))
    return raw, _pp_indices(src, t_next, end, HAS_EXTRA, offs)
"""

PROLOGUE = """    raw, idx = _pp_fetch(
        src, idx, start + 2 * BLOCK_T, end, HAS_EXTRA, BLOCK_T, lay, wlay
    )
"""


def loop_call(k):
    return f"""raw, idx = _pp_fetch(
                src, idx, t0 + {k} * BLOCK_T, end, HAS_EXTRA, BLOCK_T, lay, wlay
            )"""


def pf_call(k):
    return f"""raw, idx, far = _pp_fetch_pf(
                src,
                idx,
                far,
                t0 + {k} * BLOCK_T,
                end,
                HAS_EXTRA,
                BLOCK_T,
                NUM_WARPS,
                lay,
                wlay,
            )"""


def replace(text, old, new, count):
    if text.count(old) != count:
        raise SystemExit(f"{old[:60]!r} occurs {text.count(old)} times, not {count}")
    return text.replace(old, new)


def main():
    base = copies.base(HERE, commit="HEAD")
    with open(os.path.join(base, copies.MODULE)) as f:
        text = f.read()
    text = replace(text, ANCHOR, ANCHOR + HELPERS, 1)
    text = replace(
        text,
        PROLOGUE,
        PROLOGUE
        + "    far = _pp_indices(src, start + 3 * BLOCK_T, end, HAS_EXTRA, gl.arange(0, BLOCK_T, layout=rows))\n",
        1,
    )
    text = replace(text, loop_call(3), pf_call(3), 2)
    text = replace(text, loop_call(4), pf_call(4), 1)
    copies.written(HERE, "pf", text)


if __name__ == "__main__":
    main()
