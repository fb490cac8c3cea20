"""The whole attention call's float64 reference, its inputs, and today's glue path.

SGLang's flash_mla_sparse_decode_triton attends over two paged caches (the
sliding window, and optionally an "extra" compressed cache), merges the two
by log-sum-exp and applies the attention sink. As one function of its
inputs: a softmax over the union of both caches' valid tokens, whose
denominator also holds exp(sink[h]); the sink carries no value. A row with
no valid token gives out 0 and lse -inf, or lse = sink with a sink.

Used by cpu_check.py (Triton interpreter) and device_check.py (the H200).
The cache layout helpers come from base_harness.py, a snapshot of
kernels/sm90/harness.py at 4f90655.
"""

import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import base_harness as bh  # noqa: E402

HEAD_DIM = bh.HEAD_DIM
RTOL_OUT, ATOL_LSE = bh.RTOL_OUT, bh.ATOL_LSE


def reference_full(q, kvs, indices, lengths, sink, softmax_scale):
    """float64 (out [B, 1, H, 512], lse [B, H, 1]) of the whole call.

    kvs: each cache's dequantised [tokens, 512] float64 vectors; indices and
    lengths: each cache's index tensor [B, ...] and optional topk_length.
    """
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** -0.5
    batch, _, heads, _ = q.shape
    out = torch.zeros(batch, 1, heads, HEAD_DIM, dtype=torch.float64, device=q.device)
    lse = torch.full((batch, heads, 1), -math.inf, dtype=torch.float64, device=q.device)
    sink64 = None if sink is None else sink.double().reshape(heads)
    for b in range(batch):
        keys = []
        for kv, idx, length in zip(kvs, indices, lengths):
            row = idx.reshape(batch, -1)[b]
            n = row.shape[0] if length is None else min(int(length[b]), row.shape[0])
            row = row[: max(n, 0)].long()
            keys.append(kv[row[row >= 0]])
        k = torch.cat(keys)
        scores = (q[b, 0].double() @ k.T) * softmax_scale  # [H, tokens]
        if sink64 is not None:
            scores = torch.cat([scores, sink64[:, None]], 1)
            values = torch.cat(
                [k, torch.zeros(1, HEAD_DIM, dtype=k.dtype, device=k.device)]
            )
        else:
            values = k
        if scores.shape[1] == 0:
            continue
        lse[b, :, 0] = torch.logsumexp(scores, -1)
        out[b, 0] = torch.softmax(scores, -1) @ values
    return out, lse


def glue_whole_call(
    per_cache,
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
    """SGLang's gate-on whole call as it runs today, for timing beside the
    fused one: the per-cache kernel on each cache (per_cache =
    module.sparse_decode), then the merge and the sink in the same PyTorch
    operations, with the same bf16 roundings and thresholds, as the
    function in SGLang 0.5.13-0.5.23 (written here from its semantics)."""
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** -0.5
    out, lse = per_cache(q, k_cache, indices, topk_length, softmax_scale)
    if extra_k_cache is not None and extra_indices is not None:
        out2, lse2 = per_cache(
            q, extra_k_cache, extra_indices, extra_topk_length, softmax_scale
        )
        top = torch.maximum(lse, lse2)
        zero = torch.zeros_like(lse)
        w1 = torch.where(lse > -1e20, torch.exp(lse - top), zero)
        w2 = torch.where(lse2 > -1e20, torch.exp(lse2 - top), torch.zeros_like(lse2))
        total = (w1 + w2).clamp(min=1e-20)
        mixed = w1.unsqueeze(-1) * out.float() + w2.unsqueeze(-1) * out2.float()
        out = (mixed / total.unsqueeze(-1)).to(torch.bfloat16)
        lse = top + torch.log(total)
    if attn_sink is not None:
        with_sink = torch.logaddexp(lse, attn_sink.view(1, 1, -1).expand_as(lse))
        keep = torch.where(
            lse > -1e20, torch.exp(lse - with_sink), torch.zeros_like(lse)
        )
        out = (out.float() * keep.unsqueeze(-1)).to(torch.bfloat16)
        lse = with_sink
    return out, lse.permute(0, 2, 1)


def cache_inputs(page_size, pad, batch, topk, length, gen, device, pool_tokens=None):
    """One paged cache with indices: (buf, k_cache view, float64 vectors or
    None, indices [B, topk] int32 with about 5% -1, topk_length or None).

    length: None (no topk_length), "mixed" (random lengths, row 0 full, the
    last row 0, and with 3+ rows row 1's every slot -1), "full" (topk_length
    given, every row full).
    """
    pool = pool_tokens or max(4 * batch * topk, 8 * page_size)
    pages = (pool + page_size - 1) // page_size
    buf = bh.quantize_pages(pages, page_size, pad, gen, device)
    idx = torch.randint(
        0,
        pages * page_size,
        (batch, topk),
        generator=gen,
        device=device,
        dtype=torch.int32,
    )
    idx[torch.rand(batch, topk, generator=gen, device=device) < 0.05] = -1
    topk_length = None
    if length == "mixed":
        topk_length = torch.randint(
            1, topk + 1, (batch,), generator=gen, device=device, dtype=torch.int32
        )
        topk_length[0] = topk
        topk_length[-1] = 0
        if batch > 2:
            idx[1, :] = -1
    elif length == "full":
        topk_length = torch.full((batch,), topk, dtype=torch.int32, device=device)
    return buf, bh.as_k_cache(buf, page_size), idx, topk_length


def sink_values(heads, gen, device):
    # Around a typical row's lse (log of a few hundred tokens' weights), so
    # the sink takes a real share of the denominator.
    return (torch.randn(heads, generator=gen, device=device) * 2.0 + 3.0).float()


# name, heads, batch, (page_size, pad, topk, length) of cache 0, the same of
# the extra cache or None, with a sink, Q layout. Every contract corner:
# page sizes 64 and 256 in either cache, padded strides (pad 576, and 64 for
# a stride that is a multiple of 16 but not of 576), -1 indices, topk_length
# below topk and 0, rows with no valid token in both caches, with and
# without the extra cache and the sink, H 64, 32, 16, 20 and 128, topk not a
# multiple of any tile, Q as a view and stored head-major.
CASES_CPU = [
    (
        "h64_p64+p256_len_sink",
        64,
        3,
        (64, 576, 40, "mixed"),
        (256, 576, 100, "mixed"),
        True,
        "contiguous",
    ),
    (
        "h20_p256+p64_extralen",
        20,
        3,
        (256, 64, 33, None),
        (64, 576, 70, "mixed"),
        False,
        "contiguous",
    ),
    ("h16_p64_only_sink", 16, 3, (64, 576, 75, "mixed"), None, True, "padded"),
    (
        "h32_p64+p64_nolen_sink",
        32,
        2,
        (64, 576, 24, None),
        (64, 64, 50, None),
        True,
        "head_major",
    ),
    (
        "h128_p64+p256_len_sink",
        128,
        2,
        (64, 576, 20, "mixed"),
        (256, 576, 40, "mixed"),
        True,
        "contiguous",
    ),
    ("h64_p64_only_plain", 64, 2, (64, 576, 50, "mixed"), None, False, "contiguous"),
]

# The same corners at the real sizes, for the GPU: window 128 and extra topk
# 512 / 2048, topk 500 and 100 (not multiples of 64).
CASES_GPU = [
    (
        "h64_w128+e512_len_sink",
        64,
        4,
        (64, 576, 128, "mixed"),
        (256, 576, 512, "mixed"),
        True,
        "contiguous",
    ),
    (
        "h20_w100+e500_extralen",
        20,
        3,
        (256, 64, 100, None),
        (64, 576, 500, "mixed"),
        False,
        "contiguous",
    ),
    ("h16_w128_only_sink", 16, 3, (64, 576, 128, "mixed"), None, True, "padded"),
    (
        "h32_w128+e2048_nolen_sink",
        32,
        2,
        (64, 576, 128, None),
        (64, 64, 2048, None),
        True,
        "head_major",
    ),
    (
        "h128_w128+e2048_len_sink",
        128,
        3,
        (64, 576, 128, "mixed"),
        (256, 576, 2048, "mixed"),
        True,
        "contiguous",
    ),
    (
        "h64_w128+e512_full",
        64,
        2,
        (64, 576, 128, "full"),
        (64, 576, 512, "full"),
        True,
        "contiguous",
    ),
]


def build_case(case, gen, device, reference=True):
    """Inputs and float64 reference of one case: (kwargs of the whole call,
    (ref_out, ref_lse), or None without reference)."""
    name, heads, batch, c0, c1, with_sink, q_layout = case
    q = torch.randn(batch, 1, heads, HEAD_DIM, generator=gen, device=device).to(
        torch.bfloat16
    )
    q = bh.lay_out_q(q, q_layout)
    buf0, k0, i0, l0 = cache_inputs(c0[0], c0[1], batch, c0[2], c0[3], gen, device)
    kvs, idxs, lens = [bh.dequantize(buf0, c0[0])], [i0], [l0]
    kwargs = dict(
        q=q,
        k_cache=k0,
        indices=i0,
        topk_length=l0,
        attn_sink=None,
        head_dim_v=HEAD_DIM,
        softmax_scale=None,
    )
    if c1 is not None:
        buf1, k1, i1, l1 = cache_inputs(c1[0], c1[1], batch, c1[2], c1[3], gen, device)
        # The extra cache's indices as SGLang passes them: [B, 1, topk].
        i1 = i1.view(batch, 1, -1)
        kvs.append(bh.dequantize(buf1, c1[0]))
        idxs.append(i1)
        lens.append(l1)
        kwargs.update(extra_k_cache=k1, extra_indices=i1, extra_topk_length=l1)
    if with_sink:
        kwargs["attn_sink"] = sink_values(heads, gen, device)
    if not reference:
        return kwargs, None
    ref = reference_full(q, kvs, idxs, lens, kwargs["attn_sink"], None)
    return kwargs, ref


def compare(out, lse, ref):
    """The harness's verdict on one whole call: relative error of out,
    largest lse error on rows with a finite lse, no NaN, empty rows exact
    (out 0, lse -inf; with a sink lse = sink, which is finite and checked
    with the rest), shapes and dtypes."""
    ref_out, ref_lse = ref
    batch, _, heads, _ = ref_out.shape
    out64, lse64 = out.double(), lse.double()
    rel = float((out64 - ref_out).norm() / ref_out.norm().clamp_min(1e-30))
    finite = torch.isfinite(ref_lse)
    lse_err = (
        float((lse64[finite] - ref_lse[finite]).abs().max()) if finite.any() else 0.0
    )
    nan = bool(torch.isnan(out64).any() or torch.isnan(lse64).any())
    empty = ~finite
    empty_ok = bool((torch.isneginf(lse64[empty])).all())
    zero_rows = ref_out.abs().amax(-1) == 0  # rows whose every weight is zero
    empty_ok &= bool((out64[zero_rows] == 0).all())
    shape_ok = (
        tuple(out.shape) == (batch, 1, heads, HEAD_DIM)
        and tuple(lse.shape) == (batch, heads, 1)
        and out.dtype == torch.bfloat16
        and lse.dtype == torch.float32
    )
    passed = (
        rel <= RTOL_OUT and lse_err <= ATOL_LSE and not nan and empty_ok and shape_ok
    )
    return dict(
        rel_err=rel,
        lse_err=lse_err,
        nan=nan,
        empty_rows_ok=empty_ok,
        shape_ok=shape_ok,
        passed=passed,
    )
