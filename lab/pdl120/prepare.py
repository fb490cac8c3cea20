"""Make lab/pdl120's module copies (git-ignored) from the sm_120 module at
d8afa36, whose pipelined kernels never signal their combine: `base` as it
is, and `late`, whose pipelined kernel signals
`griddepcontrol.launch_dependents` as its tile loop ends in every split
(any BLOCK_H) where the GPU has the instruction (a PDL constexpr the host
sets from the device, as shipped later for 16-head tiles only).

    python3 lab/pdl120/prepare.py     # lab/pdl120/{base,late}
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

HELPERS = """@gluon.jit
def _per_thread(value):
    lay: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    return gl.full([32 * gl.num_warps()], value, gl.int32, lay)


@gluon.jit
def _launch_dependents():
    gl.inline_asm_elementwise(
        "griddepcontrol.launch_dependents;\\nmov.u32 $0, $1;",
        "=r,r",
        [_per_thread(0)],
        dtype=gl.int32,
        is_pure=False,
        pack=1,
    )


@gluon.jit
def _pp_source(src, t0):"""

EDITS = [
    ("@gluon.jit\ndef _pp_source(src, t0):", HELPERS),
    (
        '    HAS_SINK: gl.constexpr,\n):\n    """Scores and P.V',
        '    HAS_SINK: gl.constexpr,\n    PDL: gl.constexpr,\n):\n    """Scores and P.V',
    ),
    (
        "    # The program ids again rather than values kept alive across the loop,\n",
        "    if PDL and SPLIT_K > 1:\n        _launch_dependents()\n"
        "    # The program ids again rather than values kept alive across the loop,\n",
    ),
    (
        "        Q_REG_GROUPS=_pp_q_reg_groups(c),\n",
        "        Q_REG_GROUPS=_pp_q_reg_groups(c),\n        PDL=_pdl(plan.device),\n",
    ),
]


def main():
    copies.base(HERE, commit="d8afa36", target="sm120")
    copies.edited(HERE, "late", EDITS)


if __name__ == "__main__":
    main()
