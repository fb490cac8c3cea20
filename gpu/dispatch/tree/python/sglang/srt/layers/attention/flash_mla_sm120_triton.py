"""Stand-in for SGLang's SIMT module, upstream-shaped: the names, signatures
and call structure SGLang's flash_mla_sm120_triton.py has (a per-cache
kernel called once per cache by the whole call, which merges the two by
log-sum-exp and applies the attention sink). The per-cache kernel is
mlagen's per-head SIMT baseline; the merge and the sink are written here.
"""

import importlib.util
import os

import torch

_spec = importlib.util.spec_from_file_location(
    "simt", os.path.join(os.environ["MLAGEN_KERNELS"], "simt_baseline.py")
)
_simt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_simt)
CALLS = {"simt": 0}


def _run_triton_sparse_decode(q, k_cache, indices, topk_length, softmax_scale):
    CALLS["simt"] += 1
    return _simt.sparse_decode(q, k_cache, indices, topk_length, softmax_scale)


def _merge_by_lse(out_a, lse_a, out_b, lse_b):
    """Two partial softmaxes over disjoint tokens as one ([B, 1, H] lse)."""
    top = torch.maximum(lse_a, lse_b)
    top = torch.where(torch.isneginf(top), torch.zeros_like(top), top)
    w_a, w_b = torch.exp(lse_a - top), torch.exp(lse_b - top)
    total = w_a + w_b
    merged = (w_a[..., None] * out_a.float() + w_b[..., None] * out_b.float()) / (
        total.clamp_min(1e-30)[..., None]
    )
    lse = torch.where(
        total > 0, top + torch.log(total), torch.full_like(top, -torch.inf)
    )
    return merged.to(torch.bfloat16), lse


def _add_sink(out, lse, attn_sink):
    """exp(sink) joins the denominator (and the lse) and adds no value."""
    with_sink = torch.logaddexp(lse, attn_sink.view(1, 1, -1).float())
    keep = torch.exp(lse - with_sink)
    return (out.float() * keep[..., None]).to(torch.bfloat16), with_sink


def flash_mla_sparse_decode_triton(
    q,
    k_cache,
    indices,
    topk_length,
    attn_sink,
    head_dim_v,
    softmax_scale,
    extra_k_cache=None,
    extra_indices=None,
    extra_topk_length=None,
):
    """The whole call: both caches, merged, with the sink; lse as [B, H, 1]."""
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** (-0.5)
    out, lse = _run_triton_sparse_decode(
        q, k_cache, indices, topk_length, softmax_scale
    )
    if extra_k_cache is not None and extra_indices is not None:
        out_extra, lse_extra = _run_triton_sparse_decode(
            q, extra_k_cache, extra_indices, extra_topk_length, softmax_scale
        )
        out, lse = _merge_by_lse(out, lse, out_extra, lse_extra)
    if attn_sink is not None:
        out, lse = _add_sink(out, lse, attn_sink)
    return out, lse.permute(0, 2, 1)
