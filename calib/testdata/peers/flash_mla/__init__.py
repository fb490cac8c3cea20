"""A stand-in for DeepSeek's FlashMLA with its interface (get_mla_metadata,
flash_mla_with_kvcache with its keyword names and its checks on this layout)
and a plain torch computation, for calib/peers_check.py on a CPU: it checks
the harness's FlashMLA adapter, not FlashMLA. Like FlashMLA, the lse it
returns leaves the attention sink out."""

import _attend


class _Sched:
    have_initialized = False


def get_mla_metadata(*args, **kwargs):
    return _Sched(), None


def flash_mla_with_kvcache(
    q,
    k_cache,
    block_table,
    cache_seqlens,
    head_dim_v,
    tile_scheduler_metadata,
    num_splits=None,
    softmax_scale=None,
    causal=False,
    is_fp8_kvcache=False,
    indices=None,
    attn_sink=None,
    extra_k_cache=None,
    extra_indices_in_kvcache=None,
    topk_length=None,
    extra_topk_length=None,
):
    assert isinstance(tile_scheduler_metadata, _Sched) and num_splits is None
    assert is_fp8_kvcache and not causal and head_dim_v == 512
    assert q.shape[2] in (64, 128), "FlashMLA takes 64 or 128 heads"
    for k, idx in ((k_cache, indices), (extra_k_cache, extra_indices_in_kvcache)):
        if k is None:
            continue
        assert idx.dim() == 3 and idx.shape[:2] == (q.shape[0], q.shape[1])
        assert k.stride(1) == 584 and k.stride(0) % 576 == 0
    assert indices.shape[-1] % 64 == 0
    tile_scheduler_metadata.have_initialized = True
    kw = dict(
        q=q,
        k_cache=k_cache,
        indices=indices,
        topk_length=topk_length,
        attn_sink=attn_sink,
        softmax_scale=softmax_scale,
        extra_k_cache=extra_k_cache,
        extra_indices=extra_indices_in_kvcache,
        extra_topk_length=extra_topk_length,
    )
    return _attend.attend(kw, sink_in_lse=False)
