"""lab/rawcons: can the sm_90 narrow 16-head consumer take the cache's fp8
bytes as they are, and convert them into its own tensor-core operands fast
enough that no producer needs to dequantise (issue 26)?

The shipped narrow kernel (`ws_h16_t64_*`) is paced by its producer warps
(lab/pace, lab/psplit: about 1.9 µs a 64-token tile, against 1.1 µs for its
consumer's core, lab/bounds). Its producer gathers each row into registers,
dequantises it and stores a bf16 tile for the consumer's wgmma. This
measures the other arrangement's consumer: the tile stays as its raw bytes
in shared memory (7 nope groups of 64 e4m3 bytes a token, the 64 bf16 rope
values, the 8-byte scale word), and one consumer warp group builds both
MMAs' A operands in registers:

- S^T = K Q^T, one wgmma a nope group: A = the group's bytes, one
  `cvt.rn.f16x2.e4m3x2` a byte pair, relabelled into the operand layout
  without moving a value between threads (`assert_trivial`), Q staged
  as fp16 with its dimensions in the same order; each group's scores times
  its tokens' scales, summed; the rope as bf16 from its bytes.
- O^T += V^T P^T, one wgmma a group: A = the same bytes read along the
  tokens, converted the same way; each group's scales folded into its own
  copy of P^T (fp16, biased by 2^8).

Loops (one warp group, num_warps 4), each over one tile in shared memory
ITERS times, one program an SM, two an SM (what 70 KB of shared memory and
the registers allow), and one program alone:

- narrow: the shipped consumer's core on a bf16 tile (lab/bounds' loop at
  D = 512, with its softmax), the baseline;
- raw: the consumer above, each group's MMA waited for before the next;
- rawpipe: the same with one group's MMA in flight while the next
  group's operand is built.

`--check` runs raw and rawpipe once on random bytes and compares its scores and its
unnormalised output with torch's float64 (the dimension permutations undone
on the host). Usage: python3 lab/rawcons/bench.py OUT.json [--check]
"""

import json
import sys
import time

try:
    import torch
except ImportError:  # compile.py under a Triton release without torch
    torch = None
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    warpgroup_mma,
    warpgroup_mma_wait,
)

# gl.barrier from Triton 3.7, gl.thread_barrier before.
_cta_barrier = gl.barrier if hasattr(gl, "barrier") else gl.thread_barrier
BT = gl.constexpr(64)  # tokens a tile
BH = gl.constexpr(16)  # heads
NG = gl.constexpr(7)  # nope groups of 64 dimensions
P_BIAS = gl.constexpr(256.0)  # 2^8: a nope group's P carried as fp16 times its scale


# Two int16 in one register, bytes b3 b2 | b1 b0, out: (b0, b2) and (b1, b3)
# as fp16 pairs. Along a row of the tile (the score operand) the first pair
# is the low byte of each int16; along the tokens (the value operand) it is
# the same dimension of two tokens.
_CVT_ASM = gl.constexpr(
    "{ .reg .b32 t; .reg .b16 lo, hi; prmt.b32 t, $2, 0, 0x3120; "
    "mov.b32 {lo, hi}, t; cvt.rn.f16x2.e4m3x2 $0, lo; cvt.rn.f16x2.e4m3x2 $1, hi; }"
)


@gluon.jit
def _cvt2(w):
    return gl.inline_asm_elementwise(
        _CVT_ASM, "=r,=r,r", [w], dtype=(gl.float16, gl.float16), is_pure=True, pack=2
    )


@gluon.jit
def _k_operand(raw, dot_a: gl.constexpr):
    """K_g [64 tokens, 64] as wgmma's fp16 register A operand from the
    group's bytes raw [64, 32] (int16 pairs). int16 column i = 16b + 8h +
    2q + e holds bytes 2i and 2i + 1 (c); column 16(2b + c) + 8h + 2q + e
    of the result is byte 2i + c (_k_dim)."""
    w = raw.load(dot_a)
    lo, hi = _cvt2(w)
    x = gl.reshape(gl.join(lo, hi), [BT, 2, 2, 4, 2, 2])  # t b h q e c
    x = gl.reshape(gl.permute(x, (0, 1, 5, 2, 3, 4)), [BT, 64])  # t b c h q e
    return gl.convert_layout(x, dot_a, assert_trivial=True)


@gluon.jit
def _v_operand(raw, lv: gl.constexpr, dot_a: gl.constexpr):
    """V_g^T [64, 64 tokens] as the fp16 register A operand from the same
    bytes read along the tokens: thread pairs of adjacent tokens (lv), so
    one register holds two tokens' int16 at column i = 8w + l. Row 16w + 8c
    + l of the result is byte 2i + c (_v_dim)."""
    w = raw.permute((1, 0)).load(lv)  # [32, 64]
    a, b = _cvt2(w)
    x = gl.reshape(gl.join(a, b), [4, 8, BT, 2])  # w l t c
    x = gl.reshape(gl.permute(x, (0, 3, 1, 2)), [64, BT])  # w c l t
    return gl.convert_layout(x, dot_a, assert_trivial=True)


@gluon.jit
def _scale(words, g: gl.constexpr):
    """2^(e - 127) of nope group g's UE8M0 byte of each token's word."""
    e = ((words >> (8 * g)) & 0xFF).to(gl.int32)
    return (e << 23).to(gl.float32, bitcast=True)


@gluon.jit
def _raw_kernel(
    Out,
    ITERS,
    Kraw,
    Rope,
    Words,
    Qn,
    Qr,
    qk_scale,
    CHECK: gl.constexpr,
    PIPE: gl.constexpr,
):
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BH, 16]
    )
    dot_a: gl.constexpr = gl.DotOperandLayout(
        operand_index=0, parent=s_layout, k_width=2
    )
    lv: gl.constexpr = gl.DistributedLinearLayout(
        reg_bases=[[0, 1], [0, 8], [0, 16], [0, 32]],
        lane_bases=[[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]],
        warp_bases=[[8, 0], [16, 0]],
        block_bases=[],
        shape=[32, BT],
    )
    rows_of: gl.constexpr = gl.SliceLayout(1, s_layout)
    heads_of: gl.constexpr = gl.SliceLayout(0, s_layout)
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    one_d: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])

    raw_sl: gl.constexpr = gl.NVMMASharedLayout(64, 16, 2)
    kraw = gl.allocate_shared_memory(
        gl.int16, [NG, BT, 32], gl.NVMMASharedLayout(64, 16, 2)
    )
    rope = gl.allocate_shared_memory(
        gl.bfloat16,
        [BT, 64],
        gl.NVMMASharedLayout.get_default_for([BT, 64], gl.bfloat16),
    )
    words_s = gl.allocate_shared_memory(
        gl.int64, [BT], gl.SwizzledSharedLayout(1, 1, 1, [0])
    )
    q_sl: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BH, 64], gl.float16)
    qn = gl.allocate_shared_memory(
        gl.float16, [NG, BH, 64], gl.NVMMASharedLayout(128, 16, 2)
    )
    qr = gl.allocate_shared_memory(
        gl.bfloat16,
        [BH, 64],
        gl.NVMMASharedLayout.get_default_for([BH, 64], gl.bfloat16),
    )
    p_sl: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BT, BH], gl.float16)
    pn = gl.allocate_shared_memory(
        gl.float16, [NG, BT, BH], gl.NVMMASharedLayout(32, 16, 2)
    )
    pr = gl.allocate_shared_memory(
        gl.bfloat16,
        [BT, BH],
        gl.NVMMASharedLayout.get_default_for([BT, BH], gl.bfloat16),
    )

    # The tile and Q, once.
    r32 = gl.arange(0, BT, layout=gl.SliceLayout(1, blk))
    c32 = gl.arange(0, 32, layout=gl.SliceLayout(0, blk))
    c64 = gl.arange(0, 64, layout=gl.SliceLayout(0, blk))
    rh = gl.arange(0, BH, layout=gl.SliceLayout(1, blk))
    for g in gl.static_range(NG):
        kraw.index(g).store(
            gl.load(Kraw + g * BT * 32 + r32[:, None] * 32 + c32[None, :])
        )
        qn.index(g).store(gl.load(Qn + g * BH * 64 + rh[:, None] * 64 + c64[None, :]))
    rope.store(gl.load(Rope + r32[:, None] * 64 + c64[None, :]))
    qr.store(gl.load(Qr + rh[:, None] * 64 + c64[None, :]))
    words_s.store(gl.load(Words + gl.arange(0, BT, layout=one_d)))
    fence_async_shared()
    _cta_barrier()

    zero_s = gl.zeros([BT, BH], gl.float32, s_layout)
    m_i = gl.full([BH], -1.0e30, gl.float32, heads_of)
    l_part = gl.zeros([BT, BH], gl.float32, s_layout)
    a0 = gl.zeros([64, BH], gl.float32, s_layout)
    a1 = gl.zeros([64, BH], gl.float32, s_layout)
    a2 = gl.zeros([64, BH], gl.float32, s_layout)
    a3 = gl.zeros([64, BH], gl.float32, s_layout)
    a4 = gl.zeros([64, BH], gl.float32, s_layout)
    a5 = gl.zeros([64, BH], gl.float32, s_layout)
    a6 = gl.zeros([64, BH], gl.float32, s_layout)
    a7 = gl.zeros([64, BH], gl.float32, s_layout)
    for _ in range(ITERS):
        words = words_s.load(rows_of)
        # Scores: the rope (bf16 bytes as they are) and each nope group.
        ar = rope.load(gl.DotOperandLayout(operand_index=0, parent=s_layout, k_width=2))
        s = warpgroup_mma(ar, qr.permute((1, 0)), zero_s, use_acc=False, is_async=True)
        if PIPE:
            # Each group's MMA runs while the next group's operand is built.
            prev = s
            prev_a = ar
            s = zero_s
            for g in gl.static_range(NG):
                a = _k_operand(kraw.index(g), dot_a)
                cur = warpgroup_mma(
                    a, qn.index(g).permute((1, 0)), zero_s, use_acc=False, is_async=True
                )
                prev, prev_a = warpgroup_mma_wait(1, deps=(prev, prev_a))
                if g == 0:
                    s = prev
                else:
                    s = s + prev * _scale(words, g - 1)[:, None]
                prev = cur
                prev_a = a
            prev, prev_a = warpgroup_mma_wait(0, deps=(prev, prev_a))
            s = s + prev * _scale(words, NG - 1)[:, None]
        else:
            s = warpgroup_mma_wait(0, deps=(s,))
            for g in gl.static_range(NG):
                a = _k_operand(kraw.index(g), dot_a)
                sg = warpgroup_mma(
                    a, qn.index(g).permute((1, 0)), zero_s, use_acc=False, is_async=True
                )
                sg = warpgroup_mma_wait(0, deps=(sg,))
                s = s + sg * _scale(words, g)[:, None]
        if CHECK:
            h = gl.arange(0, BH, layout=heads_of)
            t = gl.arange(0, BT, layout=rows_of)
            gl.store(Out + t[:, None] * BH + h[None, :], s)
        s = s * qk_scale
        m_new = gl.maximum(m_i, gl.max(s, 0))
        alpha = gl.exp2(m_i - m_new)
        p = gl.exp2(s - m_new[None, :])
        l_part = l_part * alpha[None, :] + p
        m_i = m_new
        for g in gl.static_range(NG):
            pn.index(g).store((p * (_scale(words, g) * P_BIAS)[:, None]).to(gl.float16))
        pr.store(p.to(gl.bfloat16))
        fence_async_shared()
        _cta_barrier()
        # Values: each nope group's bytes along the tokens, and the rope.
        vr = rope.permute((1, 0)).load(
            gl.DotOperandLayout(operand_index=0, parent=s_layout, k_width=2)
        )
        if PIPE:
            a7 = warpgroup_mma(vr, pr, a7 * alpha[None, :], is_async=True)
            v = _v_operand(kraw.index(0), lv, dot_a)
            a0 = warpgroup_mma(v, pn.index(0), a0 * alpha[None, :], is_async=True)
            a7, vr = warpgroup_mma_wait(1, deps=(a7, vr))
            w = _v_operand(kraw.index(1), lv, dot_a)
            a1 = warpgroup_mma(w, pn.index(1), a1 * alpha[None, :], is_async=True)
            a0, v = warpgroup_mma_wait(1, deps=(a0, v))
            v = _v_operand(kraw.index(2), lv, dot_a)
            a2 = warpgroup_mma(v, pn.index(2), a2 * alpha[None, :], is_async=True)
            a1, w = warpgroup_mma_wait(1, deps=(a1, w))
            w = _v_operand(kraw.index(3), lv, dot_a)
            a3 = warpgroup_mma(w, pn.index(3), a3 * alpha[None, :], is_async=True)
            a2, v = warpgroup_mma_wait(1, deps=(a2, v))
            v = _v_operand(kraw.index(4), lv, dot_a)
            a4 = warpgroup_mma(v, pn.index(4), a4 * alpha[None, :], is_async=True)
            a3, w = warpgroup_mma_wait(1, deps=(a3, w))
            w = _v_operand(kraw.index(5), lv, dot_a)
            a5 = warpgroup_mma(w, pn.index(5), a5 * alpha[None, :], is_async=True)
            a4, v = warpgroup_mma_wait(1, deps=(a4, v))
            v = _v_operand(kraw.index(6), lv, dot_a)
            a6 = warpgroup_mma(v, pn.index(6), a6 * alpha[None, :], is_async=True)
            a5, w = warpgroup_mma_wait(1, deps=(a5, w))
            a6, v = warpgroup_mma_wait(0, deps=(a6, v))
        else:
            a7 = warpgroup_mma(vr, pr, a7 * alpha[None, :], is_async=True)
            a7 = warpgroup_mma_wait(0, deps=(a7,))
            a0 = warpgroup_mma(
                _v_operand(kraw.index(0), lv, dot_a),
                pn.index(0),
                a0 * alpha[None, :],
                is_async=True,
            )
            a0 = warpgroup_mma_wait(0, deps=(a0,))
            a1 = warpgroup_mma(
                _v_operand(kraw.index(1), lv, dot_a),
                pn.index(1),
                a1 * alpha[None, :],
                is_async=True,
            )
            a1 = warpgroup_mma_wait(0, deps=(a1,))
            a2 = warpgroup_mma(
                _v_operand(kraw.index(2), lv, dot_a),
                pn.index(2),
                a2 * alpha[None, :],
                is_async=True,
            )
            a2 = warpgroup_mma_wait(0, deps=(a2,))
            a3 = warpgroup_mma(
                _v_operand(kraw.index(3), lv, dot_a),
                pn.index(3),
                a3 * alpha[None, :],
                is_async=True,
            )
            a3 = warpgroup_mma_wait(0, deps=(a3,))
            a4 = warpgroup_mma(
                _v_operand(kraw.index(4), lv, dot_a),
                pn.index(4),
                a4 * alpha[None, :],
                is_async=True,
            )
            a4 = warpgroup_mma_wait(0, deps=(a4,))
            a5 = warpgroup_mma(
                _v_operand(kraw.index(5), lv, dot_a),
                pn.index(5),
                a5 * alpha[None, :],
                is_async=True,
            )
            a5 = warpgroup_mma_wait(0, deps=(a5,))
            a6 = warpgroup_mma(
                _v_operand(kraw.index(6), lv, dot_a),
                pn.index(6),
                a6 * alpha[None, :],
                is_async=True,
            )
            a6 = warpgroup_mma_wait(0, deps=(a6,))
        # The next tile's P overwrites these buffers.
        _cta_barrier()
    h = gl.arange(0, BH, layout=heads_of)
    r = gl.arange(0, 64, layout=rows_of)
    if CHECK:
        base = Out + BT * BH
        o = base + r[:, None] * BH + h[None, :]
        gl.store(o + 0 * 64 * BH, a0)
        gl.store(o + 1 * 64 * BH, a1)
        gl.store(o + 2 * 64 * BH, a2)
        gl.store(o + 3 * 64 * BH, a3)
        gl.store(o + 4 * 64 * BH, a4)
        gl.store(o + 5 * 64 * BH, a5)
        gl.store(o + 6 * 64 * BH, a6)
        gl.store(o + 7 * 64 * BH, a7)
        gl.store(base + 8 * 64 * BH + h, gl.sum(l_part, 0))
        gl.store(base + 8 * 64 * BH + BH + h, m_i)
    else:
        total = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
        gl.store(Out + gl.program_id(0) * BH + h, gl.sum(total, 0) + gl.sum(l_part, 0))


def _k_dim(k):
    """Byte of a group that column k of _k_operand's result holds."""
    b, c, h, q, e = k >> 5, (k >> 4) & 1, (k >> 3) & 1, (k >> 1) & 3, k & 1
    return 2 * (16 * b + 8 * h + 2 * q + e) + c


def _v_dim(r):
    """Byte of a group that row r of _v_operand's result holds."""
    w, c, l = r >> 4, (r >> 3) & 1, r & 7
    return 2 * (8 * w + l) + c


def inputs(seed=0):
    """A random tile (fp8 bytes without NaN, scales 2^-4..2^3, bf16 rope), Q,
    and the float64 K the bytes stand for."""
    g = torch.Generator().manual_seed(seed)
    byte = torch.randint(0, 256, (BT, NG * 64), generator=g, dtype=torch.int32)
    byte = torch.where((byte & 0x7F) == 0x7F, byte & 0xF8, byte).to(torch.uint8)
    exps = torch.randint(123, 131, (BT, NG), generator=g, dtype=torch.int64)
    words = torch.zeros(BT, dtype=torch.int64)
    for j in range(NG):
        words |= exps[:, j] << (8 * j)
    rope = (torch.randn(BT, 64, generator=g) * 2).to(torch.bfloat16)
    q = (torch.randn(BH, 512, generator=g) * 0.5).to(torch.bfloat16)
    vals = byte.view(torch.float8_e4m3fn).to(torch.float64).view(BT, NG, 64)
    k = torch.cat(
        [
            (vals * torch.exp2(exps.to(torch.float64) - 127)[:, :, None]).reshape(
                BT, NG * 64
            ),
            rope.to(torch.float64),
        ],
        1,
    )
    kraw = (
        byte.view(BT, NG, 64).permute(1, 0, 2).contiguous().view(torch.int16)
    )  # [NG, BT, 32]
    perm = torch.tensor([_k_dim(j) for j in range(64)])
    qn = torch.stack([q[:, 64 * j : 64 * j + 64][:, perm] for j in range(NG)]).to(
        torch.float16
    )
    return dict(
        kraw=kraw, rope=rope, words=words, qn=qn, qr=q[:, 448:].contiguous(), q=q, k=k
    )


def check(pipe):
    x = inputs()
    dev = "cuda"
    out = torch.zeros(BT * BH + 8 * 64 * BH + 2 * BH, device=dev, dtype=torch.float32)
    qk_scale = 0.0625 * 1.4426950408889634
    _raw_kernel[(1,)](
        out,
        1,
        x["kraw"].to(dev),
        x["rope"].to(dev),
        x["words"].to(dev),
        x["qn"].to(dev),
        x["qr"].to(dev),
        qk_scale,
        CHECK=True,
        PIPE=pipe,
        num_warps=4,
    )
    torch.cuda.synchronize()
    out = out.cpu().to(torch.float64)
    s = out[: BT * BH].view(BT, BH)
    s_ref = x["k"] @ x["q"].to(torch.float64).T
    s_err = ((s - s_ref).abs().max() / s_ref.abs().max()).item()
    m = out[BT * BH + 8 * 64 * BH + BH :][:BH]
    p_ref = torch.exp2(s_ref * qk_scale - m[None, :])
    acc = out[BT * BH : BT * BH + 8 * 64 * BH].view(8, 64, BH)
    o = torch.zeros(BH, 512, dtype=torch.float64)
    vperm = torch.tensor([_v_dim(r) for r in range(64)])
    for j in range(NG):
        o[:, 64 * j + vperm] = acc[j].T / P_BIAS.value
    o[:, 448:] = acc[7].T
    o_ref = p_ref.T @ x["k"]
    o_err = ((o - o_ref).abs().max() / o_ref.abs().max()).item()
    l = out[BT * BH + 8 * 64 * BH :][:BH]
    l_err = ((l - p_ref.sum(0)).abs().max() / p_ref.sum(0).abs().max()).item()
    print(
        json.dumps(
            {
                "check": "raw",
                "pipe": pipe,
                "scores_rel": s_err,
                "out_rel": o_err,
                "sum_rel": l_err,
            }
        )
    )
    return s_err < 2e-3 and o_err < 5e-3 and l_err < 5e-3


def _bounds():
    """lab/bounds' bench module: its timing and its narrow loop (loaded by
    path where a GPU is: it compiles the sm_120 module's helpers)."""
    import importlib.util
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "bounds", "bench.py")
    spec = importlib.util.spec_from_file_location("bounds_bench", path)
    bounds = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bounds)
    return bounds


def main(path, do_check):
    bounds = _bounds()
    ok = [check(0), check(1)] if do_check else None
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    out = torch.zeros(1 << 20, device="cuda", dtype=torch.float32)
    x = {k: v.to("cuda") for k, v in inputs().items()}
    rows = []
    iters = 2000
    for name in ("narrow", "raw", "rawpipe"):
        for programs in (1, sms, 2 * sms):
            if name == "narrow":
                launch = lambda: bounds._narrow_kernel[(programs,)](
                    out, iters, SOFTMAX=1, num_warps=4
                )
            else:
                launch = lambda: _raw_kernel[(programs,)](
                    out,
                    iters,
                    x["kraw"],
                    x["rope"],
                    x["words"],
                    x["qn"],
                    x["qr"],
                    0.09,
                    CHECK=False,
                    PIPE=name == "rawpipe",
                    num_warps=4,
                )
            ms = bounds._time(launch)
            per_sm = max(1, programs // sms)
            row = {
                "loop": name,
                "programs": programs,
                "iters": iters,
                "ms": ms,
                "us_per_tile_per_program": ms * 1000 / iters,
                "us_per_tile_per_sm": ms * 1000 / iters / per_sm,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    meta = {
        "date": time.strftime("%Y-%m-%d"),
        "gpu": props.name,
        "sms": sms,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "check_ok": ok,
        "command": "python3 lab/rawcons/bench.py " + " ".join(sys.argv[1:]),
    }
    with open(path, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print(f"{'loop':8s} {'programs':>8s} {'us/tile/program':>16s} {'us/tile/SM':>11s}")
    for r in rows:
        print(
            f"{r['loop']:8s} {r['programs']:8d} {r['us_per_tile_per_program']:16.3f} {r['us_per_tile_per_sm']:11.3f}"
        )


if __name__ == "__main__":
    main(sys.argv[1], "--check" in sys.argv[2:])
