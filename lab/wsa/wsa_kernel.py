# lab/wsa: inserted into a copy of kernels/sm90/sparse_mla_mma.py by
# prepare.py, before _ws_launches. Not a module of its own. This is the
# kernel lab/wsa/device.sh measured (results/); the template's
# _ws_split_kernel is this code renamed, with both groups staging their
# epilogue in the last tile's buffer (each in its own column half), which
# also serves one-buffer rings. prepare.py now applies to a module that
# already has it: it is kept as the record of the measured prototype.

# Registers of the value group (setmaxnreg); the score group, the default
# partition, gets what the launch's 168 a thread leaves: 504 - this -
# WS_PRODUCER_REGS.
WSA_VALUE_REGS = gl.constexpr(160)


@gluon.jit
def _wsa_valid(
    start, i, end, base1, n0, n_virt, idx_row, idx1_row, offs_t, BLOCK_T, HAS_EXTRA
):
    if HAS_EXTRA:
        _, _, row, left, _, _, _ = _gl_tile_source(
            start + i * BLOCK_T,
            base1,
            n0,
            n_virt,
            idx_row,
            idx1_row,
            idx_row,
            idx1_row,
            0,
            0,
            1,
            1,
            True,
        )
        valid = gl.load(row + offs_t, mask=offs_t < left, other=-1) >= 0
    else:
        tok = start + i * BLOCK_T + offs_t
        valid = gl.load(idx_row + tok, mask=tok < end, other=-1) >= 0
    return valid


@gluon.jit
def _wsa_store(
    acc,
    m_i,
    l_i,
    COL0: gl.constexpr,
    WITH_LSE: gl.constexpr,
    Out,
    Lse,
    Sink,
    pid_b,
    pid_h,
    pid_s,
    num_heads,
    stride_out_batch,
    stride_out_split,
    stride_out_head,
    stride_lse_batch,
    stride_lse_split,
    BLOCK_H: gl.constexpr,
    SPLIT_K: gl.constexpr,
    HAS_SINK: gl.constexpr,
    acc_layout: gl.constexpr,
    stage,
):
    """_ws_decode_kernel's epilogue for output columns [COL0, COL0 + 256)
    of one warp group (and the lse where WITH_LSE). The rows change layout
    through `stage`, half of a K buffer no one reads any more: Triton's own
    scratch for it would take the program past 227 KB."""
    rows: gl.constexpr = gl.SliceLayout(1, acc_layout)
    l_i = gl.convert_layout(l_i, rows)
    m_i = gl.convert_layout(m_i, rows)
    empty_row = l_i == 0.0
    o = acc * gl.where(empty_row, 0.0, 1.0 / l_i)[:, None]
    lse2 = gl.where(empty_row, float("-inf"), m_i + gl.log2(l_i))
    heads = pid_h * BLOCK_H + gl.arange(0, BLOCK_H, layout=rows)
    head_ok = heads < num_heads
    if SPLIT_K == 1 and HAS_SINK:
        keep, lse2 = _gl_sink_weight(lse2, Sink, heads, head_ok)
        o = o * keep[:, None]
    out_layout: gl.constexpr = gl.BlockedLayout([1, 8], [1, 32], [4, 1], [1, 0])
    stage.store(o.to(gl.bfloat16))
    gl.thread_barrier()
    o = stage.load(out_layout)
    out_heads = pid_h * BLOCK_H + gl.arange(
        0, BLOCK_H, layout=gl.SliceLayout(1, out_layout)
    )
    out_dims = COL0 + gl.arange(0, HEAD_DIM // 2, layout=gl.SliceLayout(0, out_layout))
    o_ptr = (
        Out
        + pid_b * stride_out_batch
        + out_heads[:, None] * stride_out_head
        + out_dims[None, :]
    )
    o_mask = (out_heads < num_heads)[:, None]
    if SPLIT_K == 1:
        gl.store(o_ptr, o, mask=o_mask)
        if WITH_LSE:
            gl.store(Lse + pid_b * stride_lse_batch + heads, lse2 * LN2, mask=head_ok)
    else:
        gl.store(o_ptr + pid_s * stride_out_split, o, mask=o_mask)
        if WITH_LSE:
            lse_ptr = Lse + pid_b * stride_lse_batch + pid_s * stride_lse_split + heads
            gl.store(lse_ptr, lse2, mask=head_ok)


@gluon.jit
def _wsa_scores(
    QDesc,
    q_row,
    q_ready,
    q_smem,
    k_ring,
    ready,
    empty,
    p_smem,
    a_smem,
    m_smem,
    l_smem,
    p_full,
    p_free,
    ml_ready,
    idx_row,
    TopkLength,
    pid_b,
    pid_h,
    pid_s,
    topk,
    qk_scale,
    idx1_row,
    TopkLength1,
    topk1,
    Out,
    Lse,
    Sink,
    num_heads,
    stride_out_batch,
    stride_out_split,
    stride_out_head,
    stride_lse_batch,
    stride_lse_split,
    HAS_TOPK_LENGTH: gl.constexpr,
    BLOCK_H: gl.constexpr,
    BLOCK_T: gl.constexpr,
    SPLIT_K: gl.constexpr,
    NUM_BUFS: gl.constexpr,
    HAS_EXTRA: gl.constexpr,
    HAS_TOPK_LENGTH1: gl.constexpr,
    HAS_SINK: gl.constexpr,
):
    """The score group (one warp group): each tile's whole S = Q.Kt, the
    online softmax within its own warps (no exchange), P.V for output
    columns [0, 256) with P from registers, and P and the rescale factor
    handed to the value group through shared memory."""
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 256, 16]
    )
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_T, 16]
    )
    p_layout: gl.constexpr = gl.DotOperandLayout(
        operand_index=0, parent=acc_layout, k_width=2
    )
    mbarrier.expect(q_ready, BLOCK_H * HEAD_DIM * 2)
    for j in gl.static_range(HEAD_DIM // 64):
        tma.async_copy_global_to_shared(
            QDesc, [q_row, j * 64], q_ready, q_smem.slice(j * 64, 64, dim=1)
        )
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
    mbarrier.wait(q_ready, 0)
    acc = gl.zeros([BLOCK_H, HEAD_DIM // 2], gl.float32, acc_layout)
    m_i = gl.full([BLOCK_H], float("-inf"), gl.float32, gl.SliceLayout(1, s_layout))
    l_i = gl.zeros([BLOCK_H], gl.float32, gl.SliceLayout(1, s_layout))
    offs_t = gl.arange(0, BLOCK_T, layout=gl.SliceLayout(0, s_layout))
    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)
    for i in range(n_tiles):
        buf = i % NUM_BUFS
        valid = _wsa_valid(
            start,
            i,
            end,
            base1,
            n0,
            n_virt,
            idx_row,
            idx1_row,
            offs_t,
            BLOCK_T,
            HAS_EXTRA,
        )
        mbarrier.wait(ready.index(buf), (i // NUM_BUFS) & 1)
        k = k_ring.index(buf)
        s = warpgroup_mma(
            q_smem,
            k.permute((1, 0)),
            gl.zeros([BLOCK_H, BLOCK_T], gl.float32, s_layout),
            use_acc=False,
            is_async=True,
        )
        s = warpgroup_mma_wait(0, deps=(s,))
        s = gl.where(valid[None, :], s * qk_scale, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(s, 1))
        m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = gl.exp2(m_i - m_safe)
        p = gl.exp2(s - m_safe[:, None])
        l_i = l_i * alpha + gl.sum(p, 1)
        p = p.to(gl.bfloat16)
        # The value group has read the last tile's P and factor.
        mbarrier.wait(p_free, (i & 1) ^ 1)
        p_smem.store(p)
        a_smem.store(alpha)
        fence_async_shared()
        gl.thread_barrier()
        mbarrier.arrive(p_full, count=1)
        acc = acc * gl.convert_layout(alpha, gl.SliceLayout(1, acc_layout))[:, None]
        acc = warpgroup_mma(
            gl.convert_layout(p, p_layout),
            k.slice(0, HEAD_DIM // 2, dim=1),
            acc,
            is_async=True,
        )
        acc = warpgroup_mma_wait(0, deps=(acc,))
        gl.thread_barrier()
        mbarrier.arrive(empty.index(buf), count=1)
        m_i = m_new
    m_smem.store(m_i)
    l_smem.store(l_i)
    gl.thread_barrier()
    mbarrier.arrive(ml_ready, count=1)
    _wsa_store(
        acc,
        m_i,
        l_i,
        0,
        True,
        Out,
        Lse,
        Sink,
        pid_b,
        pid_h,
        pid_s,
        num_heads,
        stride_out_batch,
        stride_out_split,
        stride_out_head,
        stride_lse_batch,
        stride_lse_split,
        BLOCK_H,
        SPLIT_K,
        HAS_SINK,
        acc_layout,
        # Both groups are past every tile but the last; the value group
        # may still read the last one's buffer.
        k_ring.index(n_tiles % NUM_BUFS).slice(0, HEAD_DIM // 2, dim=1),
    )


@gluon.jit
def _wsa_values(
    k_ring,
    ready,
    empty,
    p_smem,
    a_smem,
    m_smem,
    l_smem,
    p_full,
    p_free,
    ml_ready,
    TopkLength,
    pid_b,
    pid_h,
    pid_s,
    topk,
    TopkLength1,
    topk1,
    Out,
    Lse,
    Sink,
    num_heads,
    stride_out_batch,
    stride_out_split,
    stride_out_head,
    stride_lse_batch,
    stride_lse_split,
    HAS_TOPK_LENGTH: gl.constexpr,
    BLOCK_H: gl.constexpr,
    BLOCK_T: gl.constexpr,
    SPLIT_K: gl.constexpr,
    NUM_BUFS: gl.constexpr,
    HAS_EXTRA: gl.constexpr,
    HAS_TOPK_LENGTH1: gl.constexpr,
    HAS_SINK: gl.constexpr,
):
    """The value group (one warp group): P.V for output columns [256, 512)
    with P and the rescale factor from the score group's shared memory."""
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 256, 16]
    )
    rows: gl.constexpr = gl.SliceLayout(1, acc_layout)
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
    acc = gl.zeros([BLOCK_H, HEAD_DIM // 2], gl.float32, acc_layout)
    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)
    for i in range(n_tiles):
        buf = i % NUM_BUFS
        mbarrier.wait(ready.index(buf), (i // NUM_BUFS) & 1)
        mbarrier.wait(p_full, i & 1)
        alpha = a_smem.load(rows)
        acc = acc * alpha[:, None]
        acc = warpgroup_mma(
            p_smem,
            k_ring.index(buf).slice(HEAD_DIM // 2, HEAD_DIM // 2, dim=1),
            acc,
            is_async=True,
        )
        acc = warpgroup_mma_wait(0, deps=(acc,))
        gl.thread_barrier()
        mbarrier.arrive(p_free, count=1)
        mbarrier.arrive(empty.index(buf), count=1)
    mbarrier.wait(ml_ready, 0)
    m_i = m_smem.load(rows)
    l_i = l_smem.load(rows)
    _wsa_store(
        acc,
        m_i,
        l_i,
        HEAD_DIM // 2,
        False,
        Out,
        Lse,
        Sink,
        pid_b,
        pid_h,
        pid_s,
        num_heads,
        stride_out_batch,
        stride_out_split,
        stride_out_head,
        stride_lse_batch,
        stride_lse_split,
        BLOCK_H,
        SPLIT_K,
        HAS_SINK,
        acc_layout,
        # The score group is past every tile (ml_ready): the last one's
        # buffer, which it does not stage in.
        k_ring.index((n_tiles + NUM_BUFS - 1) % NUM_BUFS).slice(
            0, HEAD_DIM // 2, dim=1
        ),
    )


@gluon.jit
def _wsa_decode_kernel(
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
    QDesc,
    FinalOut,
    FinalLse,
    stride_fout_batch,
    stride_fout_head,
    stride_flse_batch,
    HAS_TOPK_LENGTH: gl.constexpr,
    BLOCK_H: gl.constexpr,
    BLOCK_T: gl.constexpr,
    SPLIT_K: gl.constexpr,
    NUM_BUFS: gl.constexpr,
    CLUSTER_MERGE: gl.constexpr,
    KV1,
    Indices1,
    TopkLength1,
    stride_idx1_batch,
    page_stride1,
    page_size1,
    topk1,
    Sink,
    HAS_EXTRA: gl.constexpr,
    HAS_TOPK_LENGTH1: gl.constexpr,
    HAS_SINK: gl.constexpr,
):
    """_ws_decode_kernel's arguments and results (no cluster merge) with
    FlashMLA's split of the consumers: a score group that computes every
    tile's whole score tile, its softmax and the left half of P.V, and a
    value group that computes the right half of P.V from P in shared
    memory, a tile behind. Launched with num_warps 4 (the score group)."""
    gl.static_assert(not CLUSTER_MERGE, "lab/wsa: no cluster merge")
    pid_h = gl.program_id(0)
    pid_s = gl.program_id(1)
    pid_b = gl.program_id(2).to(gl.int64)

    q_smem = gl.allocate_shared_memory(
        gl.bfloat16,
        [BLOCK_H, HEAD_DIM],
        gl.NVMMASharedLayout.get_default_for([BLOCK_H, HEAD_DIM], gl.bfloat16),
    )
    k_ring = gl.allocate_shared_memory(
        gl.bfloat16,
        [NUM_BUFS, BLOCK_T, HEAD_DIM],
        gl.NVMMASharedLayout.get_default_for([BLOCK_T, HEAD_DIM], gl.bfloat16),
    )
    p_smem = gl.allocate_shared_memory(
        gl.bfloat16,
        [BLOCK_H, BLOCK_T],
        gl.NVMMASharedLayout.get_default_for([BLOCK_H, BLOCK_T], gl.bfloat16),
    )
    flat: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[0])
    a_smem = gl.allocate_shared_memory(gl.float32, [BLOCK_H], flat)
    m_smem = gl.allocate_shared_memory(gl.float32, [BLOCK_H], flat)
    l_smem = gl.allocate_shared_memory(gl.float32, [BLOCK_H], flat)
    ready = gl.allocate_shared_memory(
        gl.int64, [NUM_BUFS, 1], mbarrier.MBarrierLayout()
    )
    empty = gl.allocate_shared_memory(
        gl.int64, [NUM_BUFS, 1], mbarrier.MBarrierLayout()
    )
    q_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    p_full = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    p_free = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    ml_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    for b in gl.static_range(NUM_BUFS):
        mbarrier.init(ready.index(b), count=1)
        # Both consumer groups hand each buffer back.
        mbarrier.init(empty.index(b), count=2)
    mbarrier.init(q_ready, count=1)
    mbarrier.init(p_full, count=1)
    mbarrier.init(p_free, count=1)
    mbarrier.init(ml_ready, count=1)
    fence_async_shared()
    q_row = pid_b.to(gl.int32) * num_heads + pid_h * BLOCK_H
    idx_row = Indices + pid_b * stride_idx_batch
    idx1_row = Indices1 + pid_b * stride_idx1_batch

    gl.warp_specialize(
        [
            (
                _wsa_scores,
                (
                    QDesc,
                    q_row,
                    q_ready,
                    q_smem,
                    k_ring,
                    ready,
                    empty,
                    p_smem,
                    a_smem,
                    m_smem,
                    l_smem,
                    p_full,
                    p_free,
                    ml_ready,
                    idx_row,
                    TopkLength,
                    pid_b,
                    pid_h,
                    pid_s,
                    topk,
                    qk_scale,
                    idx1_row,
                    TopkLength1,
                    topk1,
                    Out,
                    Lse,
                    Sink,
                    num_heads,
                    stride_out_batch,
                    stride_out_split,
                    stride_out_head,
                    stride_lse_batch,
                    stride_lse_split,
                    HAS_TOPK_LENGTH,
                    BLOCK_H,
                    BLOCK_T,
                    SPLIT_K,
                    NUM_BUFS,
                    HAS_EXTRA,
                    HAS_TOPK_LENGTH1,
                    HAS_SINK,
                ),
            ),
            (
                _wsa_values,
                (
                    k_ring,
                    ready,
                    empty,
                    p_smem,
                    a_smem,
                    m_smem,
                    l_smem,
                    p_full,
                    p_free,
                    ml_ready,
                    TopkLength,
                    pid_b,
                    pid_h,
                    pid_s,
                    topk,
                    TopkLength1,
                    topk1,
                    Out,
                    Lse,
                    Sink,
                    num_heads,
                    stride_out_batch,
                    stride_out_split,
                    stride_out_head,
                    stride_lse_batch,
                    stride_lse_split,
                    HAS_TOPK_LENGTH,
                    BLOCK_H,
                    BLOCK_T,
                    SPLIT_K,
                    NUM_BUFS,
                    HAS_EXTRA,
                    HAS_TOPK_LENGTH1,
                    HAS_SINK,
                ),
            ),
            (
                _ws_producer,
                (
                    k_ring,
                    ready,
                    empty,
                    KV,
                    idx_row,
                    TopkLength,
                    pid_b,
                    pid_s,
                    topk,
                    page_stride,
                    page_size,
                    KV1,
                    idx1_row,
                    TopkLength1,
                    topk1,
                    page_stride1,
                    page_size1,
                    HAS_TOPK_LENGTH,
                    BLOCK_T,
                    SPLIT_K,
                    NUM_BUFS,
                    CLUSTER_MERGE,
                    HAS_EXTRA,
                    HAS_TOPK_LENGTH1,
                ),
            ),
        ],
        [4, WS_PRODUCER_WARPS],
        [WSA_VALUE_REGS, WS_PRODUCER_REGS],
    )
