"""Recreate the module copies lab/deep compares (not checked in): base/ is
commit bbc9f3c's sm_120 module; d2/ loads each tile's raw bytes two tiles
ahead of its store instead of one (two raw tiles in registers), d3/ three.
From the repository root:
    .venv/bin/python lab/deep/prepare.py
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import copies  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

LOOP = """    if NUM_BUFS == 1:
        for i in range(n_tiles):
"""
STORE = """            _pp_store_tile(raw, set_a)
            gl.thread_barrier()
            raw, idx = _pp_fetch(
                src, idx, t0 + 3 * BLOCK_T, end, HAS_EXTRA, BLOCK_T, lay, wlay
            )
    else:"""


def deeper(depth):
    """The edits that keep `depth` raw tiles in flight in the one-set loop."""
    ahead = "".join(f"""        raw{k}, idx = _pp_fetch(
            src, idx, start + {k + 1} * BLOCK_T, end, HAS_EXTRA, BLOCK_T, lay, wlay
        )
""" for k in range(2, depth + 1))
    shift = "".join(
        f"            raw{k - 1 if k > 2 else ''} = raw{k}\n"
        for k in range(2, depth + 1)
    )
    return [
        (
            LOOP,
            "    if NUM_BUFS == 1:\n" + ahead + "        for i in range(n_tiles):\n",
        ),
        (
            STORE,
            f"""            _pp_store_tile(raw, set_a)
            gl.thread_barrier()
{shift}            raw{depth}, idx = _pp_fetch(
                src, idx, t0 + {depth + 2} * BLOCK_T, end, HAS_EXTRA, BLOCK_T, lay, wlay
            )
    else:""",
        ),
    ]


copies.base(HERE, commit="bbc9f3c")
for d in (2, 3):
    copies.edited(HERE, f"d{d}", deeper(d))
