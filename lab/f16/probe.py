"""Can Gluon build mma.sync fp16 operands straight from e4m3 bytes in
shared memory: ldmatrix on the bytes viewed as int16, an inline cvt to
fp16 pairs, and a register-only relabelling into the dot operand layout
(assert_trivial)? Compiles one score and one P.V step for sm_90 and sm_120;
with --run (on a GPU) runs it against torch: S = Q.K^T times each token's
scale, P = S in fp16 times the scale again, O = P.V, V the same bytes.

    .venv/bin/python lab/f16/probe.py [--run]
"""

import os
import sys

ROOT = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
)
sys.path.insert(0, os.path.join(ROOT, "calib"))
sys.path.insert(0, os.path.join(ROOT, "lab"))
from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402
from triton.experimental.gluon.language.nvidia.ampere import mma_v2  # noqa: E402

import narrowcompile  # noqa: E402

# Two int16 (4 e4m3 bytes b0..b3) in, two f16x2 out: (b0, b1) and (b2, b3).
K_ASM = gl.constexpr("""{
.reg .b16 lo, hi;
mov.b32 {lo, hi}, $2;
cvt.rn.f16x2.e4m3x2 $0, lo;
cvt.rn.f16x2.e4m3x2 $1, hi;
}""")
# Two int16 of adjacent tokens (t: b0 b1, t+1: b2 b3) in: (b0, b2), (b1, b3).
V_ASM = gl.constexpr("""{
.reg .b32 t;
.reg .b16 lo, hi;
prmt.b32 t, $2, 0, 0x3120;
mov.b32 {lo, hi}, t;
cvt.rn.f16x2.e4m3x2 $0, lo;
cvt.rn.f16x2.e4m3x2 $1, hi;
}""")


@gluon.jit
def _k_operand(kraw, dot_b: gl.constexpr, dot_i: gl.constexpr):
    """K^T [64 dims (permuted), T] fp16 in dot_b from kraw [T, 32] int16."""
    b16 = kraw.permute((1, 0)).load(dot_i)  # [32, T]
    lo, hi = gl.inline_asm_elementwise(
        K_ASM, "=r,=r,r", [b16], dtype=(gl.float16, gl.float16), is_pure=True, pack=2
    )
    T: gl.constexpr = b16.shape[1]
    j = gl.join(lo, hi)  # [32, T, 2]: i = 16b + 8h + 2q + e, c
    j = gl.reshape(j, [2, 2, 4, 2, T, 2])  # b h q e n c
    j = gl.permute(j, (0, 1, 5, 2, 3, 4))  # b h c q e n
    x = gl.reshape(j, [64, T])
    return gl.convert_layout(x, dot_b, assert_trivial=True)


@gluon.jit
def _v_operand(vraw, dot_b: gl.constexpr, dot_i: gl.constexpr):
    """V [T, 64 cols (permuted)] fp16 in dot_b from vraw [T, 32] int16."""
    b16 = vraw.load(dot_i)  # [T, 32]
    a, b = gl.inline_asm_elementwise(
        V_ASM, "=r,=r,r", [b16], dtype=(gl.float16, gl.float16), is_pure=True, pack=2
    )
    T: gl.constexpr = b16.shape[0]
    j = gl.join(a, b)  # [T, 32, 2]: i = r + 8 m0 + 16 m1, c
    j = gl.reshape(j, [T, 2, 2, 8, 2])  # t m1 m0 r c
    j = gl.permute(j, (0, 1, 4, 2, 3))  # t m1 c m0 r
    x = gl.reshape(j, [T, 64])
    return gl.convert_layout(x, dot_b, assert_trivial=True)


@gluon.jit
def k(KR, Q, Sc, Out):
    T: gl.constexpr = 16
    mma: gl.constexpr = gl.NVMMADistributedLayout(
        version=[2, 0], warps_per_cta=[4, 2], instr_shape=[16, 8]
    )
    dot_a: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
    dot_b: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=2)
    lay: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [8, 1], [1, 0])
    kraw = gl.allocate_shared_memory(
        gl.int16, [T, 32], gl.NVMMASharedLayout.get_default_for([T, 32], gl.int16)
    )
    qs = gl.allocate_shared_memory(
        gl.float16, [64, 64], gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16)
    )
    r = gl.arange(0, T, layout=gl.SliceLayout(1, lay))
    c = gl.arange(0, 32, layout=gl.SliceLayout(0, lay))
    kraw.store(gl.load(KR + r[:, None] * 32 + c[None, :]))
    rq = gl.arange(0, 64, layout=gl.SliceLayout(1, lay))
    cq = gl.arange(0, 64, layout=gl.SliceLayout(0, lay))
    qs.store(gl.load(Q + rq[:, None] * 64 + cq[None, :]))
    gl.thread_barrier()
    z = gl.zeros([64, T], gl.float32, mma)
    s = mma_v2(qs.load(dot_a), _k_operand(kraw, dot_b, dot_b), z)
    toks = gl.arange(0, T, layout=gl.SliceLayout(0, mma))
    s = s * gl.load(Sc + toks)[None, :]
    p = gl.convert_layout(s.to(gl.float16), dot_a)
    sa = gl.load(Sc + gl.arange(0, T, layout=gl.SliceLayout(0, dot_a)))
    p = p * sa.to(gl.float16)[None, :]
    acc = mma_v2(p, _v_operand(kraw, dot_b, dot_b), gl.zeros([64, 64], gl.float32, mma))
    rows = gl.arange(0, 64, layout=gl.SliceLayout(1, mma))
    cols = gl.arange(0, 64, layout=gl.SliceLayout(0, mma))
    gl.store(Out + rows[:, None] * 64 + cols[None, :], acc)


def main():
    signature = {"KR": "*i16", "Q": "*fp16", "Sc": "*fp32", "Out": "*fp32"}
    narrowcompile.probe(k, signature, ("HMMA", "LDSM", "STS", "LDS", "F2FP", "SHFL"))


def run():
    import torch

    torch.manual_seed(0)
    dev = "cuda"
    kf = (torch.randn(16, 64, device=dev) * 3).to(torch.float8_e4m3fn)
    kr = kf.view(torch.int8).view(torch.int16).contiguous()  # [16, 32]
    q = torch.randn(64, 64, device=dev).half()
    sc = torch.exp2(torch.randint(-3, 3, (16,), device=dev).float())
    d = torch.arange(64, device=dev)
    phys = (d & -16) | (((d >> 1) & 3) << 2) | (((d >> 3) & 1) << 1) | (d & 1)
    q_perm = q[:, phys].contiguous()  # row k' holds dim phys(k')
    out = torch.empty(64, 64, device=dev)
    k[(1,)](kr, q_perm, sc, out, num_warps=8)
    kv = kf.float()
    s_ref = (q.float() @ kv.T) * sc[None, :]
    p_ref = s_ref.half() * sc.half()[None, :]
    o_ref = p_ref.float() @ kv
    n = torch.arange(64, device=dev)
    m1, c, m0, r = n >> 5, (n >> 4) & 1, (n >> 3) & 1, n & 7
    col = 32 * m1 + 16 * m0 + 2 * r + c  # logical column n holds this one
    o = torch.empty_like(out)
    o[:, col] = out
    err = ((o - o_ref).abs().max() / o_ref.abs().max()).item()
    print(f"probe on {torch.cuda.get_device_name()}: max error / max {err:.2e}")
    return 0 if err < 1e-2 else 1


if __name__ == "__main__":
    if "--run" in sys.argv:
        sys.exit(run())
    main()
