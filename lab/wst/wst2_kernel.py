@gluon.jit
def _wst2_group(
    QDesc,
    q_row,
    q_ready,
    q_smem,
    k_ring,
    ready,
    empty,
    p_smem,
    merge_smem,
    m_smem,
    l_smem,
    merged,
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
    GROUP: gl.constexpr,
):
    """_wst_consumer's tile loop over every other tile (GROUP 0: tiles 0, 2,
    4...; GROUP 1: 1, 3, 5...), each group with its own P^T buffer, row
    state and accumulator; group 1 hands its state to group 0 through
    shared memory at the end (merged), and group 0 merges and writes."""
    if GROUP == 0:
        _ws_load_q(QDesc, q_row, q_ready, q_smem, BLOCK_H)
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
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_H, 16]
    )
    heads_of: gl.constexpr = gl.SliceLayout(0, s_layout)
    mbarrier.wait(q_ready, 0)
    acc = gl.zeros([HEAD_DIM, BLOCK_H], gl.float32, s_layout)
    m_i = gl.full([BLOCK_H], float("-inf"), gl.float32, heads_of)
    l_i = gl.zeros([BLOCK_H], gl.float32, heads_of)
    offs_t = gl.arange(0, BLOCK_T, layout=gl.SliceLayout(1, s_layout))
    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)
    for j in range(gl.cdiv(gl.maximum(n_tiles - GROUP, 0), 2)):
        i = 2 * j + GROUP
        buf = i % NUM_BUFS
        valid = _ws_tile_valid(
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
            k,
            q_smem.permute((1, 0)),
            gl.zeros([BLOCK_T, BLOCK_H], gl.float32, s_layout),
            use_acc=False,
            is_async=True,
        )
        s = warpgroup_mma_wait(0, deps=(s,))
        s = gl.where(valid[:, None], s * qk_scale, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(s, 0))
        m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = gl.exp2(m_i - m_safe)
        p = gl.exp2(s - m_safe[None, :])
        l_i = l_i * alpha + gl.sum(p, 0)
        acc = acc * alpha[None, :]
        p_smem.store(p.to(gl.bfloat16))
        fence_async_shared()
        gl.thread_barrier()
        acc = warpgroup_mma(k.permute((1, 0)), p_smem, acc, is_async=True)
        acc = warpgroup_mma_wait(0, deps=(acc,))
        mbarrier.arrive(empty.index(buf), count=1)
        m_i = m_new

    if GROUP == 1:
        # Every thread's part stored before the one arrive.
        merge_smem.store(acc)
        m_smem.store(m_i)
        l_smem.store(l_i)
        gl.thread_barrier()
        mbarrier.arrive(merged, count=1)
        return
    mbarrier.wait(merged, 0)
    m_1 = m_smem.load(heads_of)
    l_1 = l_smem.load(heads_of)
    m_new = gl.maximum(m_i, m_1)
    m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
    a_0 = gl.exp2(m_i - m_safe)
    a_1 = gl.exp2(m_1 - m_safe)
    acc = acc * a_0[None, :] + merge_smem.load(s_layout) * a_1[None, :]
    l_i = l_i * a_0 + l_1 * a_1
    m_i = m_new
    empty_row = l_i == 0.0
    o = acc * gl.where(empty_row, 0.0, 1.0 / l_i)[None, :]
    lse2 = gl.where(empty_row, float("-inf"), m_i + gl.log2(l_i))
    heads = pid_h * BLOCK_H + gl.arange(0, BLOCK_H, layout=heads_of)
    head_ok = heads < num_heads
    if SPLIT_K == 1 and HAS_SINK:
        keep, lse2 = _gl_sink_weight(lse2, Sink, heads, head_ok)
        o = o * keep[None, :]
    out_layout: gl.constexpr = gl.BlockedLayout([1, 8], [1, 32], [4, 1], [1, 0])
    o = gl.convert_layout(gl.permute(o.to(gl.bfloat16), (1, 0)), out_layout)
    out_heads = pid_h * BLOCK_H + gl.arange(
        0, BLOCK_H, layout=gl.SliceLayout(1, out_layout)
    )
    out_dims = gl.arange(0, HEAD_DIM, layout=gl.SliceLayout(0, out_layout))
    o_ptr = (
        Out
        + pid_b * stride_out_batch
        + out_heads[:, None] * stride_out_head
        + out_dims[None, :]
    )
    o_mask = (out_heads < num_heads)[:, None]
    if SPLIT_K == 1:
        gl.store(o_ptr, o, mask=o_mask)
        gl.store(Lse + pid_b * stride_lse_batch + heads, lse2 * LN2, mask=head_ok)
    else:
        gl.store(o_ptr + pid_s * stride_out_split, o, mask=o_mask)
        lse_ptr = Lse + pid_b * stride_lse_batch + pid_s * stride_lse_split + heads
        gl.store(lse_ptr, lse2, mask=head_ok)


@gluon.jit
def _wst2_kernel(
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
    """_wst_kernel with two consumer warp groups on alternate tiles
    (_wst2_group), merged at the end: two tile loops an SM instead of one."""
    gl.static_assert(not CLUSTER_MERGE, "no cluster merge")
    pid_h = gl.program_id(0)
    pid_s = gl.program_id(1)
    pid_b = gl.program_id(2).to(gl.int64)

    k_ring = gl.allocate_shared_memory(
        gl.bfloat16,
        [NUM_BUFS, BLOCK_T, HEAD_DIM],
        gl.NVMMASharedLayout.get_default_for([BLOCK_T, HEAD_DIM], gl.bfloat16),
    )
    q_smem = gl.allocate_shared_memory(
        gl.bfloat16,
        [BLOCK_H, HEAD_DIM],
        gl.NVMMASharedLayout.get_default_for([BLOCK_H, HEAD_DIM], gl.bfloat16),
    )
    p_smem = gl.allocate_shared_memory(
        gl.bfloat16,
        [BLOCK_T, BLOCK_H],
        gl.NVMMASharedLayout.get_default_for([BLOCK_T, BLOCK_H], gl.bfloat16),
    )
    p1_smem = gl.allocate_shared_memory(
        gl.bfloat16,
        [BLOCK_T, BLOCK_H],
        gl.NVMMASharedLayout.get_default_for([BLOCK_T, BLOCK_H], gl.bfloat16),
    )
    flat: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[0])
    merge_smem = gl.allocate_shared_memory(
        gl.float32, [HEAD_DIM, BLOCK_H], gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0])
    )
    m_smem = gl.allocate_shared_memory(gl.float32, [BLOCK_H], flat)
    l_smem = gl.allocate_shared_memory(gl.float32, [BLOCK_H], flat)
    merged = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    ready = gl.allocate_shared_memory(
        gl.int64, [NUM_BUFS, 1], mbarrier.MBarrierLayout()
    )
    empty = gl.allocate_shared_memory(
        gl.int64, [NUM_BUFS, 1], mbarrier.MBarrierLayout()
    )
    q_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    for b in gl.static_range(NUM_BUFS):
        mbarrier.init(ready.index(b), count=1)
        mbarrier.init(empty.index(b), count=1)
    mbarrier.init(q_ready, count=1)
    mbarrier.init(merged, count=1)
    fence_async_shared()
    q_row = pid_b.to(gl.int32) * num_heads + pid_h * BLOCK_H
    idx_row = Indices + pid_b * stride_idx_batch
    idx1_row = Indices1 + pid_b * stride_idx1_batch

    gl.warp_specialize(
        [
            (
                _wst2_group,
                (
                    QDesc,
                    q_row,
                    q_ready,
                    q_smem,
                    k_ring,
                    ready,
                    empty,
                    p_smem,
                    merge_smem,
                    m_smem,
                    l_smem,
                    merged,
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
                    0,
                ),
            ),
            (
                _wst2_group,
                (
                    QDesc,
                    q_row,
                    q_ready,
                    q_smem,
                    k_ring,
                    ready,
                    empty,
                    p1_smem,
                    merge_smem,
                    m_smem,
                    l_smem,
                    merged,
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
                    1,
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
        [4, WST_PRODUCER_WARPS],
        [WST2_GROUP_REGS, WST2_PRODUCER_REGS],
    )
