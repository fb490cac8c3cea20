"""Make lab/pfw's module copies (git-ignored) from the shipped sm_90 module
(HEAD): `base` as it is, and `pfw`, whose narrow 16-head kernel
(`ws_h16_*`) gets a third partition of one warp that does nothing but
start tiles' rows into L2.

lab/stall's samples put 14% of the narrow producer's time in the L2
prefetch's lane loop (`cp.async.bulk.prefetch.L2` takes its address in a
uniform register, so ptxas issues it once a lane) and 14% waiting for the
next tile's indices, which that prefetch needs in the same iteration.
In `pfw` the producer does neither: the prefetch warp loads each tile's
indices itself and issues the prefetches, PF_LEAD tiles ahead of the
tile the producer stores (1: as far ahead as the producer's own prefetch
was). It paces itself on the K ring's barriers: it waits for tile i's
`ready` and then arrives on tile i's `empty`, which counts 2 (the
consumer and the prefetch warp), so the producer can never lap it and it
never waits on a phase that has passed.

    python3 lab/pfw/prepare.py     # lab/pfw/{base,pfw,pfw2,pfw3,pfw4,pfw0}
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

PRODUCER_SIG = '''    HAS_EXTRA: gl.constexpr,
    HAS_TOPK_LENGTH1: gl.constexpr,
):
    """Gather tiles of BLOCK_T tokens, dequantise them and fill the K ring.
'''
PRODUCER_SIG_PF = '''    HAS_EXTRA: gl.constexpr,
    HAS_TOPK_LENGTH1: gl.constexpr,
    PF_WARP: gl.constexpr,
):
    """Gather tiles of BLOCK_T tokens, dequantise them and fill the K ring.
'''
PREFETCH = "        _prefetch_rows(kv_n, idx_next, stride_n, size_n)\n"
PREFETCH_PF = (
    "        if not PF_WARP:\n"
    "            _prefetch_rows(kv_n, idx_next, stride_n, size_n)\n"
)
TAIL = """                    HAS_TOPK_LENGTH1,
                ),
            ),
        ],
"""


def call_end(warps):
    return TAIL + f"        [{warps}],\n"


def call_end_pf(warps, flag):
    return (
        TAIL.replace(
            "HAS_TOPK_LENGTH1,\n", f"HAS_TOPK_LENGTH1,\n                    {flag},\n"
        )
        + f"        [{warps}],\n"
    )


# The prefetch partition's arguments, as the narrow kernel passes them and
# as _ws_prefetcher (and pfw0's _ws_idle) takes them.
PREFETCHER_ARGS = (
    "ready",
    "empty",
    "KV",
    "idx_row",
    "TopkLength",
    "pid_b",
    "pid_s",
    "topk",
    "page_stride",
    "page_size",
    "KV1",
    "idx1_row",
    "TopkLength1",
    "topk1",
    "page_stride1",
    "page_size1",
)
PREFETCHER_CONSTEXPRS = (
    "HAS_TOPK_LENGTH",
    "BLOCK_T",
    "SPLIT_K",
    "NUM_BUFS",
    "HAS_EXTRA",
    "HAS_TOPK_LENGTH1",
)
PREFETCHER_CALL = "".join(
    f"{' ' * 20}{a},\n" for a in PREFETCHER_ARGS + PREFETCHER_CONSTEXPRS
)
PREFETCHER_SIGNATURE = "".join(f"    {a},\n" for a in PREFETCHER_ARGS) + "".join(
    f"    {a}: gl.constexpr,\n" for a in PREFETCHER_CONSTEXPRS
)


NARROW_INIT = """        mbarrier.init(empty.index(b), count=1)
    mbarrier.init(q_ready, count=1)
    fence_async_shared()
    q_row = pid_b.to(gl.int32) * num_heads + pid_h * BLOCK_H
"""
NARROW_INIT_PF = NARROW_INIT.replace(
    "count=1)\n    mbarrier.init(q_ready", "count=2)\n    mbarrier.init(q_ready", 1
)

NARROW_CALL = TAIL + """        [WS_NARROW_PRODUCER_WARPS],
        [WS_NARROW_PRODUCER_REGS],
    )
"""
NARROW_CALL_PF = (
    TAIL.replace(
        "HAS_TOPK_LENGTH1,\n", "HAS_TOPK_LENGTH1,\n                    True,\n"
    ).replace(
        "        ],\n",
        """            (
                _ws_prefetcher,
                (
"""
        + PREFETCHER_CALL
        + """                ),
            ),
        ],
""",
    )
    + """        [WS_NARROW_PRODUCER_WARPS, PF_WARPS],
        [WS_NARROW_PRODUCER_REGS, PF_REGS],
    )
"""
)

NARROW_DEF = "@gluon.jit\ndef _ws_narrow_kernel(\n"
# The tile prefetch every prefetch partition runs (lab/vpf's value group
# too, renamed): the tile's source, its indices, its rows into L2.
PF_TILE = '''@gluon.jit
def _pf_tile(
    t0,
    end,
    base1,
    len0,
    n_virt,
    idx_row,
    idx1_row,
    KV,
    KV1,
    page_stride,
    page_stride1,
    page_size,
    page_size1,
    rows,
    HAS_EXTRA: gl.constexpr,
):
    """Prefetch the tile at virtual token t0 (nothing past end)."""
    _, _, row, left, kv, stride, size = _gl_tile_source(
        t0,
        base1,
        len0,
        n_virt,
        idx_row,
        idx1_row,
        KV,
        KV1,
        page_stride,
        page_stride1,
        page_size,
        page_size1,
        HAS_EXTRA,
    )
    ok = (rows < left) & (t0 + rows < end)
    idx = gl.load(row + rows, mask=ok, other=-1)
    _pf_rows(kv, idx, stride, size)
'''
PREFETCHER = (
    '''PF_LEAD = gl.constexpr({lead})
PF_WARPS = gl.constexpr({warps})
PF_REGS = gl.constexpr({regs})


@gluon.jit
def _pf_rows(KV, idx, page_stride, page_size):
    """Start the rows of idx (and their scale words) into L2, one lane a
    token: nothing waits for them."""
    valid = idx >= 0
    data, scales_at = _ws_token_offsets(gl.where(valid, idx, 0), page_stride, page_size)
    gl.inline_asm_elementwise(
        "{{ .reg .pred p; setp.ne.b32 p, $3, 0; "
        "@p cp.async.bulk.prefetch.L2.global [$1], 576; "
        "@p prefetch.global.L2 [$2]; mov.b32 $0, 0; }}",
        "=r,l,l,r",
        [KV + data, KV + scales_at, valid.to(gl.int32)],
        dtype=gl.int32,
        is_pure=False,
        pack=1,
    )


'''
    + PF_TILE
    + '''

@gluon.jit
def _ws_prefetcher(
{signature}):
    """Start the rows of tile i + 1 + PF_LEAD into L2 once tile i is stored,
    then let tile i's buffer go (empty counts this arrive too)."""
    lay: gl.constexpr = gl.BlockedLayout(
        [BLOCK_T // (32 * gl.num_warps())], [32], [gl.num_warps()], [0]
    )
    rows = gl.arange(0, BLOCK_T, layout=lay)
    start, end, base1, len0, n_virt = _split_range(
        TopkLength,
        TopkLength1,
        pid_b,
        pid_s,
        topk,
        topk1,
        HAS_TOPK_LENGTH,
        HAS_EXTRA,
        HAS_TOPK_LENGTH1,
        BLOCK_T,
        SPLIT_K,
    )
    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)
    for t in gl.static_range(1, PF_LEAD + 1):
        _pf_tile(
            start + t * BLOCK_T,
            end,
            base1,
            len0,
            n_virt,
            idx_row,
            idx1_row,
            KV,
            KV1,
            page_stride,
            page_stride1,
            page_size,
            page_size1,
            rows,
            HAS_EXTRA,
        )
    for i in range(n_tiles):
        buf = i % NUM_BUFS
        mbarrier.wait(ready.index(buf), (i // NUM_BUFS) & 1)
        _pf_tile(
            start + (i + 1 + PF_LEAD) * BLOCK_T,
            end,
            base1,
            len0,
            n_virt,
            idx_row,
            idx1_row,
            KV,
            KV1,
            page_stride,
            page_stride1,
            page_size,
            page_size1,
            rows,
            HAS_EXTRA,
        )
        mbarrier.arrive(empty.index(buf), count=1)


'''
)


LAUNCH = "        dict(num_warps=num_warps, maxnreg=_WS_MAXNREG),\n"
# Triton rounds the partitions' warps up to whole warp groups (16 warps,
# 512 threads), so the narrow kernel launches at 128 registers a thread.
LAUNCH_PF = (
    "        dict(\n"
    "            num_warps=num_warps,\n"
    "            maxnreg=128 if kernel is _ws_narrow_kernel else _WS_MAXNREG,\n"
    "        ),\n"
)


# pfw3 and pfw4: the prefetch warp lets tile i's buffer go as soon as it
# sees tile i stored (so the producer never waits for its prefetches, and
# still cannot lap it), and loads the indices of the tile it prefetches
# next before it waits.
LOOP = "    for i in range(n_tiles):\n"
LOOP_EARLY = """    nxt = _pf_indices(
        start + (1 + PF_LEAD) * BLOCK_T,
        end,
        base1,
        len0,
        n_virt,
        idx_row,
        idx1_row,
        KV,
        KV1,
        page_stride,
        page_stride1,
        page_size,
        page_size1,
        rows,
        HAS_EXTRA,
    )
    for i in range(n_tiles):
        buf = i % NUM_BUFS
        mbarrier.wait(ready.index(buf), (i // NUM_BUFS) & 1)
        mbarrier.arrive(empty.index(buf), count=1)
        idx, kv, stride, size = nxt
        nxt = _pf_indices(
            start + (i + 2 + PF_LEAD) * BLOCK_T,
            end,
            base1,
            len0,
            n_virt,
            idx_row,
            idx1_row,
            KV,
            KV1,
            page_stride,
            page_stride1,
            page_size,
            page_size1,
            rows,
            HAS_EXTRA,
        )
        _pf_rows(kv, idx, stride, size)


"""
# pfw3-pfw5's helper: _pf_tile that returns the indices and the cache
# instead of prefetching them, so the loop can load them a tile early.
PF_INDICES = (
    PF_TILE.replace("def _pf_tile(", "def _pf_indices(")
    .replace(
        "Prefetch the tile at virtual token t0 (nothing past end).",
        "The tile at virtual token t0's indices (-1 past end) and its cache.",
    )
    .replace(
        "    idx = gl.load(row + rows, mask=ok, other=-1)\n"
        "    _pf_rows(kv, idx, stride, size)\n",
        "    return gl.load(row + rows, mask=ok, other=-1), kv, stride, size\n",
    )
    + "\n\n@gluon.jit\ndef _ws_prefetcher(\n"
)


def early(text):
    """The prefetch warp's loop as pfw3 and pfw4 run it."""
    assert text.count(LOOP) == 1 and text.endswith("\n\n\n")
    text = text[: text.index(LOOP)] + LOOP_EARLY
    return text.replace("@gluon.jit\ndef _ws_prefetcher(\n", PF_INDICES)


def edits(lead, warps, regs, early_release=False):
    prefetcher = PREFETCHER.format(
        lead=lead, warps=warps, regs=regs, signature=PREFETCHER_SIGNATURE
    )
    if early_release:
        prefetcher = early(prefetcher)
    return [
        (LAUNCH, LAUNCH_PF),
        (PRODUCER_SIG, PRODUCER_SIG_PF),
        (PREFETCH, PREFETCH_PF),
        (call_end("WS_PRODUCER_WARPS"), call_end_pf("WS_PRODUCER_WARPS", False)),
        (
            call_end("4, WS_PRODUCER_WARPS"),
            call_end_pf("4, WS_PRODUCER_WARPS", False),
        ),
        (NARROW_INIT, NARROW_INIT_PF),
        (NARROW_CALL, NARROW_CALL_PF),
        (NARROW_DEF, prefetcher + NARROW_DEF),
    ]


COPIES = {
    "pfw": (1, 1, 48),
    "pfw2": (2, 1, 48),
    "pfw3": (1, 1, 48, True),
    "pfw4": (2, 1, 48, True),
}


IDLE = (
    "PF_WARPS = gl.constexpr(1)\nPF_REGS = gl.constexpr(48)\n\n\n"
    "@gluon.jit\ndef _ws_idle(\n" + PREFETCHER_SIGNATURE + "):\n    pass\n\n\n"
)


def idle():
    """pfw0, the control: pfw's launch (a one-warp third partition, so 16
    warps at 128 registers) with a partition that does nothing, beside the
    shipped producer and barriers."""
    out = []
    for old, new in edits(1, 1, 48):
        if old is NARROW_INIT:
            continue
        if old is NARROW_CALL:
            new = new.replace(
                "                    True,\n", "                    False,\n"
            )
            new = new.replace("_ws_prefetcher,", "_ws_idle,")
        if old is NARROW_DEF:
            new = IDLE + NARROW_DEF
        out.append((old, new))
    return out


# pfw5: pfw4 with 4 prefetch warps (the launch is 16 warps either way),
# 16 rows a warp: cp.async.bulk.prefetch takes a uniform address, so a
# warp issues its rows one by one, and one warp's 64 a tile came late.
ROWS_1 = """    lay: gl.constexpr = gl.BlockedLayout(
        [BLOCK_T // (32 * gl.num_warps())], [32], [gl.num_warps()], [0]
    )
"""
ROWS_4 = """    # Two lanes a row, the even one prefetching it (_pf_rows).
    gl.static_assert(BLOCK_T == 16 * gl.num_warps(), "16 rows a prefetch warp")
    lay: gl.constexpr = gl.SliceLayout(
        1, gl.BlockedLayout([1, 1], [16, 2], [gl.num_warps(), 1], [1, 0])
    )
"""
ASM_1 = '"{{ .reg .pred p; setp.ne.b32 p, $3, 0; "'
ASM_4 = (
    '"{{ .reg .pred p; .reg .u32 l; mov.u32 l, %laneid; and.b32 l, l, 1; "\n'
    '        "setp.ne.b32 p, $3, 0; setp.eq.and.u32 p, l, 0, p; "'
)


def four_warps():
    out = []
    for old, new in edits(2, 4, 48, True):
        if old is NARROW_DEF:
            assert new.count(ROWS_1) == 1 and new.count(ASM_1.replace("{{", "{")) == 1
            new = new.replace(ROWS_1, ROWS_4).replace(
                ASM_1.replace("{{", "{"), ASM_4.replace("{{", "{")
            )
        out.append((old, new))
    return out


def main():
    copies.base(HERE, commit="HEAD", target="sm90")
    for name, args in COPIES.items():
        copies.edited(HERE, name, edits(*args))
    copies.edited(HERE, "pfw0", idle())
    copies.edited(HERE, "pfw5", four_warps())


if __name__ == "__main__":
    main()
