"""Make lab/vpf's module copies (git-ignored) from the shipped sm_90 module
(HEAD): `base` as it is, and `vpf`, whose 64-head role-split kernel
(`ws_h64_*`, `_ws_split_kernel`) has its value group start tiles' rows
into L2 instead of its producer.

lab/stall's samples of that kernel (B 128, topk 2048): the 4 producer
warps pace it (they wait for a buffer 2% of their time), and 22% of their
time is the L2 prefetch's lane loop (`cp.async.bulk.prefetch.L2` takes a
uniform address, so ptxas issues it once a lane: 16 rows a warp a tile),
with the next tile's index load it waits for. The value group waits for
P 60% of its time. In `vpf` the value group, once it sees tile i stored,
loads tile i + 2's indices and prefetches its rows (two lanes a row, 16
rows a warp) before it waits for P; before its loop it prefetches tile 1.
That is as far ahead of the producer's loads as the producer's own
prefetch was. The producer of this kernel no longer prefetches; the
cluster-merged (`wsc_*`) and narrow kernels keep theirs. lab/pfw's
prefetch warps did the same for the narrow kernel, in a partition of
their own (which the 64-head kernel's registers do not allow).

    python3 lab/vpf/prepare.py     # lab/vpf/{base,vpf,vpfr,vpfs}
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

pfw = copies.lab_module("pfw")

# What the value group gets beside its arguments: in vpf (as timed) the
# index rows the kernel works out before the fork; in vpfr the kernel's
# arguments, from which it works them out itself.
NEW = (
    "KV",
    "idx_row",
    "KV1",
    "idx1_row",
    "page_stride",
    "page_size",
    "page_stride1",
    "page_size1",
)
NEW_R = (
    "KV",
    "Indices",
    "stride_idx_batch",
    "KV1",
    "Indices1",
    "stride_idx1_batch",
    "page_stride",
    "page_size",
    "page_stride1",
    "page_size1",
)
VALUES_SIG = "    ml_ready,\n    TopkLength,\n"
ROWS_INSIDE = """    pf_rows = gl.arange(0, BLOCK_T, layout=pf_lay)
    # From the kernel's arguments, not from the rows worked out before the
    # fork, which would stay live across its register hand-over.
    idx_row = Indices + pid_b * stride_idx_batch
    idx1_row = Indices1 + pid_b * stride_idx1_batch
"""


def values_sig(names):
    return (
        "    ml_ready,\n" + "".join(f"    {n},\n" for n in names) + "    TopkLength,\n"
    )


def values_call(names):
    pad = " " * 20
    return (
        f"{pad}ml_ready,\n"
        + "".join(f"{pad}{n},\n" for n in names)
        + f"{pad}TopkLength,\n"
    )


VALUES_LOOP = """    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)
    for i in range(n_tiles):
        buf = i % NUM_BUFS
        mbarrier.wait(ready.index(buf), (i // NUM_BUFS) & 1)
        mbarrier.wait(p_full, i & 1)
"""
PF_ARGS = """            end,
            base1,
            n0,
            n_virt,
            idx_row,
            idx1_row,
            KV,
            KV1,
            page_stride,
            page_stride1,
            page_size,
            page_size1,
            pf_rows,
            HAS_EXTRA,
        )
"""
VALUES_LOOP_PF = (
    """    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)
    # Two lanes a row, the even one prefetching it (_vpf_rows).
    pf_lay: gl.constexpr = gl.SliceLayout(
        1, gl.BlockedLayout([1, 1], [16, 2], [gl.num_warps(), 1], [1, 0])
    )
    pf_rows = gl.arange(0, BLOCK_T, layout=pf_lay)
    if n_tiles > 1:
        _vpf_tile(
            start + BLOCK_T,
"""
    + PF_ARGS.replace("            ", "    " * 3)
    + """    for i in range(n_tiles):
        buf = i % NUM_BUFS
        mbarrier.wait(ready.index(buf), (i // NUM_BUFS) & 1)
        _vpf_tile(
            start + (i + 2) * BLOCK_T,
"""
    + PF_ARGS
    + """        mbarrier.wait(p_full, i & 1)
"""
)
VALUES_CALL = "                    ml_ready,\n                    TopkLength,\n"
VALUES_DEF = "@gluon.jit\ndef _ws_values(\n"
HELPERS = '''@gluon.jit
def _vpf_rows(KV, idx, page_stride, page_size):
    """Start the rows of idx (and their scale words) into L2 from the even
    lane of each pair that holds a token: nothing waits for them."""
    valid = idx >= 0
    data, scales_at = _ws_token_offsets(gl.where(valid, idx, 0), page_stride, page_size)
    gl.inline_asm_elementwise(
        "{ .reg .pred p; .reg .u32 l; mov.u32 l, %laneid; and.b32 l, l, 1; "
        "setp.ne.b32 p, $3, 0; setp.eq.and.u32 p, l, 0, p; "
        "@p cp.async.bulk.prefetch.L2.global [$1], 576; "
        "@p prefetch.global.L2 [$2]; mov.b32 $0, 0; }",
        "=r,l,l,r",
        [KV + data, KV + scales_at, valid.to(gl.int32)],
        dtype=gl.int32,
        is_pure=False,
        pack=1,
    )


''' + pfw.PF_TILE.replace("_pf_", "_vpf_") + "\n\n"
NARROW_CALL_END = pfw.TAIL + "        [WS_NARROW_PRODUCER_WARPS],\n"


def edits(rows_inside=False):
    names = NEW_R if rows_inside else NEW
    loop = VALUES_LOOP_PF
    if rows_inside:
        loop = loop.replace(
            "    pf_rows = gl.arange(0, BLOCK_T, layout=pf_lay)\n", ROWS_INSIDE
        )
    return [
        (pfw.PRODUCER_SIG, pfw.PRODUCER_SIG_PF),
        (pfw.PREFETCH, pfw.PREFETCH_PF),
        (
            pfw.call_end("WS_PRODUCER_WARPS"),
            pfw.call_end_pf("WS_PRODUCER_WARPS", False),
        ),
        (
            pfw.call_end("4, WS_PRODUCER_WARPS"),
            pfw.call_end_pf("4, WS_PRODUCER_WARPS", True),
        ),
        (NARROW_CALL_END, pfw.call_end_pf("WS_NARROW_PRODUCER_WARPS", False)),
        (VALUES_SIG, values_sig(names)),
        (VALUES_LOOP, loop),
        (VALUES_CALL, values_call(names)),
        (VALUES_DEF, HELPERS + VALUES_DEF),
    ]


SPLIT_REGS = (
    "        [4, WS_PRODUCER_WARPS],\n        [WS_VALUE_REGS, WS_PRODUCER_REGS],\n"
)
# vpf, as timed: the value group at 168 registers, the producer (without
# its prefetch) at 112. Per cache it still spills 24-52 B (none as the
# whole call), as does vpfr: the shipped 160 and 120, with the index rows
# worked out inside the value group from the kernel's arguments.
SPLIT_REGS_PF = "        [4, WS_PRODUCER_WARPS],\n        [168, 112],\n"


# vpfs: vpf at the shipped 160 and 120 registers, with the page's shift
# from `bfind` in the value group. The
# shipped _page_shift there is the producer's own code on the same scalar,
# so the compiler works it out once, before the fork, and its values stay
# live across the register hand-over: the spills of vpf and vpfr.
OFFSETS = """    data, scales_at = _ws_token_offsets(gl.where(valid, idx, 0), page_stride, page_size)
    gl.inline_asm_elementwise(
        "{ .reg .pred p; .reg .u32 l; mov.u32 l, %laneid; and.b32 l, l, 1; "
"""
OFFSETS_BFIND = """    safe = gl.where(valid, idx, 0)
    # Not _page_shift: the same code as the producer's on the same scalar,
    # which the compiler would work out once before the fork and keep live
    # across its register hand-over (spills).
    shift = gl.inline_asm_elementwise(
        "bfind.u32 $0, $1;",
        "=r,r",
        [safe * 0 + page_size],
        dtype=gl.int32,
        is_pure=True,
        pack=1,
    )
    data, scales_at = _page_offsets(
        safe >> shift, safe & (page_size - 1), page_stride, page_size
    )
    gl.inline_asm_elementwise(
        "{ .reg .pred p; .reg .u32 l; mov.u32 l, %laneid; and.b32 l, l, 1; "
"""


def main():
    copies.base(HERE, commit="HEAD", target="sm90")
    copies.edited(HERE, "vpf", edits() + [(SPLIT_REGS, SPLIT_REGS_PF)])
    copies.edited(HERE, "vpfr", edits(rows_inside=True))
    copies.edited(HERE, "vpfs", edits() + [(OFFSETS, OFFSETS_BFIND)])


if __name__ == "__main__":
    main()
