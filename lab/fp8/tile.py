"""The 64-head, 32-token tile's MMA phase with e4m3 operands, for its SASS
(no GPU): what lab/bounds' `pp_tile` issues with bf16 operands, redone the
way lab/fp8/precision.py's hi/lo scheme would issue it, with the same 8
warps laid 4 x 2 and Q's first two column groups in registers.

- Scores: for each of the 7 nope groups, Q's hi and lo e4m3 terms against
  K's stored bytes ([32, 64] e4m3, read with the reduction contiguous),
  into a fresh accumulator scaled by the tokens' group factors; the rope
  group in bf16 as shipped.
- P.V: P goes once through shared memory to the A operand layout (fp32),
  then for each nope group times the tokens' factors, as hi and lo e4m3,
  against the tile's bytes stored transposed ([64, 32] e4m3); the rope
  group's P in bf16.

The values are meaningless; the loop is what ptxas is given. Prints, for
sm_120 and sm_90, the per-tile counts of the opcodes that matter (QMMA is
sm_120's e4m3 mma.sync; sm_90 has none and converts each operand to f16 for
an HMMA), registers, spills and shared memory, beside the shipped bf16
tile (lab/bounds/bench.py's `_pp_tile_kernel`).

    .venv/torch/bin/python lab/fp8/tile.py   # lab/bounds/bench.py imports torch
"""

import os
import sys

ROOT = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
)
sys.path.insert(0, os.path.join(ROOT, "calib"))
sys.path.insert(0, os.path.join(ROOT, "lab"))
sys.path.insert(0, os.path.join(ROOT, "lab", "bounds"))
from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402
from triton.experimental.gluon.language.nvidia.ampere import mma_v2  # noqa: E402

import collections  # noqa: E402

import narrowcompile  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "lab", "sk"))
import bench  # noqa: E402  (lab/bounds: _fill, and the shipped tile's MMA phase)
import loop  # noqa: E402  (lab/sk: the tile loop in the SASS)

F8 = gl.float8e4nv


@gluon.jit
def _alloc7(dtype: gl.constexpr, R: gl.constexpr, C: gl.constexpr):
    lay: gl.constexpr = gl.NVMMASharedLayout.get_default_for([R, C], dtype)
    return (
        gl.allocate_shared_memory(dtype, [R, C], lay),
        gl.allocate_shared_memory(dtype, [R, C], lay),
        gl.allocate_shared_memory(dtype, [R, C], lay),
        gl.allocate_shared_memory(dtype, [R, C], lay),
        gl.allocate_shared_memory(dtype, [R, C], lay),
        gl.allocate_shared_memory(dtype, [R, C], lay),
        gl.allocate_shared_memory(dtype, [R, C], lay),
    )


@gluon.jit
def _tile8_kernel(Out, Scales, ITERS, VTILE: gl.constexpr):
    BLOCK_H: gl.constexpr = 64
    T: gl.constexpr = 32
    mma: gl.constexpr = gl.NVMMADistributedLayout(
        version=[2, 0], warps_per_cta=[4, 2], instr_shape=[16, 8]
    )
    a8: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=4)
    b8: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=4)
    a16: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
    b16: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=2)
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [8, 1], [1, 0])
    # Q: nope groups 2-6 as hi and lo in shared memory, 0-1 in registers;
    # the rope group bf16.
    q_hi = _alloc7(F8, BLOCK_H, 64)
    q_lo = _alloc7(F8, BLOCK_H, 64)
    q_rope = gl.allocate_shared_memory(
        gl.bfloat16,
        [BLOCK_H, 64],
        gl.NVMMASharedLayout.get_default_for([BLOCK_H, 64], gl.bfloat16),
    )
    k8 = _alloc7(F8, T, 64)
    v8t = _alloc7(F8, 64, T)
    rope = gl.allocate_shared_memory(
        gl.bfloat16, [T, 64], gl.NVMMASharedLayout.get_default_for([T, 64], gl.bfloat16)
    )
    p_smem = gl.allocate_shared_memory(
        gl.float32, [BLOCK_H, T], gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0])
    )
    for g in gl.static_range(7):
        bench._fill(q_hi[g], 3.0, blk)
        bench._fill(q_lo[g], 0.25, blk)
        bench._fill(k8[g], 2.0, blk)
        bench._fill(v8t[g], 1.5, blk)
    bench._fill(q_rope, 0.01, blk)
    bench._fill(rope, 0.02, blk)
    gl.thread_barrier()
    qh0 = q_hi[0].load(a8)
    ql0 = q_lo[0].load(a8)
    qh1 = q_hi[1].load(a8)
    ql1 = q_lo[1].load(a8)
    # The tokens' 7 group factors, in the score columns' layout and in the
    # P operand's (as the kernel would take them from the tile's scale words).
    tok = gl.arange(0, T, layout=gl.SliceLayout(0, mma))
    tok_a = gl.arange(0, T, layout=gl.SliceLayout(0, a8))
    z = gl.zeros([BLOCK_H, 64], gl.float32, mma)
    accs = (z, z, z, z, z, z, z, z)
    zs = gl.zeros([BLOCK_H, T], gl.float32, mma)
    m_i = gl.full([BLOCK_H], -1.0e30, gl.float32, gl.SliceLayout(1, mma))
    l2 = zs
    for _ in range(ITERS):
        s = gl.zeros([BLOCK_H, T], gl.float32, mma)
        for g in gl.static_range(7):
            kb = k8[g].permute((1, 0)).load(b8)
            if g == 0:
                sg = mma_v2(ql0, kb, mma_v2(qh0, kb, zs))
            elif g == 1:
                sg = mma_v2(ql1, kb, mma_v2(qh1, kb, zs))
            else:
                sg = mma_v2(q_lo[g].load(a8), kb, mma_v2(q_hi[g].load(a8), kb, zs))
            f = gl.load(Scales + g * T + tok)
            s = s + sg * f[None, :]
        s = mma_v2(q_rope.load(a16), rope.permute((1, 0)).load(b16), s)
        m_new = gl.maximum(m_i, gl.max(s, 1))
        alpha = gl.exp2(m_i - m_new)
        p = gl.exp2(s - m_new[:, None])
        l2 = l2 * alpha[:, None] + p
        m_i = m_new
        # P to the A operand layout once, through shared memory.
        gl.thread_barrier()
        p_smem.store(p)
        gl.thread_barrier()
        pa = p_smem.load(a8)
        a = gl.convert_layout(alpha, gl.SliceLayout(1, mma))[:, None]
        new = ()
        if VTILE:
            # One P for every group: V's bytes were re-quantised to the
            # tile's largest exponent of each group when stored, and each
            # group's accumulator takes that factor (a scalar a group).
            p8 = pa * 256.0
            hi = p8.to(F8)
            lo = (p8 - hi.to(gl.float32)).to(F8)
            for g in gl.static_range(7):
                vb = v8t[g].permute((1, 0)).load(b8)
                beta = gl.load(Scales + g)
                new = new + (mma_v2(lo, vb, mma_v2(hi, vb, accs[g] * (a * beta))),)
        else:
            for g in gl.static_range(7):
                f = gl.load(Scales + g * T + tok_a)
                pg = pa * f[None, :]
                hi = pg.to(F8)
                lo = (pg - hi.to(gl.float32)).to(F8)
                vb = v8t[g].permute((1, 0)).load(b8)
                new = new + (mma_v2(lo, vb, mma_v2(hi, vb, accs[g] * a)),)
        p16 = gl.convert_layout(pa.to(gl.bfloat16), a16)
        new = new + (mma_v2(p16, rope.load(b16), accs[7] * a),)
        accs = new
    total = l2
    for g in gl.static_range(8):
        total = total + gl.convert_layout(
            gl.sum(gl.reshape(accs[g], [BLOCK_H, T, 2]), 2), mma
        )
    r = gl.arange(0, BLOCK_H, layout=gl.SliceLayout(1, mma))
    gl.store(Out + r[:, None] * T + tok[None, :], total)


OPS = ("QMMA", "HMMA", "LDSM", "LDS", "STS", "F2FP", "BAR", "SHFL")
# Bytes a warp one ldmatrix reads, by SASS variant (8x8 b16 matrices).
LDSM_BYTES = {
    "LDSM.16.M88.4": 512,
    "LDSM.16.MT88.4": 512,
    "LDSM.16.M88.2": 256,
    "LDSM.16.MT88.2": 256,
    "LDSM.16.M88": 128,
    "LDSM.16.MT88": 128,
}


def loop_mix(fn, signature, constexprs=None, cap=120):
    """The tile loop's mix for compute capability cap: the backward branch
    whose body holds the most MMA instructions, its length, its MMA, LDSM
    (and their bytes a warp), conversion, barrier and local-memory counts."""
    import calibrate
    import sass as S
    from triton.experimental.gluon._runtime import GluonASTSource

    src = GluonASTSource(fn=fn, signature=signature, constexprs=constexprs or {})
    ck, _ = calibrate.compile_logged(src, cap, dict(num_warps=8))
    lines = S.disassemble(ck.asm["cubin"])[0]
    first, last = loop.loop(lines, "MMA")
    ops = loop.opcodes(lines, first, last)
    base = collections.Counter()
    for op, n in ops.items():
        base[op.split(".")[0]] += n
    ldsm = sum(
        n * LDSM_BYTES.get(op, 0) for op, n in ops.items() if op.startswith("LDSM")
    )
    return (
        f"loop {last - first + 1} instructions: "
        + " ".join(f"{op} {base[op]}" for op in OPS + ("LDL", "STL"))
        + f" ldmatrix {ldsm} B a warp"
    )


if __name__ == "__main__":
    print("bf16 tile (lab/bounds pp_tile+softmax), whole kernel:")
    narrowcompile.probe(
        bench._pp_tile_kernel,
        {"Out": "*fp32", "ITERS": "i32", "SOFTMAX": "constexpr"},
        OPS,
        constexprs={"SOFTMAX": 1},
    )
    sig8 = {"Out": "*fp32", "Scales": "*fp32", "ITERS": "i32", "VTILE": "constexpr"}
    for vtile in (0, 1):
        print(f"e4m3 hi/lo tile, VTILE {vtile}, whole kernel:")
        narrowcompile.probe(_tile8_kernel, sig8, OPS, constexprs={"VTILE": vtile})
    for cap in (120, 90):
        print(
            f"sm_{cap} bf16 tile "
            + loop_mix(
                bench._pp_tile_kernel,
                {"Out": "*fp32", "ITERS": "i32", "SOFTMAX": "constexpr"},
                {"SOFTMAX": 1},
                cap,
            )
        )
        for vtile in (0, 1):
            print(
                f"sm_{cap} e4m3 tile VTILE {vtile} "
                + loop_mix(_tile8_kernel, sig8, {"VTILE": vtile}, cap)
            )
