"""Make lab/lp's module copies (git-ignored) from the shipped sm_90 module
(15e13e5): `base` as it is, and `lp`, whose warp-specialised producer
(every `ws_*` and `wsc_*` kernel) starts the next tile's rows into L2 with
plain `prefetch.global.L2`, one a 128-byte line (6 a 576-byte row, spread
over the quad's lanes, and the scale word's line), instead of one
`cp.async.bulk.prefetch.L2` of 576 bytes a row.

lab/psplit's ncnold kept only the index loads and this prefetch, and still
took 1.55 µs a 64-token tile. If that is the bulk prefetches' issue rate
(64 bulk operations a tile an SM, each through the SM's copy engine)
rather than DRAM, line prefetches from the load units are the cheaper way
to start the same bytes. lab/psplit's `ncnoldlp` is the same change in
the producer-alone probe.

    python3 lab/lp/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

COMMIT = "15e13e5"

BULK = (
    '        "setp.eq.and.u32 q, l, 0, p; '
    '@q cp.async.bulk.prefetch.L2.global [$1], 576; "\n'
    '        "setp.eq.and.u32 q, l, 1, p; @q prefetch.global.L2 [$2]; '
    'mov.b32 $0, 0; }",\n'
)
# Lane 0 of the quad: the lines of the row's bytes 0 and 128; lane 1: 256
# and 384; lane 2: 512 and 575 (a 576-byte row spans 5 lines, or 6 where
# it starts more than 64 bytes into one); lane 3: the scale word.
LINES = (
    '        "setp.eq.and.u32 q, l, 0, p; '
    '@q prefetch.global.L2 [$1]; @q prefetch.global.L2 [$1+128]; "\n'
    '        "setp.eq.and.u32 q, l, 1, p; '
    '@q prefetch.global.L2 [$1+256]; @q prefetch.global.L2 [$1+384]; "\n'
    '        "setp.eq.and.u32 q, l, 2, p; '
    '@q prefetch.global.L2 [$1+512]; @q prefetch.global.L2 [$1+575]; "\n'
    '        "setp.eq.and.u32 q, l, 3, p; @q prefetch.global.L2 [$2]; '
    'mov.b32 $0, 0; }",\n'
)


def line_prefetch(text):
    """text with _prefetch_rows issuing line prefetches (lab/psplit uses it)."""
    assert text.count(BULK) == 1, "the bulk prefetch's PTX moved"
    return text.replace(BULK, LINES)


def main():
    d = copies.base(HERE, commit=COMMIT, name="base", target="sm90")
    text = open(os.path.join(d, copies.MODULE)).read()
    copies.written(HERE, "lp", line_prefetch(text))


if __name__ == "__main__":
    main()
