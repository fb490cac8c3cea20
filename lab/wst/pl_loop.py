    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)
    # The scores of tile i + 1 are issued before the P.V of tile i, so the
    # softmax of tile i + 1 runs while the tensor cores do that P.V. Tile
    # 0's scores before the loop (with no tile, on a buffer nobody fills:
    # discarded).
    zero = gl.zeros([BLOCK_T, BLOCK_H], gl.float32, s_layout)
    q_t = q_smem.permute((1, 0))
    mbarrier.wait(ready.index(0), 0, pred=n_tiles > 0)
    s_next = warpgroup_mma(k_ring.index(0), q_t, zero, use_acc=False, is_async=True)
    s_next = warpgroup_mma_init(warpgroup_mma_wait(0, deps=(s_next,)))
    acc = warpgroup_mma_init(acc)
    for i in range(n_tiles):
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
        # Tile i's scores, committed before tile i - 1's P.V.
        s = warpgroup_mma_wait(1, deps=(s_next,))
        s = gl.where(valid[:, None], s * qk_scale, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(s, 0))
        m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = gl.exp2(m_i - m_safe)
        p = gl.exp2(s - m_safe[None, :])
        l_i = l_i * alpha + gl.sum(p, 0)
        acc = warpgroup_mma_wait(0, deps=(acc,))
        # Both MMAs of tile i - 1 are done: its buffer goes back.
        mbarrier.arrive(empty.index((i + NUM_BUFS - 1) % NUM_BUFS), count=1, pred=i > 0)
        nbuf = (i + 1) % NUM_BUFS
        mbarrier.wait(ready.index(nbuf), ((i + 1) // NUM_BUFS) & 1, pred=i + 1 < n_tiles)
        s_next = warpgroup_mma(
            k_ring.index(nbuf), q_t, zero, use_acc=False, is_async=True
        )
        acc = acc * alpha[None, :]
        p_smem.store(p.to(gl.bfloat16))
        fence_async_shared()
        gl.thread_barrier()
        acc = warpgroup_mma(
            k_ring.index(buf).permute((1, 0)), p_smem, acc, is_async=True
        )
        m_i = m_new
    acc, s_next = warpgroup_mma_wait(0, deps=(acc, s_next))

