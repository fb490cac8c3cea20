"""Which targets take a warp-specialised Gluon kernel with mma.sync
consumers: a producer partition (4 warps, 40 registers by setmaxnreg)
storing bf16 tiles into shared memory and an mbarrier pair handing them to
a default partition (4 warps) that runs mma_v2 on them. For each compute
capability given, in a process of its own (LLVM aborts the process when it
cannot select an instruction): Triton 3.6's compile (which runs the
target's ptxas, ptxas-blackwell from sm_100), and the SASS's USETMAXREG,
HMMA and SYNCS (mbarrier) counts, through calib's helpers. No GPU needed.

    python3 lab/wsprobe/probe.py 80,86,89,90,120
"""

import os
import subprocess
import sys

ROOT = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
)
sys.path.insert(0, os.path.join(ROOT, "calib"))
import triton  # noqa: E402
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import mma_v2
from triton.experimental.gluon.language.nvidia.hopper import mbarrier
from triton.experimental.gluon._runtime import GluonASTSource

import sass as S  # noqa: E402
from calibrate import compile_logged, ptxas_usage  # noqa: E402


@gluon.jit
def _consumer(buf, ready, empty, Out, n):
    mma: gl.constexpr = gl.NVMMADistributedLayout(
        version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8]
    )
    dot_a: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
    dot_b: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=2)
    acc = gl.zeros([64, 64], gl.float32, mma)
    for i in range(n):
        mbarrier.wait(ready, i & 1)
        a = buf.load(dot_a)
        b = buf.permute((1, 0)).load(dot_b)
        acc = mma_v2(a, b, acc)
        mbarrier.arrive(empty, count=1)
    rows = gl.arange(0, 64, layout=gl.SliceLayout(1, mma))
    cols = gl.arange(0, 64, layout=gl.SliceLayout(0, mma))
    gl.store(Out + rows[:, None] * 64 + cols[None, :], acc)


@gluon.jit
def _producer(buf, ready, empty, X, n):
    lay: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    rows = gl.arange(0, 64, layout=gl.SliceLayout(1, lay))
    cols = gl.arange(0, 64, layout=gl.SliceLayout(0, lay))
    for i in range(n):
        x = gl.load(X + i * 4096 + rows[:, None] * 64 + cols[None, :])
        mbarrier.wait(empty, (i & 1) ^ 1)
        buf.store(x)
        mbarrier.arrive(ready, count=1)


@gluon.jit
def k(X, Out, n):
    buf = gl.allocate_shared_memory(
        gl.bfloat16,
        [64, 64],
        gl.NVMMASharedLayout.get_default_for([64, 64], gl.bfloat16),
    )
    ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(ready, count=1)
    mbarrier.init(empty, count=1)
    gl.warp_specialize(
        [
            (_consumer, (buf, ready, empty, Out, n)),
            (_producer, (buf, ready, empty, X, n)),
        ],
        [4],
        [40],
    )


S.BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")


def probe(cap):
    src = GluonASTSource(
        fn=k, signature={"X": "*bf16", "Out": "*fp32", "n": "i32"}, constexprs={}
    )
    try:
        # Triton runs the target's ptxas itself: a refusal of either lands here.
        ck, log = compile_logged(src, cap, dict(num_warps=4))
    except Exception as e:
        print(f"sm_{cap}: refused: {' '.join(str(e).split())[-200:]}")
        return
    ptx = ck.asm["ptx"]
    use = ptxas_usage(ptx, cap, log)
    sass = "\n".join(S.disassemble(ck.asm["cubin"])[0])
    print(
        f"sm_{cap}: {use['arch']} compiles; setmaxnreg in PTX {ptx.count('setmaxnreg')}, "
        f"SASS USETMAXREG {sass.count('SETMAXREG')}, HMMA {sass.count('HMMA')}, "
        f"SYNCS {sass.count('SYNCS')}, {use['regs']} registers"
    )


def main():
    caps = sys.argv[1].split(",")
    if len(caps) == 1:
        probe(int(caps[0]))
        return 0
    for cap in caps:
        r = subprocess.run(
            [sys.executable, __file__, cap], capture_output=True, text=True
        )
        lines = (r.stdout + r.stderr).strip().splitlines()
        line = next((l for l in lines if l.startswith(f"sm_{cap}:")), None)
        if line is None:
            line = f"sm_{cap}: the compiler aborted: {lines[-1][:200] if lines else r.returncode}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
