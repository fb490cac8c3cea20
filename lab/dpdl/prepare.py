"""Make lab/dpdl's module copies (git-ignored) from the shipped sm_90 module
(5e46c1e): `base` as it is, and `dpdl`, whose narrow 16-head decode kernel
is launched with programmatic dependent launch and waits in
`griddepcontrol.wait` before anything it does reads or writes global
memory.

A split call's combine is already a dependent launch of its decode (and
the decode signals it). The decode itself is not: it is placed only after
the kernel before it (in a model, whatever ran last; in the harness's
graph, the previous call's combine) has exited and its memory flushed.
lab/chain found its programs starting 1.47 µs after the previous kernel's
start, a trivial kernel's 0.96, and lab/carveout that this is not a
shared-memory reconfiguration. As a dependent launch its programs may be
placed as the previous kernel's programs exit, and set up their shared
memory and barriers meanwhile; the wait then returns once that kernel is
complete and its writes visible, so nothing is read early. Every global
access of the kernel (Q's TMA load, the indices, the rows, the partials
and the outputs) comes after the wait: the worker partitions start only
once the default warps reach warp_specialize, after it.

    python3 lab/dpdl/prepare.py     # lab/dpdl/{base,dpdl}
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

COMMIT = "5e46c1e"

WAIT = '''

@gluon.jit
def _wait_dependencies():
    """lab/dpdl: griddepcontrol.wait, a no-op unless the kernel was launched
    as a dependent grid; then it returns once the grid before it has
    completed and its memory is visible."""
    gl.inline_asm_elementwise(
        "griddepcontrol.wait;\\nmov.u32 $0, $1;",
        "=r,r",
        [_per_thread(0)],
        dtype=gl.int32,
        is_pure=False,
        pack=1,
    )


@gluon.jit
def _ws_narrow_kernel('''

PROLOGUE = (
    "    mbarrier.init(q_ready, count=1)\n"
    "    fence_async_shared()\n"
    "    q_row = pid_b.to(gl.int32) * num_heads + pid_h * BLOCK_H\n"
)

OPTIONS = "        dict(num_warps=num_warps, maxnreg=_WS_MAXNREG),\n"


def main():
    copies.base(HERE, commit=COMMIT, target="sm90")
    copies.edited(
        HERE,
        "dpdl",
        [
            ("\n\n@gluon.jit\ndef _ws_narrow_kernel(", WAIT),
            (
                PROLOGUE,
                PROLOGUE.replace(
                    "    q_row =", "    _wait_dependencies()\n    q_row =", 1
                ),
            ),
            (
                OPTIONS,
                "        dict(\n"
                "            num_warps=num_warps,\n"
                "            maxnreg=_WS_MAXNREG,\n"
                "            # lab/dpdl: the narrow kernel as a dependent launch.\n"
                "            launch_pdl=_pdl(plan.device)\n"
                "            and c.block_h == 16\n"
                "            and not c.cluster_merge,\n"
                "        ),\n",
            ),
        ],
    )


if __name__ == "__main__":
    main()
