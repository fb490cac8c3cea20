"""Make lab/ppl's module copies (git-ignored) from f33bd7e's sm_90 module:
`base` as it is; `pp`, whose narrow kernel's producer (8 warps, now at 120
registers) issues each tile's loads one iteration before it stores the
tile, carrying it as fp8 tensors and dequantising through fp32; `ppx`, the
same dequantised by the cluster kernels' PTX; `ppw`, the tile carried as
32-bit words and dequantised by that PTX; `ppc` and `ppwc`, pp and ppw
beside lab/c2n's two consumer groups (NOTES.md has which compiled and ran).

The producer's chain a tile is its loads' latency, then the dequantisation
and stores: its loads for tile i go out at the top of iteration i and the
stores wait for them (lab/wst's nc probe: the producer alone takes about
2.1 µs of the 2.5 µs tile). More producer warps (lab/p16) leave that chain
as it is. Here tile 0's loads go out before the loop and each iteration
issues tile i + 1's before it stores tile i, so two tiles are in flight in
the producer's registers (one row a thread, 38 registers' worth of bytes a
tile) and
the chain is the longer of the two, not their sum. Only where the producer
has 8 warps (the narrow kernel); the other kernels keep their loop.

    python3 lab/ppl/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "c2n"))

import copies  # noqa: E402
import prepare as c2n  # noqa: E402  (lab/c2n/prepare.py)

COMMIT = "f33bd7e"

# The arguments that say where a tile comes from (_gl_tile_source's after t).
TILE_ARGS = (
    "base1, len0, n_virt, idx_row, idx1_row, KV, KV1, page_stride, page_stride1, "
    "page_size, page_size1"
)

# Where a tile comes from, and its indices; black lays them out.
SOURCE_HELPERS = f"""@gluon.jit
def _ppl_source(t, {TILE_ARGS}, HAS_EXTRA: gl.constexpr):
    \"\"\"The cache, page stride and page size of the tile at virtual token t.\"\"\"
    if HAS_EXTRA:
        _, _, _, _, kv, stride, size = _gl_tile_source(t, {TILE_ARGS}, True)
        return kv, stride, size
    else:
        return KV, page_stride, page_size


@gluon.jit
def _ppl_index(t, end, rows, {TILE_ARGS}, HAS_EXTRA: gl.constexpr):
    \"\"\"The indices of the tile at virtual token t (-1 past the split).\"\"\"
    if HAS_EXTRA:
        _, _, row, left, _, _, _ = _gl_tile_source(t, {TILE_ARGS}, True)
        return gl.load(row + rows, mask=(rows < left) & (t < end), other=-1)
    else:
        tok = t + rows
        return gl.load(idx_row + tok, mask=tok < end, other=-1)


"""

HELPERS = (
    '''def _words_operands(ptx):
    """_DEQUANT_STORE_PTX's operands renumbered for 4 elements an invocation
    (pack 4 of int32 words) instead of 16 (pack 16 of fp8 bytes): the row
    offset $4 stays, the scale word $20 becomes $8, group data $36-$63
    become $12-$39."""

    def renumber(m):
        n = int(m.group(1))
        return "$" + str(n if n <= 4 else 8 if n == 20 else n - 24)

    return re.sub(r"\\$(\\d+)", renumber, ptx)


_DEQUANT_STORE_PTX_W = gl.constexpr(_words_operands(_dequant_store_ptx(64 * 128)))


@gluon.jit
def _dequant_store_w(row_at, words, w0, w1, w2, w3, w4, w5, w6):
    """_dequant_store on a tile carried as 32-bit words, 4 a group a thread."""
    gl.inline_asm_elementwise(
        _DEQUANT_STORE_PTX_W,
        "=r," * 4 + "r," * 4 + "l," * 4 + "r," * 27 + "r",
        [row_at[:, None], words[:, None], w0, w1, w2, w3, w4, w5, w6],
        dtype=gl.int32,
        is_pure=False,
        pack=4,
    )


@gluon.jit
def _ppl_gather_w(kv, idx, stride, size, wcols, wl: gl.constexpr, rope_lay: gl.constexpr):
    """Issue one tile's loads as 32-bit words (4 a group a thread), its scale
    words and rope."""
    idx = gl.convert_layout(idx, gl.SliceLayout(1, wl))
    valid = idx >= 0
    idx = gl.where(valid, idx, 0)
    data, scales_at = _token_offsets(idx, stride, size)
    words = gl.load(
        (kv + scales_at).to(gl.pointer_type(gl.int64)), mask=valid, other=0
    )
    ok = valid[:, None]
    w = (kv + data).to(gl.pointer_type(gl.int32))[:, None] + wcols[None, :]
    return (
        words,
        gl.load(w, mask=ok, other=0),
        gl.load(w + 16, mask=ok, other=0),
        gl.load(w + 32, mask=ok, other=0),
        gl.load(w + 48, mask=ok, other=0),
        gl.load(w + 64, mask=ok, other=0),
        gl.load(w + 80, mask=ok, other=0),
        gl.load(w + 96, mask=ok, other=0),
        _load_rope(kv, data, valid, rope_lay),
    )


'''
    + SOURCE_HELPERS
    + '''@gluon.jit
def _ppl_gather(kv, idx, stride, size, cols, rope_lay: gl.constexpr):
    """Issue one tile's loads: its scale words, 7 nope groups and rope."""
    valid = idx >= 0
    idx = gl.where(valid, idx, 0)
    data, scales_at = _token_offsets(idx, stride, size)
    words = gl.load(
        (kv + scales_at).to(gl.pointer_type(gl.int64)), mask=valid, other=0
    )
    ok = valid[:, None]
    nope = kv + data[:, None] + cols[None, :]
    return (
        words,
        gl.load(nope, mask=ok, other=0.0),
        gl.load(nope + 64, mask=ok, other=0.0),
        gl.load(nope + 128, mask=ok, other=0.0),
        gl.load(nope + 192, mask=ok, other=0.0),
        gl.load(nope + 256, mask=ok, other=0.0),
        gl.load(nope + 320, mask=ok, other=0.0),
        gl.load(nope + 384, mask=ok, other=0.0),
        _load_rope(kv, data, valid, rope_lay),
    )


'''
)

SRC = TILE_ARGS + ", HAS_EXTRA,"

STORES = {
    # Dequantised through fp32, as the shipped producer does.
    "fp32": """            words = cur[0]
            at = at_group + buf * (8 * GROUP)
            _st_shared_group(at, _dequant(cur[1], words, 0))
            _st_shared_group(at + GROUP, _dequant(cur[2], words, 1))
            _st_shared_group(at + 2 * GROUP, _dequant(cur[3], words, 2))
            _st_shared_group(at + 3 * GROUP, _dequant(cur[4], words, 3))
            _st_shared_group(at + 4 * GROUP, _dequant(cur[5], words, 4))
            _st_shared_group(at + 5 * GROUP, _dequant(cur[6], words, 5))
            _st_shared_group(at + 6 * GROUP, _dequant(cur[7], words, 6))
""",
    # The cluster kernels' PTX (one mul.bf16x2 a pair of values), on the
    # fp8 tensors: 16 values of a group a thread, as the 8-warp layout has.
    "ptx": """            _dequant_store(
                buf * (8 * GROUP) + rows * 128,
                cur[0],
                cur[1],
                cur[2],
                cur[3],
                cur[4],
                cur[5],
                cur[6],
                cur[7],
            )
""",
    # The same PTX on the tile carried as 32-bit words (4 a group a thread).
    "words": """            _dequant_store_w(
                buf * (8 * GROUP) + rows_w * 128,
                cur[0],
                cur[1],
                cur[2],
                cur[3],
                cur[4],
                cur[5],
                cur[6],
                cur[7],
            )
""",
}


def pipelined_loop(mode):
    """The pipelined loop's text, dequantising as `mode` says."""
    src = SRC
    if mode == "words":
        gather = "_ppl_gather_w"
        extra = "wcols, wl, rope_lay"
        setup = (
            "        wl: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [gl.num_warps(), 1], [1, 0])\n"
            "        wcols = gl.arange(0, 16, layout=gl.SliceLayout(0, wl))\n"
            "        rows_w = gl.arange(0, BLOCK_T, layout=gl.SliceLayout(1, wl))\n"
        )
    else:
        gather, extra, setup = "_ppl_gather", "cols, rope_lay", ""
    return f"""{setup}        kv, stride, size = _ppl_source(
            start,
            {src}
        )
        cur = {gather}(kv, idx_next, stride, size, {extra})
        idx_next = _ppl_index(
            start + BLOCK_T,
            end,
            rows,
            {src}
        )
        for i in range(n_tiles):
            buf = i % NUM_BUFS
            t1 = start + (i + 1) * BLOCK_T
            idx_after = _ppl_index(
                t1 + BLOCK_T,
                end,
                rows,
                {SRC}
            )
            kv_n, stride_n, size_n = _ppl_source(
                t1,
                {SRC}
            )
            nxt = {gather}(kv_n, idx_next, stride_n, size_n, {extra})
            kv_a, stride_a, size_a = _ppl_source(
                t1 + BLOCK_T,
                {SRC}
            )
            _prefetch_rows(kv_a, idx_after, stride_a, size_a)
            mbarrier.wait(empty.index(buf), ((i // NUM_BUFS) & 1) ^ 1)
{STORES[mode]}            _st_shared_group(at_rope + buf * (8 * GROUP), cur[8])
            fence_async_shared()
            gl.thread_barrier()
            mbarrier.arrive(ready.index(buf), count=1)
            cur = nxt
            idx_next = idx_after
"""


def pipelined(text, producer_regs, mode="fp32"):
    """text with the narrow kernel's producer loop pipelined."""
    start = text.index(
        "    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)\n    for i in range(n_tiles):\n        buf = i % NUM_BUFS\n        idx = idx_next\n"
    )
    end_marker = "        mbarrier.arrive(ready.index(buf), count=1)\n"
    end = text.index(end_marker, start) + len(end_marker)
    loop = text[start:end]
    head, body = loop.split("\n", 1)
    indented = "".join(
        "    " + line + "\n" if line else "\n" for line in body.splitlines()
    )
    new = (
        head
        + "\n    # lab/ppl: two tiles in flight where the producer has 8 warps.\n"
        + "    PIPE: gl.constexpr = (not CLUSTER_MERGE) and gl.num_warps() == 8\n"
        + "    if PIPE:\n"
        + pipelined_loop(mode)
        + "    else:\n"
        + indented
    )
    text = text[:start] + new + text[end:]
    text = text.replace(
        "@gluon.jit\ndef _ws_producer(",
        HELPERS + "@gluon.jit\ndef _ws_producer(",
        1,
    )
    old = "WS_NARROW_PRODUCER_REGS = gl.constexpr(96)"
    assert text.count(old) == 1
    return text.replace(old, f"WS_NARROW_PRODUCER_REGS = gl.constexpr({producer_regs})")


def main():
    d = copies.base(HERE, commit=COMMIT, name="base", target="sm90")
    text = open(os.path.join(d, copies.MODULE)).read()
    copies.written(HERE, "pp", pipelined(text, int(os.environ.get("PP_REGS", "120"))))
    # ppx: pp dequantising through the cluster kernels' PTX.
    copies.written(
        HERE, "ppx", pipelined(text, int(os.environ.get("PPX_REGS", "120")), "ptx")
    )
    # ppw: pp carrying the tile as 32-bit words, dequantised by the PTX.
    copies.written(
        HERE, "ppw", pipelined(text, int(os.environ.get("PPW_REGS", "120")), "words")
    )
    # ppc: lab/c2n's edits (two consumer groups), then the pipelined producer.
    ppc = text
    edits = c2n.kernel_edits(ppc) + [
        (
            "@gluon.jit\ndef _ws_narrow_kernel(",
            c2n.group_function(ppc) + "@gluon.jit\ndef _ws_narrow_kernel(",
        )
    ]
    for old, new in edits:
        if "WS_NARROW_PRODUCER_REGS = gl.constexpr(80)" in new:
            continue  # ppc sets the producer's registers itself
        assert ppc.count(old) == 1, old[:60]
        ppc = ppc.replace(old, new)
    group = int(os.environ.get("PPC_GROUP", "144"))
    ppc = ppc.replace(
        f"[{c2n.GROUP_REGS}, WS_NARROW_PRODUCER_REGS]",
        f"[{group}, WS_NARROW_PRODUCER_REGS]",
    )
    copies.written(HERE, "ppc", pipelined(ppc, int(os.environ.get("PPC_REGS", "104"))))
    # ppwc: the two groups beside ppw's producer.
    ppwc = ppc.replace(
        f"[{group}, WS_NARROW_PRODUCER_REGS]",
        f"[{int(os.environ.get('PPWC_GROUP', '144'))}, WS_NARROW_PRODUCER_REGS]",
    )
    copies.written(
        HERE, "ppwc", pipelined(ppwc, int(os.environ.get("PPWC_REGS", "96")), "words")
    )


if __name__ == "__main__":
    main()
