"""lab/pf0's module copies (git-ignored) from cca6828's sm_90 module:
`base` as it is, and `pf0`, whose warp-specialised producer (_ws_producer:
the narrow 16-head kernel's, the 64-head role split's and the cluster
merge's) starts its first tile's rows into L2 with the bulk prefetch as
soon as their indices arrive, before its loop issues that tile's loads.

Every later tile's rows are prefetched one iteration ahead; the first
tile's are not, so its loads go to DRAM at the rate one SM's loads in
flight allow (lab/gatherrate: about 22 GB/s an SM with 8 warps, against
47 from L2). lab/chain's stamps at B 16 (one tile a program) put the first
tile's rows 3 µs after its indices.

    python3 lab/pf0/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

LOOP = (
    "    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)\n"
    "    for i in range(n_tiles):\n"
    "        buf = i % NUM_BUFS\n"
    "        idx = idx_next\n"
)
FIRST = (
    "    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)\n"
    "    # lab/pf0: the first tile's rows into L2 before its loads are issued.\n"
    "    if PREFETCH:\n"
    "        if HAS_EXTRA:\n"
    "            _, _, _, _, kv0, stride0, size0 = _gl_tile_source(\n"
    "                start,\n"
    "                base1,\n"
    "                len0,\n"
    "                n_virt,\n"
    "                idx_row,\n"
    "                idx1_row,\n"
    "                KV,\n"
    "                KV1,\n"
    "                page_stride,\n"
    "                page_stride1,\n"
    "                page_size,\n"
    "                page_size1,\n"
    "                True,\n"
    "            )\n"
    "        else:\n"
    "            kv0 = KV\n"
    "            stride0 = page_stride\n"
    "            size0 = page_size\n"
    "        _prefetch_rows(kv0, idx_next, stride0, size0)\n"
    "    for i in range(n_tiles):\n"
    "        buf = i % NUM_BUFS\n"
    "        idx = idx_next\n"
)


def main():
    copies.base(HERE, commit="cca6828", name="base", target="sm90")
    copies.edited(HERE, "pf0", [(LOOP, FIRST)])


if __name__ == "__main__":
    main()
