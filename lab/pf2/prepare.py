"""Make lab/pf2's module copies (git-ignored) from 5616a4b's sm_90 module:
`base` as it is, and `pf2`, whose warp-specialised producer (every `ws_*`
and `wsc_*` kernel, the narrow 16-head one included) starts each tile's
rows into L2 two tiles ahead instead of one.

lab/pace found the narrow kernel's producer alone as fast with 16 warps,
or with two tiles in flight in its registers, as with 8 warps and one:
about 1.85 µs a 64-token tile. What none of those changed is how far ahead
the rows start from DRAM: the producer's loads hit L2 because
`_prefetch_rows` started them one tile earlier, so one tile's rows an SM
(37 KB) are in flight from DRAM at a time. Here iteration i prefetches
tile i + 2 (and iteration 0 tile 1 as well), loading tile i + 2's indices
for it; the gather keeps its one-ahead indices.

    python3 lab/pf2/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

COMMIT = "5616a4b"

# The producer's call for tile i + 1's source, whose arguments after its t
# the prefetch's call for tile i + 2 repeats.
NEXT_CALL = (
    "            _, _, row_n, left_n, kv_n, stride_n, size_n = _gl_tile_source(\n"
    "                t0 + BLOCK_T,\n"
)
NEXT_LOAD = (
    "            next_ok = (rows < left_n) & (t0 + BLOCK_T < end)\n"
    "            idx_next = gl.load(row_n + rows, mask=next_ok, other=-1)\n"
)


def edits(text):
    at = text.index(NEXT_CALL) + len(NEXT_CALL)
    args = text[at : text.index("            )\n", at) + len("            )\n")]
    return [
        (
            NEXT_LOAD,
            NEXT_LOAD
            + "            # lab/pf2: tile i + 2's indices, for its L2 prefetch.\n"
            "            _, _, row_p, left_p, kv_p, stride_p, size_p = _gl_tile_source(\n"
            "                t0 + 2 * BLOCK_T,\n"
            + args
            + "            pf_ok = (rows < left_p) & (t0 + 2 * BLOCK_T < end)\n"
            "            idx_pf = gl.load(row_p + rows, mask=pf_ok, other=-1)\n",
        ),
        (
            "            tok = start + (i + 1) * BLOCK_T + rows\n"
            "            idx_next = gl.load(idx_row + tok, mask=tok < end, other=-1)\n",
            "            tok = start + (i + 1) * BLOCK_T + rows\n"
            "            idx_next = gl.load(idx_row + tok, mask=tok < end, other=-1)\n"
            "            # lab/pf2: tile i + 2's indices, for its L2 prefetch.\n"
            "            kv_p = KV\n"
            "            stride_p = page_stride\n"
            "            size_p = page_size\n"
            "            tok_p = tok + BLOCK_T\n"
            "            idx_pf = gl.load(idx_row + tok_p, mask=tok_p < end, other=-1)\n",
        ),
        (
            "        _prefetch_rows(kv_n, idx_next, stride_n, size_n)\n",
            "        if i == 0:\n"
            "            _prefetch_rows(kv_n, idx_next, stride_n, size_n)\n"
            "        _prefetch_rows(kv_p, idx_pf, stride_p, size_p)\n",
        ),
    ]


def main():
    d = copies.base(HERE, commit=COMMIT, name="base", target="sm90")
    text = open(os.path.join(d, copies.MODULE)).read()
    print(copies.edited(HERE, "pf2", edits(text)))


if __name__ == "__main__":
    main()
