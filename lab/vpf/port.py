"""Port lab/vpf's `vpfs` into templates/ws_kernel.tmpl, in the product's
names (run from the repository root, then `make build kernels`): the split
kernel's value group starts each tile's rows into L2 two tiles ahead, and
its producer no longer does. Not applied in the committed tree: vpfs was
cross-compiled (no spills, the shipped shared memory) but not timed; the
timed copy, vpf, differs in its register split and in how the value group
finds a token's page (lab/vpf/NOTES.md).

    python3 lab/vpf/port.py          # edits templates/ws_kernel.tmpl
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import copies  # noqa: E402

# The tile prefetch, as lab/pfw's prefetch warps and lab/vpf's copies run it.
PF_TILE = copies.lab_module("pfw").PF_TILE
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TEMPLATE = os.path.join(ROOT, "templates", "ws_kernel.tmpl")

PRODUCER_PF = '''        pack=1,
    )


@gluon.jit
def _prefetch_pair_rows(KV, idx, page_stride, page_size):
    """_prefetch_rows from a layout with two lanes a token (the split
    kernel's value group: 4 warps, 16 rows each): the even lane starts the
    row and its scale word.

    The page comes from `bfind`, not _page_shift: the same code on the same
    scalar as the producer's, which the compiler works out once before the
    partitions fork and keeps live across their register hand-over (24-56 B
    of spills, lab/vpf).
    """
    valid = idx >= 0
    safe = gl.where(valid, idx, 0)
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
        "setp.ne.b32 p, $3, 0; setp.eq.and.u32 p, l, 0, p; "
        "@p cp.async.bulk.prefetch.L2.global [$1], 576; "
        "@p prefetch.global.L2 [$2]; mov.b32 $0, 0; }",
        "=r,l,l,r",
        [KV + data, KV + scales_at, valid.to(gl.int32)],
        dtype=gl.int32,
        is_pure=False,
        pack=1,
    )


''' + PF_TILE.replace("_pf_tile", "_prefetch_tile").replace(
    "_pf_rows", "_prefetch_pair_rows"
)
EDITS = [
    # The helpers, after _prefetch_rows (the first "pack=1," block ending
    # the file's _prefetch_rows is found by its unique neighbourhood).
    (
        """        [KV + data, KV + scales_at, valid.to(gl.int32)],
        dtype=gl.int32,
        is_pure=False,
        pack=1,
    )


@gluon.jit
def _swizzled(rows, cols):""",
        """        [KV + data, KV + scales_at, valid.to(gl.int32)],
        dtype=gl.int32,
        is_pure=False,
"""
        + PRODUCER_PF
        + """

@gluon.jit
def _swizzled(rows, cols):""",
    ),
    (
        '''    HAS_EXTRA: gl.constexpr,
    HAS_TOPK_LENGTH1: gl.constexpr,
):
    """Gather tiles of BLOCK_T tokens, dequantise them and fill the K ring.
''',
        '''    HAS_EXTRA: gl.constexpr,
    HAS_TOPK_LENGTH1: gl.constexpr,
    PREFETCH: gl.constexpr,
):
    """Gather tiles of BLOCK_T tokens, dequantise them and fill the K ring.
''',
    ),
    (
        """        # The next tile's rows start into L2 once its indices arrive (before
        # this tile's rows do), so its gather hits L2.
        _prefetch_rows(kv_n, idx_next, stride_n, size_n)
""",
        """        # The next tile's rows start into L2 once its indices arrive (before
        # this tile's rows do), so its gather hits L2. The split kernel's
        # value group does it there instead (_ws_values).
        if PREFETCH:
            _prefetch_rows(kv_n, idx_next, stride_n, size_n)
""",
    ),
    (
        """{{- /* The producer partition of every warp-specialised kernel: the same
arguments whatever its consumers, so that they are written once. */}}
""",
        """{{- /* The producer partition of every warp-specialised kernel: the same
arguments whatever its consumers, so that they are written once. Its dot
is PREFETCH: "True" where the producer starts the next tile's rows into L2
itself, "False" where the consumers do (_ws_split_kernel's value group). */}}
""",
    ),
    (
        """                    HAS_TOPK_LENGTH1,
                ),
            ),
{{- end}}
""",
        """                    HAS_TOPK_LENGTH1,
                    {{.}},
                ),
            ),
{{- end}}
""",
    ),
    ("    ml_ready,\n    TopkLength,\n", None),
    (
        """    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)
    for i in range(n_tiles):
        buf = i % NUM_BUFS
        mbarrier.wait(ready.index(buf), (i // NUM_BUFS) & 1)
        mbarrier.wait(p_full, i & 1)
""",
        None,
    ),
    ("                    ml_ready,\n                    TopkLength,\n", None),
]
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
TILE_ARGS = [
    "end",
    "base1",
    "n0",
    "n_virt",
    "idx_row",
    "idx1_row",
    "KV",
    "KV1",
    "page_stride",
    "page_stride1",
    "page_size",
    "page_size1",
    "pf_rows",
    "HAS_EXTRA",
]


def call(first, indent):
    pad = " " * indent
    inner = pad + "    "
    return (
        f"{pad}_prefetch_tile(\n{inner}{first},\n"
        + "".join(f"{inner}{a},\n" for a in TILE_ARGS)
        + f"{pad})\n"
    )


VALUES_LOOP = (
    """    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)
    # This group waits for P most of its time (lab/stall), so it starts the
    # rows into L2 for the producer: tile i + 2's once tile i is stored, as
    # far ahead of the producer's loads as its own prefetch was, with two
    # lanes a row (lab/vpf).
    pf_lay: gl.constexpr = gl.SliceLayout(
        1, gl.BlockedLayout([1, 1], [16, 2], [gl.num_warps(), 1], [1, 0])
    )
    pf_rows = gl.arange(0, BLOCK_T, layout=pf_lay)
    if n_tiles > 1:
"""
    + call("start + BLOCK_T", 8)
    + """    for i in range(n_tiles):
        buf = i % NUM_BUFS
        mbarrier.wait(ready.index(buf), (i // NUM_BUFS) & 1)
"""
    + call("start + (i + 2) * BLOCK_T", 8)
    + """        mbarrier.wait(p_full, i & 1)
"""
)


def main():
    with open(TEMPLATE) as f:
        text = f.read()
    replacements = {
        5: "    ml_ready,\n"
        + "".join(f"    {n},\n" for n in NEW)
        + "    TopkLength,\n",
        6: VALUES_LOOP,
        7: "                    ml_ready,\n"
        + "".join(f"                    {n},\n" for n in NEW)
        + "                    TopkLength,\n",
    }
    for k, (old, new) in enumerate(EDITS):
        new = replacements.get(k, new)
        count = text.count(old)
        if count != 1:
            raise SystemExit(f"edit {k}: {old[:60]!r} occurs {count} times")
        text = text.replace(old, new)
    # The split kernel's producer leaves the prefetch to its value group.
    sites = text.split('{{- template "ws_producer_partition"}}')
    if len(sites) != 4:
        raise SystemExit(f"{len(sites) - 1} producer partitions, not 3")
    flags = ["True", "False", "True"]
    text = sites[0] + "".join(
        f'{{{{- template "ws_producer_partition" "{flag}"}}}}' + rest
        for flag, rest in zip(flags, sites[1:])
    )
    with open(TEMPLATE, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
