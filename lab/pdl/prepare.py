"""Make lab/pdl's module copies (git-ignored) from the sm_90 module as it
was before the change shipped (6f4d4d9): `base` as it is; `late`, whose
narrow 16-head consumer signals `griddepcontrol.launch_dependents` as its
tile loop ends (before the epilogue normalises and stores the split's
partial); `early`, which signals it before the loop.

The split-K combine is launched with programmatic dependent launch, but
no decode kernel signals, so the combine may start only as the decode
programs exit (lab/fixed: 2.2-4.1 µs of every split call). With a signal
its programs may be placed while the decode's epilogues run, and wait in
`griddepcontrol.wait` until the partials are written.

    python3 lab/pdl/prepare.py     # lab/pdl/{base,late,early}
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

SIGNAL = '''

@gluon.jit
def _launch_dependents():
    """griddepcontrol.launch_dependents: the combine launched with
    programmatic dependent launch may be placed from now on."""
    gl.inline_asm_elementwise(
        "griddepcontrol.launch_dependents;\\nmov.u32 $0, $1;",
        "=r,r",
        [_per_thread(0)],
        dtype=gl.int32,
        is_pure=False,
        pack=1,
    )


@gluon.jit
def _ws_narrow_consumer('''
LOOP_END = """        mbarrier.arrive(empty.index(buf), count=1)
        m_i = m_new

    l_i = gl.sum(l_part, 0)
"""
LOOP_START = """    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)
    for i in range(n_tiles):
        buf = i % NUM_BUFS
        valid = _ws_tile_valid(
            start,
            i,
            end,
            base1,
            n0,
            n_virt,
            idx_row,
            idx1_row,
            offs_t,
            BLOCK_T,
            HAS_EXTRA,
        )
        mbarrier.wait(ready.index(buf), (i // NUM_BUFS) & 1)
        k = k_ring.index(buf)
        s = warpgroup_mma(
            k,
            q_smem.permute((1, 0)),
"""


def main():
    copies.base(HERE, commit="6f4d4d9", target="sm90")
    head = ("\n\n@gluon.jit\ndef _ws_narrow_consumer(", SIGNAL)
    copies.edited(
        HERE,
        "late",
        [
            head,
            (
                LOOP_END,
                LOOP_END.replace(
                    "    l_i = gl.sum", "    _launch_dependents()\n    l_i = gl.sum"
                ),
            ),
        ],
    )
    copies.edited(
        HERE,
        "early",
        [
            head,
            (
                LOOP_START,
                LOOP_START.replace(
                    "    for i in range(n_tiles):",
                    "    _launch_dependents()\n    for i in range(n_tiles):",
                ),
            ),
        ],
    )


if __name__ == "__main__":
    main()
