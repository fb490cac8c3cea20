"""Recreate lab/wspp's module copies (not checked in): base/ is commit
5af65b3's sm_120 module; ws/ is that module with a warp-specialised form of
the pipelined kernel for 16-token tiles (configurations pp_h64_t16_k*_w8_s2,
added to its CONFIGS): a producer partition of 4 warps gathers and
dequantises tiles into a ring of two K buffer sets while the 8 MMA warps of
the default partition compute, the two handing the sets over through
mbarriers, registers moved from the producer to the MMA warps by setmaxnreg
(sm_90a and sm_120a only: lab/wsprobe). The MMA warps' tile is
_pp_attend's, unchanged.

From the repository root:  python3 lab/wspp/prepare.py
"""

import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = ("sparse_mla_mma.py", "harness.py", "simt_baseline.py")
# Producer registers; the launch's 168 a thread at 12 warps leaves the MMA
# warps (65,536 - 4 x 32 x 80) / (8 x 32) = 216.
PRODUCER_REGS = 80
MAXNREG = 168

KERNEL = '''

@gluon.jit
def _wspp_producer(
    kset_a,
    kset_b,
    ready,
    empty,
    src,
    start,
    end,
    n_tiles,
    BLOCK_T: gl.constexpr,
    HAS_EXTRA: gl.constexpr,
):
    """Gather, dequantise and store tile after tile into the two buffer sets,
    each once the MMA warps have handed it back; tile i + 1's loads go out
    before tile i's stores."""
    V: gl.constexpr = BLOCK_T * 64 // (4 * 32)
    lay: gl.constexpr = gl.BlockedLayout(
        [1, V], [32 // (64 // V), 64 // V], [4, 1], [1, 0]
    )
    wlay: gl.constexpr = gl.BlockedLayout(
        [1, V // 4], [32 // (64 // V), 64 // V], [4, 1], [1, 0]
    )
    rows: gl.constexpr = gl.SliceLayout(1, lay)
    idx = _pp_indices(src, start, end, HAS_EXTRA, gl.arange(0, BLOCK_T, layout=rows))
    raw, idx = _pp_fetch(src, idx, start + BLOCK_T, end, HAS_EXTRA, BLOCK_T, lay, wlay)
    for i in range(0, n_tiles, 2):
        t0 = start + i * BLOCK_T
        phase = ((i // 2) & 1) ^ 1
        nxt, idx = _pp_fetch(
            src, idx, t0 + 2 * BLOCK_T, end, HAS_EXTRA, BLOCK_T, lay, wlay
        )
        mbarrier.wait(empty.index(0), phase)
        _pp_store_tile(raw, kset_a)
        gl.thread_barrier()
        mbarrier.arrive(ready.index(0), count=1)
        raw, idx = _pp_fetch(
            src, idx, t0 + 3 * BLOCK_T, end, HAS_EXTRA, BLOCK_T, lay, wlay
        )
        if i + 1 < n_tiles:
            mbarrier.wait(empty.index(1), phase)
            _pp_store_tile(nxt, kset_b)
            gl.thread_barrier()
            mbarrier.arrive(ready.index(1), count=1)


@gluon.jit
def _wspp_consumer(
    q_smem,
    kset_a,
    kset_b,
    ready,
    empty,
    src,
    start,
    end,
    n_tiles,
    qk_scale,
    BLOCK_H: gl.constexpr,
    BLOCK_T: gl.constexpr,
    HAS_EXTRA: gl.constexpr,
    mma: gl.constexpr,
):
    """_pp_attend on each tile as the producer delivers it; the set goes back
    once every MMA warp has read it."""
    qs = (q_smem,)
    m_i = gl.full([BLOCK_H], float("-inf"), gl.float32, gl.SliceLayout(1, mma))
    l2 = gl.zeros([BLOCK_H, BLOCK_T], gl.float32, mma)
    z = gl.zeros([BLOCK_H, 64], gl.float32, mma)
    accs = (z, z, z, z, z, z, z, z)
    for i in range(0, n_tiles, 2):
        t0 = start + i * BLOCK_T
        phase = (i // 2) & 1
        mbarrier.wait(ready.index(0), phase)
        m_i, l2, accs = _pp_attend(
            qs, kset_a, src, t0, end, qk_scale, m_i, l2, accs,
            BLOCK_H, BLOCK_T, HAS_EXTRA, mma,
        )
        gl.thread_barrier()
        mbarrier.arrive(empty.index(0), count=1)
        if i + 1 < n_tiles:
            mbarrier.wait(ready.index(1), phase)
            m_i, l2, accs = _pp_attend(
                qs, kset_b, src, t0 + BLOCK_T, end, qk_scale, m_i, l2, accs,
                BLOCK_H, BLOCK_T, HAS_EXTRA, mma,
            )
            gl.thread_barrier()
            mbarrier.arrive(empty.index(1), count=1)
    return (m_i, l2) + accs


@gluon.jit
def _wspp_decode_kernel(
    Q,
    KV,
    Indices,
    TopkLength,
    Out,
    Lse,
    stride_q_batch,
    stride_q_head,
    stride_idx_batch,
    stride_out_batch,
    stride_out_split,
    stride_out_head,
    stride_lse_batch,
    stride_lse_split,
    page_stride,
    page_size,
    topk,
    num_heads,
    qk_scale,
    KV1,
    Indices1,
    TopkLength1,
    stride_idx1_batch,
    page_stride1,
    page_size1,
    topk1,
    Sink,
    HAS_TOPK_LENGTH: gl.constexpr,
    BLOCK_H: gl.constexpr,
    BLOCK_T: gl.constexpr,
    SPLIT_K: gl.constexpr,
    WARPS_N: gl.constexpr,
    NUM_BUFS: gl.constexpr,
    SUBTILES: gl.constexpr,
    HAS_EXTRA: gl.constexpr,
    HAS_TOPK_LENGTH1: gl.constexpr,
    HAS_SINK: gl.constexpr,
):
    """_pp_decode_kernel's arguments and results, warp-specialised: 16-token
    tiles in one piece, two buffer sets, a producer partition of 4 warps."""
    gl.static_assert(NUM_BUFS == 2 and SUBTILES == 1, "two sets of one-piece tiles")
    WARPS_M: gl.constexpr = BLOCK_H // 16
    NUM_WARPS: gl.constexpr = WARPS_M * WARPS_N
    mma: gl.constexpr = gl.NVMMADistributedLayout(
        version=[2, 0], warps_per_cta=[WARPS_M, WARPS_N], instr_shape=[16, 8]
    )
    pid_h = gl.program_id(0)
    pid_s = gl.program_id(1)
    pid_b = gl.program_id(2).to(gl.int64)
    h0 = pid_h * BLOCK_H
    idx_row = Indices + pid_b * stride_idx_batch
    start, end, base1, n0, n_virt = _split_range(
        TopkLength,
        TopkLength1,
        pid_b,
        pid_s,
        topk,
        topk1,
        HAS_TOPK_LENGTH,
        HAS_EXTRA,
        HAS_TOPK_LENGTH1,
        BLOCK_T,
        SPLIT_K,
    )
    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)
    src = (
        KV,
        KV1,
        idx_row,
        Indices1 + pid_b * stride_idx1_batch,
        base1,
        n0,
        n_virt,
        page_stride,
        page_stride1,
        page_size,
        page_size1,
    )
    q_smem = gl.allocate_shared_memory(
        gl.bfloat16,
        [BLOCK_H, HEAD_DIM],
        gl.NVMMASharedLayout.get_default_for([BLOCK_H, HEAD_DIM], gl.bfloat16),
    )
    _pp_load_q(
        Q, q_smem, pid_b, stride_q_batch, stride_q_head, h0, num_heads,
        BLOCK_H, NUM_WARPS,
    )
    set_a = _pp_alloc_set(BLOCK_T)
    set_b = _pp_alloc_set(BLOCK_T)
    ready = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    for b in gl.static_range(2):
        mbarrier.init(ready.index(b), count=1)
        mbarrier.init(empty.index(b), count=1)
    gl.thread_barrier()
    res = gl.warp_specialize(
        [
            (
                _wspp_consumer,
                (
                    q_smem, set_a, set_b, ready, empty, src, start, end, n_tiles,
                    qk_scale, BLOCK_H, BLOCK_T, HAS_EXTRA, mma,
                ),
            ),
            (
                _wspp_producer,
                (set_a, set_b, ready, empty, src, start, end, n_tiles, BLOCK_T, HAS_EXTRA),
            ),
        ],
        [4],
        [_WSPP_PRODUCER_REGS],
    )
    m_i = res[0]
    l2 = res[1]
    accs = (res[2], res[3], res[4], res[5], res[6], res[7], res[8], res[9])
    _pp_epilogue(
        accs,
        m_i,
        _pp_row_sum(l2, NUM_WARPS, mma),
        Out,
        Lse,
        Sink,
        gl.program_id(2).to(gl.int64),
        gl.program_id(1),
        gl.program_id(0) * BLOCK_H,
        num_heads,
        stride_out_batch,
        stride_out_split,
        stride_out_head,
        stride_lse_batch,
        stride_lse_split,
        BLOCK_H,
        SPLIT_K,
        NUM_WARPS,
        HAS_SINK,
        mma,
    )

'''

EDITS = [
    (
        "from triton.experimental.gluon.language.nvidia.ampere import mma_v2\n",
        "from triton.experimental.gluon.language.nvidia.ampere import mma_v2\n"
        "from triton.experimental.gluon.language.nvidia.hopper import mbarrier\n",
    ),
    (
        '    "pp_h64_t32_k1_w8_s1": Config("pp", 64, 32, 1, 8, 1, False),\n',
        '    "pp_h64_t32_k1_w8_s1": Config("pp", 64, 32, 1, 8, 1, False),\n'
        '    "pp_h64_t16_k1_w8_s2": Config("pp", 64, 16, 1, 8, 2, False),\n'
        '    "pp_h64_t16_k2_w8_s2": Config("pp", 64, 16, 2, 8, 2, False),\n'
        '    "pp_h64_t16_k8_w8_s2": Config("pp", 64, 16, 8, 8, 2, False),\n',
    ),
    (
        "\n\n@gluon.jit\ndef _pp_row_sum(",
        KERNEL + "\n@gluon.jit\ndef _pp_row_sum(",
    ),
    (
        """    options = dict(num_warps=c.num_warps)
    decode = _Kernel(_pp_decode_kernel, grid, fixed, bind, constexprs, options)""",
        """    options = dict(num_warps=c.num_warps)
    fn = _pp_decode_kernel
    if c.block_t == 16 and c.num_stages == 2:
        # lab/wspp: the warp-specialised form, launched at a register count
        # setmaxnreg divides between its partitions.
        fn, options = _wspp_decode_kernel, dict(options, maxnreg=_WSPP_MAXNREG)
    decode = _Kernel(fn, grid, fixed, bind, constexprs, options)""",
    ),
    (
        "\n_PP_HALVES_BLOCK_T = ",
        f"\n_WSPP_PRODUCER_REGS = gl.constexpr({PRODUCER_REGS})\n_WSPP_MAXNREG = {MAXNREG}\n_PP_HALVES_BLOCK_T = ",
    ),
]


def main():
    base = os.path.join(HERE, "base")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    for f in FILES:
        text = subprocess.run(
            ["git", "show", f"5af65b3:kernels/sm120/{f}"],
            check=True,
            capture_output=True,
            text=True,
            cwd=HERE,
        ).stdout
        with open(os.path.join(base, f), "w") as out:
            out.write(text)
    ws = os.path.join(HERE, "ws")
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(base, ws)
    path = os.path.join(ws, "sparse_mla_mma.py")
    text = open(path).read()
    for old, new in EDITS:
        assert text.count(old) == 1, (old[:60], text.count(old))
        text = text.replace(old, new)
    with open(path, "w") as out:
        out.write(text)
    print("prepared base, ws")


if __name__ == "__main__":
    main()
