"""The whole call computed plainly in torch, for the stand-in peers of
calib/peers_check.py: both caches' valid tokens, the sink in the softmax's
denominator. Written from the cache contract (docs/kernel-contract.md)."""

import torch


def _tokens(k_cache):
    """Every token of a paged cache as float32 [pages * page_size, 512]."""
    pages, page_size = k_cache.shape[:2]
    stride = k_cache.stride(0)
    raw = torch.as_strided(k_cache, (pages, stride), (stride, 1)).view(torch.uint8)
    data = raw[:, : page_size * 576].reshape(pages, page_size, 576)
    nope = data[..., :448].contiguous().view(torch.float8_e4m3fn).float()
    rope = data[..., 448:].contiguous().view(torch.bfloat16).float()
    exps = raw[:, page_size * 576 : page_size * 584].reshape(pages, page_size, 8)
    scale = torch.pow(2.0, exps[..., :7].float() - 127).repeat_interleave(64, -1)
    return torch.cat([nope * scale, rope], -1).reshape(pages * page_size, 512)


def attend(kw, sink_in_lse):
    """(out [B, 1, H, 512] bf16, lse [B, H, 1] float32) of SGLang's whole
    call; lse with the sink when sink_in_lse, without it (FlashMLA) if not."""
    q = kw["q"].float()
    batch, _, heads, _ = q.shape
    scale = kw.get("softmax_scale") or q.shape[-1] ** -0.5
    caches = [(kw["k_cache"], kw["indices"], kw.get("topk_length"))]
    if kw.get("extra_k_cache") is not None:
        caches.append(
            (kw["extra_k_cache"], kw["extra_indices"], kw.get("extra_topk_length"))
        )
    sink = kw.get("attn_sink")
    out = torch.zeros(batch, 1, heads, 512)
    lse = torch.full((batch, heads, 1), -torch.inf)
    for b in range(batch):
        keys = []
        for k_cache, idx, length in caches:
            row = idx.reshape(batch, -1)[b].long()
            if length is not None:
                row = row[: int(length[b])]
            keys.append(_tokens(k_cache)[row[row >= 0]])
        k = torch.cat(keys)
        s = (q[b, 0] @ k.T) * scale
        total = torch.logsumexp(s, -1)
        with_sink = total if sink is None else torch.logaddexp(total, sink.float())
        if k.shape[0]:
            out[b, 0] = torch.exp(s - with_sink[:, None]) @ k
        lse[b, :, 0] = with_sink if sink_in_lse else total
    return out.to(torch.bfloat16), lse
