"""lab/bounds: what the tensor-core pipes of one H200 SM do alone, so the
shipped tiles can be read against them (issue 26).

Four loops, each run by one program an SM (132 programs) and by one program
alone, timed with CUDA events over ITERS iterations:

- hmma_reg: mma.sync m16n8k16 (Gluon mma_v2, the sm_120 family's MMA) on
  register operands, two independent accumulators a warp: the pipe's rate.
- hmma_smem: the same with the B operand read from shared memory (ldmatrix)
  every iteration, as the pipelined tile reads K and V.
- pp_tile: the 64-head pipelined tile's MMAs and operand traffic as the
  shipped module issues them (pp_h64_t32: two 16-token halves, 8 warps
  laid 4 x 2, Q's first two column groups in registers, each P half through
  shared memory to the A operand layout), with or without its softmax;
  no gather, no barriers, no index loads.
- narrow: the sm_90 narrow 16-head consumer's two wgmma groups (S^T = K Q^T,
  m64n16; O^T += V^T P^T, 8 x m64n16) each waited for in full, as shipped,
  with or without its softmax; one warp group.

Every loop's results are stored, so nothing is optimised away; the values
are meaningless. Usage: python3 lab/bounds/bench.py OUT.json
"""

import json
import os
import sys
import time

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import mma_v2
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    warpgroup_mma,
    warpgroup_mma_wait,
)

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "calib")
)
import calibrate  # noqa: E402

# The shipped sm_120 module, whose tile helpers pp_tile calls.
pp = calibrate.load_kernel("kernels/sm120/sparse_mla_mma.py")


@gluon.jit
def _fill(smem, value, layout: gl.constexpr):
    r = gl.arange(0, smem.shape[0], layout=gl.SliceLayout(1, layout))
    c = gl.arange(0, smem.shape[1], layout=gl.SliceLayout(0, layout))
    x = (r[:, None] * 7 + c[None, :] * 3) % 17
    smem.store((x.to(gl.float32) * value - 0.125).to(smem.dtype))


@gluon.jit
def _hmma_reg_kernel(Out, ITERS, NUM_WARPS: gl.constexpr):
    mma: gl.constexpr = gl.NVMMADistributedLayout(
        version=[2, 0], warps_per_cta=[NUM_WARPS, 1], instr_shape=[16, 8]
    )
    dot_a: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
    dot_b: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=2)
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [NUM_WARPS, 1], [1, 0])
    sl: gl.constexpr = gl.NVMMASharedLayout.get_default_for([64, 64], gl.bfloat16)
    a_s = gl.allocate_shared_memory(gl.bfloat16, [16 * NUM_WARPS, 64], sl)
    b_s = gl.allocate_shared_memory(gl.bfloat16, [64, 64], sl)
    _fill(a_s, 0.01, blk)
    _fill(b_s, 0.02, blk)
    gl.thread_barrier()
    a = a_s.load(dot_a)
    b = b_s.load(dot_b)
    z = gl.zeros([16 * NUM_WARPS, 64], gl.float32, mma)
    c0 = z
    # Started apart, or the compiler merges the two identical chains.
    c1 = z + 1.0
    # 2 x (4 k-steps x 8 n-tiles) = 64 HMMA.16816 a warp an iteration.
    for _ in range(ITERS):
        c0 = mma_v2(a, b, c0)
        c1 = mma_v2(a, b, c1)
    c = c0 + c1
    r = gl.arange(0, 16 * NUM_WARPS, layout=gl.SliceLayout(1, mma))
    k = gl.arange(0, 64, layout=gl.SliceLayout(0, mma))
    gl.store(Out + gl.program_id(0) * 0 + r[:, None] * 64 + k[None, :], c)


@gluon.jit
def _hmma_smem_kernel(Out, ITERS, NUM_WARPS: gl.constexpr):
    mma: gl.constexpr = gl.NVMMADistributedLayout(
        version=[2, 0], warps_per_cta=[NUM_WARPS, 1], instr_shape=[16, 8]
    )
    dot_a: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
    dot_b: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=2)
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [NUM_WARPS, 1], [1, 0])
    sl: gl.constexpr = gl.NVMMASharedLayout.get_default_for([64, 64], gl.bfloat16)
    a_s = gl.allocate_shared_memory(gl.bfloat16, [16 * NUM_WARPS, 64], sl)
    b_s = gl.allocate_shared_memory(gl.bfloat16, [2, 64, 64], sl)
    _fill(a_s, 0.01, blk)
    _fill(b_s.index(0), 0.02, blk)
    _fill(b_s.index(1), 0.03, blk)
    gl.thread_barrier()
    a = a_s.load(dot_a)
    z = gl.zeros([16 * NUM_WARPS, 64], gl.float32, mma)
    c0 = z
    c1 = z
    for i in range(ITERS):
        # An index the compiler cannot prove constant, so the ldmatrix
        # stays in the loop (ITERS >> 31 is 0).
        j = (i + ((i >> 1) & (ITERS >> 31))) % 2
        c0 = mma_v2(a, b_s.index(j).load(dot_b), c0)
        c1 = mma_v2(a, b_s.index(1 - j).load(dot_b), c1)
    c = c0 + c1
    r = gl.arange(0, 16 * NUM_WARPS, layout=gl.SliceLayout(1, mma))
    k = gl.arange(0, 64, layout=gl.SliceLayout(0, mma))
    gl.store(Out + r[:, None] * 64 + k[None, :], c)


@gluon.jit
def _pp_tile_kernel(Out, ITERS, SOFTMAX: gl.constexpr):
    BLOCK_H: gl.constexpr = 64
    HALF: gl.constexpr = 16
    mma: gl.constexpr = gl.NVMMADistributedLayout(
        version=[2, 0], warps_per_cta=[4, 2], instr_shape=[16, 8]
    )
    dot_a: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
    dot_b: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=2)
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [8, 1], [1, 0])
    q_smem = gl.allocate_shared_memory(
        gl.bfloat16,
        [BLOCK_H, 512],
        gl.NVMMASharedLayout.get_default_for([BLOCK_H, 512], gl.bfloat16),
    )
    _fill(q_smem, 0.01, blk)
    kset = pp._pp_alloc_set(32)
    for g in gl.static_range(8):
        _fill(kset[g], 0.02, blk)
    gl.thread_barrier()
    qs = pp._pp_q_operands(q_smem, 2, mma)
    lo = pp._pp_rows(kset, 0, HALF)
    hi = pp._pp_rows(kset, HALF, HALF)
    z = gl.zeros([BLOCK_H, 64], gl.float32, mma)
    accs = (z, z, z, z, z, z, z, z)
    m_i = gl.full([BLOCK_H], -1.0e30, gl.float32, gl.SliceLayout(1, mma))
    zh = gl.zeros([BLOCK_H, HALF], gl.float32, mma)
    l2 = zh
    for _ in range(ITERS):
        s_lo = zh
        s_hi = zh
        for g in gl.static_range(8):
            a = pp._pp_q_group(qs, g, dot_a)
            s_lo = mma_v2(a, lo[g].permute((1, 0)).load(dot_b), s_lo)
            s_hi = mma_v2(a, hi[g].permute((1, 0)).load(dot_b), s_hi)
        if SOFTMAX:
            m_new = gl.maximum(m_i, gl.max(gl.maximum(s_lo, s_hi), 1))
            alpha = gl.exp2(m_i - m_new)
            p_lo = gl.exp2(s_lo - m_new[:, None])
            p_hi = gl.exp2(s_hi - m_new[:, None])
            l2 = l2 * alpha[:, None] + p_lo + p_hi
            m_i = m_new
        else:
            alpha = gl.full([BLOCK_H], 0.5, gl.float32, gl.SliceLayout(1, mma))
            p_lo = s_lo
            p_hi = s_hi
        p_lo = gl.convert_layout(p_lo.to(gl.bfloat16), dot_a)
        accs = pp._pp_pv(p_lo, lo, accs, alpha, dot_b)
        p_hi = gl.convert_layout(p_hi.to(gl.bfloat16), dot_a)
        accs = pp._pp_pv_add(p_hi, hi, accs, dot_b)
    total = l2
    for g in gl.static_range(8):
        total = total + gl.convert_layout(
            gl.sum(gl.reshape(accs[g], [BLOCK_H, HALF, 4]), 2), mma
        )
    r = gl.arange(0, BLOCK_H, layout=gl.SliceLayout(1, mma))
    k = gl.arange(0, HALF, layout=gl.SliceLayout(0, mma))
    gl.store(Out + r[:, None] * HALF + k[None, :], total)


@gluon.jit
def _narrow_kernel(Out, ITERS, SOFTMAX: gl.constexpr):
    BLOCK_T: gl.constexpr = 64
    BLOCK_H: gl.constexpr = 16
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_H, 16]
    )
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    k = gl.allocate_shared_memory(
        gl.bfloat16,
        [BLOCK_T, 512],
        gl.NVMMASharedLayout.get_default_for([BLOCK_T, 512], gl.bfloat16),
    )
    q_smem = gl.allocate_shared_memory(
        gl.bfloat16,
        [BLOCK_H, 512],
        gl.NVMMASharedLayout.get_default_for([BLOCK_H, 512], gl.bfloat16),
    )
    p_smem = gl.allocate_shared_memory(
        gl.bfloat16,
        [BLOCK_T, BLOCK_H],
        gl.NVMMASharedLayout.get_default_for([BLOCK_T, BLOCK_H], gl.bfloat16),
    )
    _fill(k, 0.02, blk)
    _fill(q_smem, 0.01, blk)
    fence_async_shared()
    gl.thread_barrier()
    heads_of: gl.constexpr = gl.SliceLayout(0, s_layout)
    acc = gl.zeros([512, BLOCK_H], gl.float32, s_layout)
    m_i = gl.full([BLOCK_H], -1.0e30, gl.float32, heads_of)
    l_part = gl.zeros([BLOCK_T, BLOCK_H], gl.float32, s_layout)
    # The loop is _ws_narrow_consumer's (kernels/sm90), its MMA calls as
    # written there, without the buffer waits, index loads and masking.
    for _ in range(ITERS):
        s = warpgroup_mma(
            k,
            q_smem.permute((1, 0)),
            gl.zeros([BLOCK_T, BLOCK_H], gl.float32, s_layout),
            use_acc=False,
            is_async=True,
        )
        s = warpgroup_mma_wait(0, deps=(s,))
        if SOFTMAX:
            m_new = gl.maximum(m_i, gl.max(s, 0))
            alpha = gl.exp2(m_i - m_new)
            p = gl.exp2(s - m_new[None, :])
            l_part = l_part * alpha[None, :] + p
            acc = acc * alpha[None, :]
            m_i = m_new
        else:
            p = s
        p_smem.store(p.to(gl.bfloat16))
        fence_async_shared()
        gl.thread_barrier()
        acc = warpgroup_mma(k.permute((1, 0)), p_smem, acc, is_async=True)
        acc = warpgroup_mma_wait(0, deps=(acc,))
    total = gl.sum(acc, 0) + gl.sum(l_part, 0)
    h = gl.arange(0, BLOCK_H, layout=heads_of)
    gl.store(Out + h, total)


def _time(launch, reps=3):
    """Best of `reps` timings (ms) of launch(), after one warm-up."""
    launch()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        launch()
        b.record()
        b.synchronize()
        best = min(best, a.elapsed_time(b))
    return best


def main(path):
    dev = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(dev)
    sms = props.multi_processor_count
    out = torch.empty(1 << 20, device="cuda", dtype=torch.float32)
    rows = []

    def run(name, kernel, iters, num_warps, hmma_per_iter, programs, **kw):
        def launch():
            kernel[(programs,)](out, iters, num_warps=num_warps, **kw)

        ms = _time(launch)
        us_iter = ms * 1000.0 / iters
        row = {
            "loop": name,
            "programs": programs,
            "num_warps": num_warps,
            "iters": iters,
            "ms": ms,
            "us_per_iter": us_iter,
        }
        if hmma_per_iter:
            # Programs beyond one an SM share an SM (or run in a later wave,
            # which the time then shows).
            per_sm = hmma_per_iter * max(1, programs // sms)
            row["hmma_per_iter_per_sm"] = per_sm
            row["hmma_per_us_per_sm"] = per_sm / us_iter
            # m16n8k16: 16 * 8 * 16 = 2,048 multiply-adds, 4,096 FLOP.
            row["tflops_gpu"] = per_sm / us_iter * 4096 * sms / 1e6
        rows.append(row)
        print(json.dumps(row), flush=True)

    # 64 HMMA a warp an iteration; two programs an SM (or a second wave)
    # for the register-operand loop.
    for name, kernel, warps, grids in (
        ("hmma_reg", _hmma_reg_kernel, (4, 8, 16), (1, sms, 2 * sms)),
        ("hmma_smem", _hmma_smem_kernel, (4, 8), (1, sms)),
    ):
        for nw in warps:
            for programs in grids:
                run(name, kernel, 20000, nw, 64 * nw, programs, NUM_WARPS=nw)
    # pp_tile: 128 HMMA a warp a tile, 2 halves x (8 groups x 4 k-steps of
    # scores + 8 groups x 4 n-tiles of P.V), 8 warps. narrow: wgmma, not
    # counted in HMMA.
    for name, kernel, warps, hmma in (
        ("pp_tile", _pp_tile_kernel, 8, 1024),
        ("narrow", _narrow_kernel, 4, 0),
    ):
        for sm in (0, 1):
            for programs in (1, sms):
                label = name + ("+softmax" if sm else "")
                run(label, kernel, 4000, warps, hmma, programs, SOFTMAX=sm)
    meta = {
        "date": time.strftime("%Y-%m-%d"),
        "gpu": props.name,
        "sms": sms,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "command": "python3 lab/bounds/bench.py " + path,
    }
    with open(path, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
