"""Can Gluon's mma_v2 take e4m3 operands the way a 64-head tile would need
them: Q (A) from registers, K (B) from a [T, 64] byte buffer read with its
reduction dimension contiguous (as the cache stores a row), V (B) from a
[64, T] buffer holding the tile transposed, and P (A) converted from the
score accumulator? Compiles one such tile for sm_120 and sm_90; with --run
(on a GPU) checks it against torch, and checks each operand path lab/fp8's
tile takes (k_paths) on its own.

    .venv/bin/python lab/fp8/probe.py [--run]
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

T = gl.constexpr(32)
KW = gl.constexpr(4)


@gluon.jit
def k(Q, K, Sout, Out):
    mma: gl.constexpr = gl.NVMMADistributedLayout(
        version=[2, 0], warps_per_cta=[4, 2], instr_shape=[16, 8]
    )
    a8: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=KW)
    b8: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=KW)
    # Q [64, 64] e4m3 straight into registers.
    h_ = gl.arange(0, 64, layout=gl.SliceLayout(1, a8))
    c_ = gl.arange(0, 64, layout=gl.SliceLayout(0, a8))
    q = gl.load(Q + h_[:, None] * 64 + c_[None, :])
    # K [T, 64] e4m3 rows, and the same bytes transposed [64, T].
    blk: gl.constexpr = gl.BlockedLayout([1, 16], [8, 4], [8, 1], [1, 0])
    kt = gl.arange(0, T, layout=gl.SliceLayout(1, blk))
    kc = gl.arange(0, 64, layout=gl.SliceLayout(0, blk))
    kv = gl.load(K + kt[:, None] * 64 + kc[None, :])
    kbuf = gl.allocate_shared_memory(
        gl.float8e4nv,
        [T, 64],
        gl.NVMMASharedLayout.get_default_for([T, 64], gl.float8e4nv),
    )
    kbuf.store(kv)
    vbuf = gl.allocate_shared_memory(
        gl.float8e4nv,
        [64, T],
        gl.NVMMASharedLayout.get_default_for([64, T], gl.float8e4nv),
    )
    vbuf.store(gl.permute(kv, (1, 0)))
    gl.thread_barrier()
    s = mma_v2(q, kbuf.permute((1, 0)).load(b8), gl.zeros([64, T], gl.float32, mma))
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, mma))
    t = gl.arange(0, T, layout=gl.SliceLayout(0, mma))
    gl.store(Sout + r[:, None] * T + t[None, :], s)
    p = gl.convert_layout((s * 0.0625).to(gl.float8e4nv), a8)
    o = mma_v2(p, vbuf.permute((1, 0)).load(b8), gl.zeros([64, 64], gl.float32, mma))
    oc = gl.arange(0, 64, layout=gl.SliceLayout(0, mma))
    gl.store(Out + r[:, None] * 64 + oc[None, :], o)


SIG = {"Q": "*fp8e4nv", "K": "*fp8e4nv", "Sout": "*fp32", "Out": "*fp32"}


def run():
    import torch

    g = torch.Generator().manual_seed(0)
    qf = torch.randn(64, 64, generator=g) * 4
    kf = torch.randn(32, 64, generator=g) * 4
    q8 = qf.to(torch.float8_e4m3fn)
    k8 = kf.to(torch.float8_e4m3fn)
    s = torch.empty(64, 32, device="cuda")
    o = torch.empty(64, 64, device="cuda")
    k[(1,)](q8.cuda(), k8.cuda(), s, o, num_warps=8)
    s_ref = q8.double() @ k8.double().T
    p8 = (s_ref * 0.0625).float().to(torch.float8_e4m3fn).double()
    o_ref = p8 @ k8.double()
    print("scores max err", (s.double().cpu() - s_ref).abs().max().item())
    print(
        "out max rel err",
        ((o.double().cpu() - o_ref).abs().max() / o_ref.abs().max()).item(),
    )


@gluon.jit
def k_paths(Q, K, KW32, Sout, MODE: gl.constexpr):
    """S = Q.Kt [64, T] through one of the operand paths lab/fp8's tile uses:
    MODE 0 Q straight into registers and K stored as e4m3 (as k above);
    1 Q through a [64, 64] e4m3 NVMMA buffer; 2 Q converted from a blocked
    layout; 3 K stored as its 32-bit words through a view of the buffer;
    4 Q as bf16 through a [64, 32] scratch loaded in the e4m3 operand
    layout, then converted (P's path)."""
    mma: gl.constexpr = gl.NVMMADistributedLayout(
        version=[2, 0], warps_per_cta=[4, 2], instr_shape=[16, 8]
    )
    a8: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=KW)
    b8: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=KW)
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [8, 1], [1, 0])
    wlay: gl.constexpr = gl.BlockedLayout([1, 2], [4, 8], [8, 1], [1, 0])
    kbuf = gl.allocate_shared_memory(
        gl.float8e4nv,
        [T, 64],
        gl.NVMMASharedLayout.get_default_for([T, 64], gl.float8e4nv),
    )
    if MODE == 3:
        wt = gl.arange(0, T, layout=gl.SliceLayout(1, wlay))
        wc = gl.arange(0, 16, layout=gl.SliceLayout(0, wlay))
        words = gl.load(KW32 + wt[:, None] * 16 + wc[None, :])
        kbuf._reinterpret(
            gl.int32, [T, 16], gl.NVMMASharedLayout(64, 32, rank=2)
        ).store(words)
    else:
        kt = gl.arange(0, T, layout=gl.SliceLayout(1, blk))
        kc = gl.arange(0, 64, layout=gl.SliceLayout(0, blk))
        kbuf.store(gl.load(K + kt[:, None] * 64 + kc[None, :]))
    bh = gl.arange(0, 64, layout=gl.SliceLayout(1, blk))
    bc = gl.arange(0, 64, layout=gl.SliceLayout(0, blk))
    if MODE == 1:
        qs = gl.allocate_shared_memory(
            gl.float8e4nv,
            [64, 64],
            gl.NVMMASharedLayout.get_default_for([64, 64], gl.float8e4nv),
            gl.load(Q + bh[:, None] * 64 + bc[None, :]),
        )
        gl.thread_barrier()
        q = qs.load(a8)
    elif MODE == 2:
        q = gl.convert_layout(gl.load(Q + bh[:, None] * 64 + bc[None, :]), a8)
    elif MODE == 4:
        ps = gl.allocate_shared_memory(
            gl.bfloat16,
            [64, 64],
            gl.NVMMASharedLayout.get_default_for([64, 64], gl.bfloat16),
            gl.load(Q + bh[:, None] * 64 + bc[None, :]).to(gl.float32).to(gl.bfloat16),
        )
        gl.thread_barrier()
        q = ps.load(a8).to(gl.float32).to(gl.float8e4nv)
    else:
        h_ = gl.arange(0, 64, layout=gl.SliceLayout(1, a8))
        c_ = gl.arange(0, 64, layout=gl.SliceLayout(0, a8))
        q = gl.load(Q + h_[:, None] * 64 + c_[None, :])
    gl.thread_barrier()
    s = mma_v2(q, kbuf.permute((1, 0)).load(b8), gl.zeros([64, T], gl.float32, mma))
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, mma))
    t = gl.arange(0, T, layout=gl.SliceLayout(0, mma))
    gl.store(Sout + r[:, None] * T + t[None, :], s)


def run_paths():
    import torch

    g = torch.Generator().manual_seed(1)
    q8 = (torch.randn(64, 64, generator=g) * 4).to(torch.float8_e4m3fn)
    k8 = (torch.randn(32, 64, generator=g) * 4).to(torch.float8_e4m3fn)
    ref = q8.double() @ k8.double().T
    kw = k8.view(torch.uint8).contiguous().view(torch.int32).cuda()
    for mode in range(5):
        s = torch.empty(64, 32, device="cuda")
        k_paths[(1,)](q8.cuda(), k8.cuda(), kw, s, MODE=mode, num_warps=8)
        err = (s.double().cpu() - ref).abs().max().item()
        print(
            f"path {mode}: max abs err {err:.3g} (scores up to {ref.abs().max().item():.3g})"
        )


if __name__ == "__main__":
    if "--run" in sys.argv:
        run()
        run_paths()
    else:
        narrowcompile.probe(
            k, SIG, ("QMMA", "HMMA", "LDSM", "LDS", "STS", "PRMT", "F2FP", "BAR")
        )
