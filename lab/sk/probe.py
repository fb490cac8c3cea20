"""Can Gluon split a score MMA's 512-long reduction over warps: one batched
(3D) mma_v2 whose batch is 4 slices of 128 columns, Q's slice in each
warp's registers, K's from a [4, T, 128] shared buffer, and the 4 partial
scores summed across warps by gl.sum? Then P.V from the same buffer with a
2D layout. Compiles one tile for sm_120 and sm_90; with --run (on a GPU)
checks it against torch.

    .venv/bin/python lab/sk/probe.py [--run]
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


@gluon.jit
def k(Q, K, Sout, Out):
    mma3: gl.constexpr = gl.NVMMADistributedLayout(
        version=[2, 0], warps_per_cta=[4, 2, 1], instr_shape=[1, 16, 8]
    )
    mma2: gl.constexpr = gl.NVMMADistributedLayout(
        version=[2, 0], warps_per_cta=[2, 4], instr_shape=[16, 8]
    )
    a3: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma3, k_width=2)
    b3: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma3, k_width=2)
    a2: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma2, k_width=2)
    b2: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma2, k_width=2)
    # Q [64, 512] as [4 slices, 64 heads, 128 columns], straight into registers.
    s_ = gl.arange(0, 4, layout=gl.SliceLayout(1, gl.SliceLayout(2, a3)))
    h_ = gl.arange(0, 64, layout=gl.SliceLayout(0, gl.SliceLayout(2, a3)))
    c_ = gl.arange(0, 128, layout=gl.SliceLayout(0, gl.SliceLayout(1, a3)))
    q3 = gl.load(
        Q + h_[None, :, None] * 512 + s_[:, None, None] * 128 + c_[None, None, :]
    )
    # K [T, 512] into a [4, T, 128] buffer.
    klay: gl.constexpr = gl.BlockedLayout([1, 1, 8], [1, 2, 16], [1, 8, 1], [2, 1, 0])
    ks = gl.arange(0, 4, layout=gl.SliceLayout(1, gl.SliceLayout(2, klay)))
    kt = gl.arange(0, T, layout=gl.SliceLayout(0, gl.SliceLayout(2, klay)))
    kc = gl.arange(0, 128, layout=gl.SliceLayout(0, gl.SliceLayout(1, klay)))
    kv = gl.load(
        K + kt[None, :, None] * 512 + ks[:, None, None] * 128 + kc[None, None, :]
    )
    kbuf = gl.allocate_shared_memory(
        gl.bfloat16,
        [4 * T, 128],
        gl.NVMMASharedLayout.get_default_for([4 * T, 128], gl.bfloat16),
    )
    kbuf.reshape([4, T, 128]).store(kv)
    gl.thread_barrier()
    s3 = mma_v2(
        q3,
        kbuf.reshape([4, T, 128]).permute((0, 2, 1)).load(b3),
        gl.zeros([4, 64, T], gl.float32, mma3),
    )
    s = gl.sum(s3, 0)
    slay: gl.constexpr = gl.SliceLayout(0, mma3)
    sh = gl.arange(0, 64, layout=gl.SliceLayout(1, slay))
    st = gl.arange(0, T, layout=gl.SliceLayout(0, slay))
    gl.store(Sout + sh[:, None] * T + st[None, :], s)
    p = gl.convert_layout((s * 0.0625).to(gl.bfloat16), a2)
    oh = gl.arange(0, 64, layout=gl.SliceLayout(1, mma2))
    oc = gl.arange(0, 128, layout=gl.SliceLayout(0, mma2))
    for j in gl.static_range(4):
        o = mma_v2(
            p,
            kbuf.slice(j * T, T, dim=0).load(b2),
            gl.zeros([64, 128], gl.float32, mma2),
        )
        gl.store(Out + oh[:, None] * 512 + j * 128 + oc[None, :], o)


SIG = {"Q": "*bf16", "K": "*bf16", "Sout": "*fp32", "Out": "*fp32"}


def main():
    narrowcompile.probe(k, SIG, ("HMMA", "LDSM", "STS", "LDS", "BAR"))


def run():
    import torch

    torch.manual_seed(0)
    q = torch.randn(64, 512, device="cuda").bfloat16()
    kk = torch.randn(T, 512, device="cuda").bfloat16()
    s = torch.empty(64, T, device="cuda")
    o = torch.empty(64, 512, device="cuda")
    k[(1,)](q, kk, s, o, num_warps=8)
    ref = q.float() @ kk.float().T
    print("S max err", (s - ref).abs().max().item(), "of", ref.abs().max().item())
    p = (ref * 0.0625).bfloat16().float()
    oref = p @ kk.float()
    print("O max err", (o - oref).abs().max().item(), "of", oref.abs().max().item())


if __name__ == "__main__":
    run() if "--run" in sys.argv else main()
