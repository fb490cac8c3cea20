"""Make lab/idx2's module copies (git-ignored) from the shipped sm_90
module (15e13e5): `base` as it is, and `idx2`, whose warp-specialised
producer (every `ws_*` and `wsc_*` kernel, the narrow 16-head one
included) loads each tile's indices two tiles ahead instead of one, while
its L2 prefetch of the rows stays one tile ahead.

lab/psplit found about 1.55 µs of the narrow producer's 1.87 µs a
64-token tile in neither its row loads, its stores, its fence nor its
conversions. One thing left in its loop is a round trip in series: the
prefetch of tile i + 1's rows needs tile i + 1's indices, loaded in the
same iteration. Here those indices were loaded one iteration earlier, so
the prefetch issues without waiting; each iteration loads tile i + 2's.
(lab/pf2 moved both the prefetch and the index load two tiles ahead, so
its prefetch still waited, for indices loaded in the same iteration.)

    python3 lab/idx2/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

COMMIT = "15e13e5"

# The producer's call for tile i + 1's source and its index load (with
# both caches), as lab/pf2 found them.
PF2 = copies.lab_module("pf2")
NEXT_CALL = PF2.NEXT_CALL
NEXT_LOAD = PF2.NEXT_LOAD
PLAIN_LOAD = (
    "            tok = start + (i + 1) * BLOCK_T + rows\n"
    "            idx_next = gl.load(idx_row + tok, mask=tok < end, other=-1)\n"
)
FIRST = (
    "        idx_next = gl.where(moved, idx_moved, gl.where(tok < end, idx_guess, -1))\n"
    "    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)\n"
)


def edits(text):
    at = text.index(NEXT_CALL) + len(NEXT_CALL)
    args = text[at : text.index("            )\n", at) + len("            )\n")]
    # The same arguments one indent level out, for the call before the loop.
    args0 = "".join(line[4:] + "\n" for line in args.splitlines())
    return [
        (
            FIRST,
            FIRST.splitlines(keepends=True)[0]
            + "    # lab/idx2: tile 1's indices too, before the loop.\n"
            "    if HAS_EXTRA:\n"
            "        _, _, row_1, left_1, _, _, _ = _gl_tile_source(\n"
            "            start + BLOCK_T,\n"
            + args0
            + "        ok_1 = (rows < left_1) & (start + BLOCK_T < end)\n"
            "        idx_after = gl.load(row_1 + rows, mask=ok_1, other=-1)\n"
            "    else:\n"
            "        tok = start + BLOCK_T + rows\n"
            "        idx_after = gl.load(idx_row + tok, mask=tok < end, other=-1)\n"
            + FIRST.splitlines(keepends=True)[1],
        ),
        (
            NEXT_LOAD,
            "            # lab/idx2: tile i + 1's indices came in last iteration;\n"
            "            # tile i + 2's load now.\n"
            "            _, _, row_a, left_a, _, _, _ = _gl_tile_source(\n"
            "                t0 + 2 * BLOCK_T,\n"
            + args
            + "            idx_next = idx_after\n"
            "            ok_a = (rows < left_a) & (t0 + 2 * BLOCK_T < end)\n"
            "            idx_after = gl.load(row_a + rows, mask=ok_a, other=-1)\n",
        ),
        (
            PLAIN_LOAD,
            "            # lab/idx2: tile i + 1's indices came in last iteration;\n"
            "            # tile i + 2's load now.\n"
            "            idx_next = idx_after\n"
            "            tok = start + (i + 2) * BLOCK_T + rows\n"
            "            idx_after = gl.load(idx_row + tok, mask=tok < end, other=-1)\n",
        ),
    ]


def main():
    d = copies.base(HERE, commit=COMMIT, name="base", target="sm90")
    text = open(os.path.join(d, copies.MODULE)).read()
    print(copies.edited(HERE, "idx2", edits(text)))


if __name__ == "__main__":
    main()
