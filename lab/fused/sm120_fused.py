# Lab prototype, helper K2 (not generated): kernels/sm120/sparse_mla_mma.py as
# emitted at 4f90655, edited by hand to add the whole-call entry point
# (supports_full / sparse_decode_full), a per-shape launch plan and the log
# lines of the module contract. lab/fused/NOTES.md lists every change, for the
# port into templates/.
"""Sparse-MLA decode for DeepSeek-V4-Flash on sm_120: the single file mlagen patch installs.

Holds the head-batched MMA kernel, the split-K combine kernel and the fixed
configurations that the static selection tables below use. Two entry points:
``sparse_decode`` replaces SGLang's per-cache ``_run_triton_sparse_decode``,
``sparse_decode_full`` its whole ``flash_mla_sparse_decode_triton`` (both
caches, their log-sum-exp merge and the attention sink in one pass).
``supports`` and ``supports_full`` are False for inputs or shapes they do not
handle, and the caller then runs SGLang's own code. Nothing autotunes at run
time, so the kernels are safe under CUDA-graph capture.
"""

import logging

import torch
import triton
import triton.language as tl

# DeepSeek-V4-Flash MLA latent: 448 fp8 "nope" values in 7 groups of 64 (one
# UE8M0 scale each) and 64 bf16 "rope" values; 512 dims in all.
_HEAD_DIM = 512
_NOPE_DIM = 448
_NOPE_GROUPS = 7
# Per page: page_size * 576 data bytes (448 fp8 + 128 rope), then
# page_size * 8 scale bytes (7 scales + 1 pad). The page stride may be larger.
_TOKEN_DATA_BYTES = 576
_TOKEN_SCALE_BYTES = 8
_LOG2E = 1.4426950408889634

HEAD_DIM = tl.constexpr(_HEAD_DIM)
NOPE_DIM = tl.constexpr(_NOPE_DIM)
NOPE_GROUPS = tl.constexpr(_NOPE_GROUPS)
TOKEN_DATA_BYTES = tl.constexpr(_TOKEN_DATA_BYTES)
TOKEN_SCALE_BYTES = tl.constexpr(_TOKEN_SCALE_BYTES)
LN2 = tl.constexpr(0.6931471805599453)
LOG2E = tl.constexpr(_LOG2E)

# name: (BLOCK_H, BLOCK_T, SPLIT_K, num_warps, num_stages)
CONFIGS = {
    "mma_h16_t16_k32_w4_s1": (16, 16, 32, 4, 1),
    "mma_h16_t32_k1_w4_s1": (16, 32, 1, 4, 1),
    "mma_h16_t32_k4_w4_s1": (16, 32, 4, 4, 1),
    "mma_h16_t32_k16_w4_s1": (16, 32, 16, 4, 1),
    "mma_h16_t32_k32_w4_s1": (16, 32, 32, 4, 1),
}

# select(): the first batch bound >= batch, then the first topk bound >= topk
# (None: no bound). Rows follow BATCH_BOUNDS, columns TOPK_BOUNDS.
BATCH_BOUNDS = (1, 8, 16, 32, 64, None)
TOPK_BOUNDS = (512, None)
SELECTION = (
    (  # batch <= 1
        "mma_h16_t16_k32_w4_s1",
        "mma_h16_t32_k32_w4_s1",
    ),
    (  # batch <= 8
        "mma_h16_t32_k16_w4_s1",
        "mma_h16_t32_k16_w4_s1",
    ),
    (  # batch <= 16
        "mma_h16_t32_k4_w4_s1",
        "mma_h16_t32_k4_w4_s1",
    ),
    (  # batch <= 32
        "mma_h16_t32_k4_w4_s1",
        "mma_h16_t32_k4_w4_s1",
    ),
    (  # batch <= 64
        "mma_h16_t32_k1_w4_s1",
        "mma_h16_t32_k1_w4_s1",
    ),
    (  # batch any
        "mma_h16_t32_k1_w4_s1",
        "mma_h16_t32_k1_w4_s1",
    ),
)


def _bucket(bounds, n):
    for i, bound in enumerate(bounds):
        if bound is None or n <= bound:
            return i
    return len(bounds) - 1


def select(batch, topk):
    """Name of the configuration for this batch size and topk ("simt_baseline": none fits)."""
    return SELECTION[_bucket(BATCH_BOUNDS, batch)][_bucket(TOPK_BOUNDS, topk)]


# select_full(): the first head bound >= heads, then the first batch bound >=
# batch, then the first bound >= the call's tokens (both caches' topk). The
# whole call's table: its token counts (window 128 + extra 512 or 2048) are
# not the per-cache table's. From lab/fused/results (on the H200, compiled
# with DISABLE_MMA_V3=1; H 64, B 1, 16, 64 and 128).
FULL_HEAD_BOUNDS = (None,)  # 16-head blocks whatever the head count
FULL_BATCH_BOUNDS = (1, 8, 16, 32, 64, None)
FULL_TOKEN_BOUNDS = (1024, None)
FULL_SELECTION = (
    (
        ("mma_h16_t32_k32_w4_s1", "mma_h16_t32_k32_w4_s1"),
        ("mma_h16_t32_k16_w4_s1", "mma_h16_t32_k16_w4_s1"),
        ("mma_h16_t32_k4_w4_s1", "mma_h16_t32_k4_w4_s1"),
        ("mma_h16_t32_k4_w4_s1", "mma_h16_t32_k4_w4_s1"),
        ("mma_h16_t32_k1_w4_s1", "mma_h16_t32_k1_w4_s1"),
        ("mma_h16_t32_k1_w4_s1", "mma_h16_t32_k1_w4_s1"),
    ),
)


def select_full(heads, batch, tokens):
    """Name of the whole call's configuration for this head count, batch size
    and total topk of both caches."""
    row = FULL_SELECTION[_bucket(FULL_HEAD_BOUNDS, heads)]
    return row[_bucket(FULL_BATCH_BOUNDS, batch)][_bucket(FULL_TOKEN_BOUNDS, tokens)]


@triton.jit
def _virtual_range(
    TopkLength,
    TopkLength1,
    pid_b,
    pid_s,
    topk,
    topk1,
    HAS_TOPK_LENGTH: tl.constexpr,
    HAS_EXTRA: tl.constexpr,
    HAS_TOPK_LENGTH1: tl.constexpr,
    BLOCK_T: tl.constexpr,
    SPLIT_K: tl.constexpr,
):
    """This split's tokens [start, end) of its batch row's virtual token list.

    The list is cache 0's tokens, padded to whole tiles (base1 of them), then
    cache 1's (HAS_EXTRA): no tile mixes the two caches, and the splits of
    one split-K partition both, so one pass and one merge serve the whole
    call. Also returns base1, n0 (cache 0's valid length) and n (the list's
    length), which _tile_source needs. Without cache 1, base1 = n = n0.
    """
    n0 = topk
    if HAS_TOPK_LENGTH:
        n0 = tl.maximum(tl.minimum(tl.load(TopkLength + pid_b), topk), 0)
    base1 = n0
    n = n0
    if HAS_EXTRA:
        n1 = topk1
        if HAS_TOPK_LENGTH1:
            n1 = tl.maximum(tl.minimum(tl.load(TopkLength1 + pid_b), topk1), 0)
        base1 = tl.cdiv(n0, BLOCK_T) * BLOCK_T
        n = base1 + n1
    # Whole tiles per split, sized from this row's own length so splits stay balanced.
    per_split = tl.cdiv(tl.cdiv(n, SPLIT_K), BLOCK_T) * BLOCK_T
    start = pid_s * per_split
    end = tl.minimum(start + per_split, n)
    return start, end, base1, n0, n


@triton.jit
def _tile_source(
    t0,
    base1,
    n0,
    n,
    idx_row,
    idx1_row,
    KV,
    KV1,
    page_stride,
    page_stride1,
    page_size,
    page_size1,
    HAS_EXTRA: tl.constexpr,
):
    """Where the tile at virtual token t0 comes from: its cache (in1), its
    first token in that cache (local), the pointer to that token's index,
    how many of the cache's tokens are left from there, and the cache's
    base pointer, page stride and page size. Scalar selects: each tile lies
    in one cache (_virtual_range)."""
    if HAS_EXTRA:
        in1 = t0 >= base1
        local = t0 - tl.where(in1, base1, 0)
        left = tl.where(in1, n, n0) - tl.where(in1, base1, 0) - local
        row = tl.where(in1, idx1_row, idx_row) + local
        kv = tl.where(in1, KV1, KV)
        stride = tl.where(in1, page_stride1, page_stride)
        size = tl.where(in1, page_size1, page_size)
    else:
        in1 = t0 < 0
        local = t0
        left = n0 - t0
        row = idx_row + t0
        kv = KV
        stride = page_stride
        size = page_size
    return in1, local, row, left, kv, stride, size


@triton.jit
def _add_sink(o, lse2, Sink, heads, head_ok):
    """The attention sink of each head as one more score that carries no
    value: exp(sink) joins the softmax denominator and the log-sum-exp. A
    row with no valid token gets out 0 and lse = sink. lse2 is base 2."""
    sink2 = tl.load(Sink + heads, mask=head_ok, other=float("-inf")) * LOG2E
    top = tl.maximum(lse2, sink2)
    top = tl.where(top == float("-inf"), 0.0, top)
    w = tl.exp2(lse2 - top)
    total = w + tl.exp2(sink2 - top)
    keep = tl.where(total > 0.0, w / tl.maximum(total, 1e-30), 0.0)
    lse2 = tl.where(total > 0.0, top + tl.log2(total), float("-inf"))
    return o * keep[:, None], lse2


@triton.jit
def _mma_decode_kernel(
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
    HAS_TOPK_LENGTH: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_T: tl.constexpr,
    SPLIT_K: tl.constexpr,
    HAS_EXTRA: tl.constexpr,
    HAS_TOPK_LENGTH1: tl.constexpr,
    HAS_SINK: tl.constexpr,
):
    """Scores and P.V for BLOCK_H heads of one batch row over one split of its tokens.

    Each tile of BLOCK_T tokens is gathered from the paged cache once and shared by
    all BLOCK_H heads. The 512-wide token vector is viewed as 8 groups of 64: groups
    0..6 are fp8 nope values with one UE8M0 scale each, group 7 is the bf16 rope
    part, so one [BLOCK_T, 512] bf16 tile feeds both tl.dot calls.

    With HAS_EXTRA the row's tokens are those of two caches (KV, Indices,
    TopkLength, page_stride, page_size, topk, then the same for cache 1), one
    virtual list that the splits partition (_virtual_range); with HAS_SINK
    and SPLIT_K 1 the epilogue applies the attention sink (_add_sink), with
    SPLIT_K > 1 the combine does.
    """
    pid_h = tl.program_id(0)
    pid_s = tl.program_id(1)
    pid_b = tl.program_id(2).to(tl.int64)

    heads = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    head_ok = heads < num_heads
    dims = tl.arange(0, HEAD_DIM)
    offs_t = tl.arange(0, BLOCK_T)
    idx_row = Indices + pid_b * stride_idx_batch
    idx1_row = Indices1 + pid_b * stride_idx1_batch
    # The split's start as if both rows were full: known without the rows'
    # lengths, so the first tile's indices load beside Q and the lengths
    # instead of one memory round trip after them. Split 0, and every split
    # of full rows, start there; other splits of shorter rows load again.
    # The 64-head variants, at 255 registers, spill with this.
    EARLY_INDICES: tl.constexpr = BLOCK_H < 64
    if EARLY_INDICES:
        full0 = topk
        full = topk
        if HAS_EXTRA:
            full0 = tl.cdiv(topk, BLOCK_T) * BLOCK_T
            full = full0 + topk1
        guess_start = pid_s * (tl.cdiv(tl.cdiv(full, SPLIT_K), BLOCK_T) * BLOCK_T)
        g_in1, g_local, g_row, g_left, _, _, _ = _tile_source(
            guess_start,
            full0,
            topk,
            full,
            idx_row,
            idx1_row,
            KV,
            KV1,
            page_stride,
            page_stride1,
            page_size,
            page_size1,
            HAS_EXTRA,
        )
        guess = tl.load(g_row + offs_t, mask=offs_t < g_left, other=-1)
    q = tl.load(
        Q + pid_b * stride_q_batch + heads[:, None] * stride_q_head + dims[None, :],
        mask=head_ok[:, None],
        other=0.0,
    )

    start, end, base1, n0, n = _virtual_range(
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

    group = tl.arange(0, 8)
    lane = tl.arange(0, 64)
    is_nope = (group < NOPE_GROUPS)[None, :]
    is_rope = (group == NOPE_GROUPS)[None, :, None]

    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for t0 in range(start, end, BLOCK_T):
        in1, local, row, left, kv, stride, size = _tile_source(
            t0,
            base1,
            n0,
            n,
            idx_row,
            idx1_row,
            KV,
            KV1,
            page_stride,
            page_stride1,
            page_size,
            page_size1,
            HAS_EXTRA,
        )
        in_tile = offs_t < left
        if EARLY_INDICES:
            hit = (t0 == start) & (t0 == guess_start) & (in1 == g_in1)
            hit = hit & (local == g_local)
            idx = tl.load(row + offs_t, mask=in_tile & (not hit), other=-1)
            idx = tl.where(hit, tl.where(in_tile, guess, -1), idx)
        else:
            idx = tl.load(row + offs_t, mask=in_tile, other=-1)
        valid = idx >= 0
        idx = tl.where(valid, idx, 0)
        page = idx // size
        slot = idx - page * size
        page_base = page.to(tl.int64) * stride
        data = page_base + slot * TOKEN_DATA_BYTES
        scales_at = page_base + size * TOKEN_DATA_BYTES + slot * TOKEN_SCALE_BYTES

        nope_ok = valid[:, None] & is_nope
        col = (group * 64)[None, :, None] + lane[None, None, :]
        nope = tl.load(
            kv + data[:, None, None] + col, mask=nope_ok[:, :, None], other=0.0
        )
        rope_ptr = (kv + data + NOPE_DIM).to(tl.pointer_type(tl.bfloat16))
        rope = tl.load(
            rope_ptr[:, None] + lane[None, :], mask=valid[:, None], other=0.0
        )
        # The 8 scale bytes of a token (7 exponents and a pad) as one word,
        # unpacked in registers. Loaded as [BLOCK_T, 8] bytes they reached the
        # tile's layout through shared memory and two barriers (run 24). The
        # pad byte scales group 7, whose masked zeros the rope replaces below.
        # UE8M0: each byte is a bare exponent, 2^(e - 127), i.e. the fp32 bits e << 23.
        word = tl.load(
            (kv + scales_at).to(tl.pointer_type(tl.int64)), mask=valid, other=0
        )
        e = (word[:, None] >> (group * 8).to(tl.int64)[None, :]) & 0xFF
        scale = (e.to(tl.int32) << 23).to(tl.float32, bitcast=True)
        nope = (nope.to(tl.float32) * scale[:, :, None]).to(tl.bfloat16)
        k3 = tl.where(is_rope, rope[:, None, :], nope)
        k = tl.reshape(k3, [BLOCK_T, HEAD_DIM])

        s = tl.dot(q, tl.trans(k))
        s = tl.where(valid[None, :], s * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        # A tile with no valid token leaves m at -inf; subtracting it would give NaN.
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m_i - m_safe)
        p = tl.exp2(s - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(tl.bfloat16), k, acc * alpha[:, None])
        m_i = m_new

    empty = l_i == 0.0
    o = acc * tl.where(empty, 0.0, 1.0 / l_i)[:, None]
    lse2 = tl.where(empty, float("-inf"), m_i + tl.log2(l_i))
    o_ptr = (
        Out
        + pid_b * stride_out_batch
        + heads[:, None] * stride_out_head
        + dims[None, :]
    )
    if SPLIT_K == 1:
        if HAS_SINK:
            o, lse2 = _add_sink(o, lse2, Sink, heads, head_ok)
        tl.store(o_ptr, o.to(tl.bfloat16), mask=head_ok[:, None])
        tl.store(Lse + pid_b * stride_lse_batch + heads, lse2 * LN2, mask=head_ok)
    else:
        # Partial results stay fp32 and base 2 until the combine kernel merges them.
        tl.store(o_ptr + pid_s * stride_out_split, o, mask=head_ok[:, None])
        lse_ptr = Lse + pid_b * stride_lse_batch + pid_s * stride_lse_split + heads
        tl.store(lse_ptr, lse2, mask=head_ok)


# `live` depends on the variant and topk only; not specialising it keeps one
# compiled combine whatever its value.
@triton.jit(do_not_specialize=["live"])
def _combine_kernel(
    Part,
    PartLse,
    Out,
    Lse,
    stride_part_batch,
    stride_part_split,
    stride_part_head,
    stride_plse_batch,
    stride_plse_split,
    stride_out_batch,
    stride_out_head,
    stride_lse_batch,
    SPLIT_K: tl.constexpr,
    SPLIT_P2: tl.constexpr,
    PDL: tl.constexpr,
    live,
    DIM_BLOCK: tl.constexpr,
    Sink,
    HAS_SINK: tl.constexpr,
):
    """Merge the SPLIT_K partial results of one (batch, head) by log-sum-exp.

    Each program merges DIM_BLOCK of the 512 dims (grid axis 2): at B = 1 a
    program per (head, batch) would leave half the SMs idle. Only the first
    `live` splits can hold a token (the launcher's bound); the others are
    skipped, and their weight would be zero anyway. With HAS_SINK the head's
    attention sink joins the merge as one more partial that carries no value
    (_add_sink).
    """
    if PDL:
        # Launched with programmatic dependent launch: the program may start
        # while the decode kernel drains, and waits here until its partials
        # are written and visible; the launch overlaps the decode kernel's tail.
        tl.extra.cuda.gdc_wait()
    head = tl.program_id(0)
    pid_b = tl.program_id(1).to(tl.int64)
    first_dim = tl.program_id(2) * DIM_BLOCK
    split = tl.arange(0, SPLIT_P2)
    dims = first_dim + tl.arange(0, DIM_BLOCK)
    # Every split writes its partial (zeros and -inf when empty), so the
    # partials load beside their lse instead of after the weights: one L2
    # round trip less (explore 20, run 23).
    live_split = split < live
    lse2 = tl.load(
        PartLse + pid_b * stride_plse_batch + split * stride_plse_split + head,
        mask=live_split,
        other=float("-inf"),
    )
    part = tl.load(
        Part
        + pid_b * stride_part_batch
        + split[:, None] * stride_part_split
        + head * stride_part_head
        + dims[None, :],
        mask=live_split[:, None],
        other=0.0,
    )
    top = tl.max(lse2, 0)
    if HAS_SINK:
        sink2 = tl.load(Sink + head) * LOG2E
        top = tl.maximum(top, sink2)
    # Every split empty: keep the weights at zero rather than exp2(-inf + inf).
    top = tl.where(top == float("-inf"), 0.0, top)
    w = tl.exp2(lse2 - top)
    total = tl.sum(w, 0)
    if HAS_SINK:
        total += tl.exp2(sink2 - top)
    o = tl.sum(part * w[:, None], 0) / tl.maximum(total, 1e-30)
    lse = tl.where(total > 0.0, (top + tl.log2(total)) * LN2, float("-inf"))
    tl.store(
        Out + pid_b * stride_out_batch + head * stride_out_head + dims,
        o.to(tl.bfloat16),
    )
    # Every slice computes the same lse; the first one writes it.
    tl.store(Lse + pid_b * stride_lse_batch + head, lse, mask=first_dim == 0)


def _pdl(device):
    """Whether the combine launches with programmatic dependent launch.

    griddepcontrol exists from sm_90 on, and only in compiled code: the
    Triton interpreter has no such instruction.
    """
    return (
        device.type == "cuda"
        and not triton.knobs.runtime.interpret
        and torch.cuda.get_device_capability(device)[0] >= 9
    )


TARGET = "sm_120"
_log = logging.getLogger(__name__)
_WHOLE_CALL = "whole call"
_PER_CACHE = "per cache"
# Each distinct message once per process (the module contract): the set of
# those already logged. Module state, like Triton's own kernel caches: the
# entry points are plain functions with SGLang's signatures.
_LOGGED = set()
# Launch plans (_Plan) by call key (_call_key), built on a shape's first call
# and reused by every later call of that shape, refusals included.
_PLANS = {}
# Past this many keys the plans are dropped and rebuilt as calls come (a
# server sees one key per batch size and cache layout).
_MAX_PLANS = 4096


def _say(level, message):
    """Log `message` at `level`, the first time this process meets it."""
    if message not in _LOGGED:
        _LOGGED.add(message)
        _log.log(level, message)


def _q_refusal(q):
    """Why the kernels cannot take this q; None when they can."""
    if not q.is_cuda:
        return "q is not on a CUDA device"
    if q.dtype != torch.bfloat16:
        return f"q is {q.dtype}, not torch.bfloat16"
    if q.dim() != 4 or q.shape[1] != 1 or q.shape[3] != _HEAD_DIM:
        return f"q has shape {list(q.shape)}, not [B, 1, H, {_HEAD_DIM}]"
    if q.stride(3) != 1:
        return "q's last dimension is not contiguous"
    if not 0 < q.shape[0] <= 65535:
        return f"batch {q.shape[0]} is outside 1..65535"
    return None


def _cache_refusal(what, k_cache, indices, topk_length, batch):
    """Why the kernels cannot read this paged cache with these indices; None
    when they can."""
    if k_cache.dtype not in (torch.float8_e4m3fn, torch.uint8):
        return f"{what} is {k_cache.dtype}, not float8_e4m3fn or uint8 bytes"
    if k_cache.dim() != 4 or not k_cache.is_cuda:
        return f"{what} is not a 4-dimensional CUDA tensor [pages, page_size, 1, bytes]"
    need = k_cache.shape[1] * (_TOKEN_DATA_BYTES + _TOKEN_SCALE_BYTES)
    if k_cache.stride(0) < need:
        return f"{what}'s page stride {k_cache.stride(0)} B is below page_size * 584 = {need} B"
    # Each token's scales load as one 8-byte word: pages 8-byte aligned
    # (SGLang pads the stride to a multiple of 576).
    if (
        k_cache.stride(0) % _TOKEN_SCALE_BYTES
        or k_cache.data_ptr() % _TOKEN_SCALE_BYTES
    ):
        return f"{what}'s pages are not 8-byte aligned"
    if indices.dtype != torch.int32 or not indices.is_cuda:
        return f"{what}'s indices are not int32 on a CUDA device"
    if indices.dim() < 1 or indices.shape[0] != batch or indices.numel() == 0:
        return f"{what}'s indices have shape {list(indices.shape)}, not [{batch}, topk, ...] with topk > 0"
    if topk_length is not None and (
        topk_length.dtype not in (torch.int32, torch.int64)
        or topk_length.numel() != batch
        or not topk_length.is_cuda
    ):
        return f"{what}'s topk_length is not {batch} integers on a CUDA device"
    return None


def _config_refusal(name, q, caches):
    """Why configuration `name` cannot serve these caches; None when it can."""
    if name not in CONFIGS:
        return f"no MMA configuration for this shape (selection: {name})"
    return None


def _inputs_supported(q, k_cache, indices):
    """True when the MMA kernel handles these inputs; callers fall back otherwise."""
    return _per_cache_refusal(q, k_cache, indices, None) is None


def _per_cache_refusal(q, k_cache, indices, topk_length):
    refusal = _q_refusal(q) or _cache_refusal(
        "k_cache", k_cache, indices, topk_length, q.shape[0]
    )
    if refusal:
        return refusal
    batch = q.shape[0]
    name = select(batch, indices.numel() // batch)
    return _config_refusal(name, q, [("k_cache", k_cache)])


def supports(q, k_cache, indices):
    """True when these inputs and this shape have an MMA configuration."""
    refusal = _per_cache_refusal(q, k_cache, indices, None)
    if refusal:
        _say(logging.WARNING, _not_served(_PER_CACHE, f"supports() refused: {refusal}"))
    return refusal is None


def sparse_decode(q, k_cache, indices, topk_length, softmax_scale):
    """Drop-in for _run_triton_sparse_decode: returns (out [B, 1, H, 512] bf16, lse [B, 1, H] fp32)."""
    key = _call_key(_PER_CACHE, q, k_cache, indices, topk_length)
    plan = _PLANS.get(key) or _new_plan(
        key, _per_cache_plan, q, k_cache, indices, topk_length
    )
    if plan.refusal:
        raise ValueError(f"sparse_decode: {plan.refusal} (ask supports() first)")
    return plan.run(
        q, k_cache, indices, topk_length, None, None, None, None, softmax_scale
    )


def supports_full(
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
    """True when sparse_decode_full serves this call of SGLang's
    flash_mla_sparse_decode_triton (same arguments); False, logged once per
    reason, when SGLang's own code must run it."""
    try:
        plan = _full_plan(
            q,
            k_cache,
            indices,
            topk_length,
            attn_sink,
            head_dim_v,
            extra_k_cache,
            extra_indices,
            extra_topk_length,
        )
        refusal = plan.refusal
    except (AttributeError, TypeError) as err:
        refusal = f"an argument is not what SGLang passes ({err})"
    if refusal:
        _say(
            logging.WARNING,
            _not_served(_WHOLE_CALL, f"supports_full() refused: {refusal}"),
        )
    return refusal is None


def sparse_decode_full(
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
    """Drop-in for SGLang's flash_mla_sparse_decode_triton: both caches in one
    pass, merged by log-sum-exp, the attention sink applied, in one kernel
    (and a combine where the selected configuration splits the tokens).
    Returns (out [B, 1, H, 512] bf16, lse [B, H, 1] fp32) as that function
    does; softmax_scale None means q.shape[-1] ** -0.5."""
    plan = _full_plan(
        q,
        k_cache,
        indices,
        topk_length,
        attn_sink,
        head_dim_v,
        extra_k_cache,
        extra_indices,
        extra_topk_length,
    )
    if plan.refusal:
        raise ValueError(
            f"sparse_decode_full: {plan.refusal} (ask supports_full() first)"
        )
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** -0.5
    if extra_k_cache is None or extra_indices is None:
        extra_k_cache = extra_indices = extra_topk_length = None
    return plan.run(
        q,
        k_cache,
        indices,
        topk_length,
        extra_k_cache,
        extra_indices,
        extra_topk_length,
        attn_sink,
        softmax_scale,
    )


def _not_served(entry, reason):
    return f"mlagen: sparse-MLA decode not on the MMA kernel ({entry}): {reason}; SGLang's kernel runs"


def _served(entry, name):
    return f"mlagen: sparse-MLA decode on the MMA kernel ({entry}, target {TARGET}, config {name})"


def _tensor_key(t):
    """What a launch plan depends on in tensor t: shape, strides, dtype,
    device, and its address modulo 16 (Triton specialises pointer arguments
    on 16-byte alignment, and supports* checks 8 and 16)."""
    if t is None:
        return None
    return (t.shape, t.stride(), t.dtype, t.get_device(), t.data_ptr() & 15)


def _call_key(entry, q, k_cache, indices, topk_length):
    return (
        entry,
        _tensor_key(q),
        _tensor_key(k_cache),
        _tensor_key(indices),
        _tensor_key(topk_length),
    )


def _full_key(q, k0, i0, l0, sink, head_dim_v, k1, i1, l1):
    """_call_key of a whole call, written out: it runs twice a call
    (supports_full, then sparse_decode_full), and each function call or
    generator here costs host time every eager decode step pays."""
    return (
        q.shape,
        q.stride(),
        q.dtype,
        q.get_device(),
        q.data_ptr() & 15,
        k0.shape,
        k0.stride(),
        k0.dtype,
        k0.get_device(),
        k0.data_ptr() & 15,
        i0.shape,
        i0.stride(),
        i0.dtype,
        i0.get_device(),
        i0.data_ptr() & 15,
        (
            None
            if l0 is None
            else (l0.shape, l0.stride(), l0.dtype, l0.get_device(), l0.data_ptr() & 15)
        ),
        (
            None
            if sink is None
            else (
                sink.shape,
                sink.stride(),
                sink.dtype,
                sink.get_device(),
                sink.data_ptr() & 15,
            )
        ),
        head_dim_v,
        (
            None
            if k1 is None
            else (k1.shape, k1.stride(), k1.dtype, k1.get_device(), k1.data_ptr() & 15)
        ),
        (
            None
            if i1 is None
            else (i1.shape, i1.stride(), i1.dtype, i1.get_device(), i1.data_ptr() & 15)
        ),
        (
            None
            if l1 is None
            else (l1.shape, l1.stride(), l1.dtype, l1.get_device(), l1.data_ptr() & 15)
        ),
    )


def _full_plan(q, k0, i0, l0, sink, head_dim_v, k1, i1, l1):
    # SGLang's function reads the extra cache only when both are given.
    if k1 is None or i1 is None:
        k1 = i1 = l1 = None
    key = _full_key(q, k0, i0, l0, sink, head_dim_v, k1, i1, l1)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _new_plan(
            key, _whole_call_plan, q, k0, i0, l0, sink, head_dim_v, k1, i1, l1
        )
    return plan


def _new_plan(key, build, *args):
    if len(_PLANS) >= _MAX_PLANS:
        _PLANS.clear()
    plan = _PLANS[key] = build(*args)
    return plan


def _per_cache_plan(q, k_cache, indices, topk_length):
    refusal = _per_cache_refusal(q, k_cache, indices, topk_length)
    if refusal:
        return _Plan.refused(refusal)
    batch = q.shape[0]
    name = select(batch, indices.numel() // batch)
    return _Plan(_PER_CACHE, name, q, [(k_cache, indices, topk_length)], None, False)


def _whole_call_plan(q, k0, i0, l0, sink, head_dim_v, k1, i1, l1):
    refusal = _q_refusal(q)
    if refusal:
        return _Plan.refused(refusal)
    batch, _, heads, _ = q.shape
    if int(head_dim_v) != _HEAD_DIM:
        return _Plan.refused(f"head_dim_v is {head_dim_v}, not {_HEAD_DIM}")
    caches = [("k_cache", k0, i0, l0)]
    if k1 is not None:
        caches.append(("extra_k_cache", k1, i1, l1))
    for what, k, i, n in caches:
        refusal = _cache_refusal(what, k, i, n, batch)
        if refusal:
            return _Plan.refused(refusal)
    if sink is not None and (
        not sink.is_floating_point() or sink.numel() != heads or not sink.is_cuda
    ):
        return _Plan.refused(f"attn_sink is not {heads} floats on a CUDA device")
    tokens = sum(i.numel() // batch for _, _, i, _ in caches)
    name = select_full(heads, batch, tokens)
    refusal = _config_refusal(name, q, [(c[0], c[1]) for c in caches])
    if refusal:
        return _Plan.refused(refusal)
    return _Plan(_WHOLE_CALL, name, q, [c[1:] for c in caches], sink, True)


class _Plan:
    """One shape of call, worked out once: the configuration, the grids, every
    launch argument that depends only on shapes, strides and dtypes, and,
    after the first call, the compiled kernels' launch handles. A later call
    with the same key (_call_key) allocates its outputs, fills in the
    tensors' addresses and launches: no argument binding, no specialisation,
    no compile-cache lookup, nothing that synchronises. Under CUDA-graph
    capture the allocations are recorded like any other.
    """

    refusal = None

    @classmethod
    def refused(cls, refusal):
        plan = cls.__new__(cls)
        plan.refusal = refusal
        return plan

    def __init__(self, entry, name, q, caches, sink, whole_call):
        config = CONFIGS[name]
        block_h, block_t, split_k, _, _ = config
        batch, _, heads, _ = q.shape
        self.message = _served(entry, name)
        self.device = q.device
        self.dev_index = q.get_device()
        self.batch = batch
        self.out_shape = (batch, 1, heads, _HEAD_DIM)
        self.lse_shape = (batch, heads, 1) if whole_call else (batch, 1, heads)
        self.has_extra = len(caches) == 2
        self.has_sink = sink is not None
        self.ready = False
        fixed, tokens = self._inputs(q, caches, sink, block_t)
        partials = split_k > 1
        fixed.update(self._workspace(heads, split_k, partials))
        constexprs = dict(
            HAS_TOPK_LENGTH=caches[0][2] is not None,
            BLOCK_H=block_h,
            BLOCK_T=block_t,
            SPLIT_K=split_k,
            HAS_EXTRA=self.has_extra,
            HAS_TOPK_LENGTH1=self.has_extra and caches[1][2] is not None,
            HAS_SINK=self.has_sink,
        )
        self.kernels = [
            _decode_launch(config, batch, heads, fixed, partials, constexprs)
        ]
        if partials:
            self.kernels.append(
                _combine_launch(batch, heads, split_k, block_t, tokens, self)
            )

    def _inputs(self, q, caches, sink, block_t):
        """The decode kernel's arguments that the inputs' layout fixes, and the
        longest virtual token list a row can have (_virtual_range); sets which
        inputs a call must convert first (layouts SGLang does not pass)."""
        batch = self.batch
        k0, i0, l0 = caches[0]
        k1, i1, l1 = caches[1] if self.has_extra else (k0, i0, None)
        topk0 = i0.numel() // batch
        topk1 = i1.numel() // batch if self.has_extra else 0
        self.copy_i0, stride_i0 = _index_layout(i0, batch)
        self.copy_i1, stride_i1 = _index_layout(i1, batch)
        self.fix_l0 = l0 is not None and not _is_int32_vector(l0)
        self.fix_l1 = l1 is not None and not _is_int32_vector(l1)
        self.fix_sink = sink is not None and not (
            sink.dtype == torch.float32 and sink.dim() == 1 and sink.stride(0) == 1
        )
        self.slow = (
            self.copy_i0 or self.copy_i1 or self.fix_l0 or self.fix_l1 or self.fix_sink
        )
        tokens = topk0
        if self.has_extra:
            tokens = triton.cdiv(topk0, block_t) * block_t + topk1
        fixed = dict(
            stride_q_batch=q.stride(0),
            stride_q_head=q.stride(2),
            stride_idx_batch=stride_i0,
            stride_out_head=_HEAD_DIM,
            page_stride=k0.stride(0),
            page_size=k0.shape[1],
            topk=topk0,
            num_heads=q.shape[2],
            stride_idx1_batch=stride_i1,
            page_stride1=k1.stride(0),
            page_size1=k1.shape[1],
            topk1=topk1,
        )
        return fixed, tokens

    def _workspace(self, heads, split_k, partials):
        """Sets the size of a call's one workspace (the split-K partials, then
        their lse) and returns the decode kernel's strides into it, or into out
        and lse themselves when nothing is split."""
        batch = self.batch
        self.part_dtype = torch.float32
        self.part_shape = (batch, split_k, heads, _HEAD_DIM)
        self.plse_shape = (batch, split_k, heads)
        part_bytes = batch * split_k * heads * _HEAD_DIM * self.part_dtype.itemsize
        self.plse_offset = part_bytes if partials else 0
        self.work_bytes = part_bytes + batch * split_k * heads * 4 if partials else 0
        rows = split_k if partials else 1
        return dict(
            stride_out_batch=rows * heads * _HEAD_DIM,
            stride_out_split=heads * _HEAD_DIM,
            stride_lse_batch=rows * heads,
            stride_lse_split=heads,
        )

    def run(self, q, k0, i0, l0, k1, i1, l1, sink, softmax_scale):
        device = self.device
        out = torch.empty(self.out_shape, dtype=torch.bfloat16, device=device)
        lse = torch.empty(self.lse_shape, dtype=torch.float32, device=device)
        if self.slow:
            i0, l0, i1, l1, sink = self._convert(i0, l0, i1, l1, sink)
        if not self.has_extra:
            k1, i1 = k0, i0
        work = None
        if self.work_bytes:
            work = torch.empty(self.work_bytes, dtype=torch.uint8, device=device)
        scale = softmax_scale * _LOG2E
        if self.ready:
            # Addresses only: Triton's launcher takes an int for a pointer.
            at = work.data_ptr() if work is not None else 0
            values = dict(
                q=q.data_ptr(),
                k0=k0.data_ptr(),
                i0=i0.data_ptr(),
                l0=(i0 if l0 is None else l0).data_ptr(),
                k1=k1.data_ptr(),
                i1=i1.data_ptr(),
                l1=(i1 if l1 is None else l1).data_ptr(),
                sink=(lse if sink is None else sink).data_ptr(),
                out=out.data_ptr(),
                lse=lse.data_ptr(),
                part=at,
                plse=at + self.plse_offset,
                scale=scale,
            )
            stream = torch._C._cuda_getCurrentRawStream(self.dev_index)
            for kernel in self.kernels:
                kernel.launch(values, stream)
            return out, lse
        values = dict(
            q=q,
            k0=_as_fp8(k0),
            i0=i0,
            l0=i0 if l0 is None else l0,
            k1=_as_fp8(k1),
            i1=i1,
            l1=i1 if l1 is None else l1,
            sink=lse if sink is None else sink,
            out=out,
            lse=lse,
            part=out,
            plse=lse,
            scale=scale,
        )
        if work is not None:
            values["part"] = work[: self.plse_offset].view(self.part_dtype)
            values["part"] = values["part"].view(self.part_shape)
            values["plse"] = work[self.plse_offset :].view(torch.float32)
            values["plse"] = values["plse"].view(self.plse_shape)
        for kernel in self.kernels:
            kernel.first(values)
        self.ready = all(kernel.compiled for kernel in self.kernels)
        _say(logging.INFO, self.message)
        return out, lse

    def _convert(self, i0, l0, i1, l1, sink):
        batch = self.batch
        if self.copy_i0:
            i0 = i0.reshape(batch, -1).contiguous()
        if self.copy_i1:
            i1 = i1.reshape(batch, -1).contiguous()
        if self.fix_l0:
            l0 = l0.reshape(-1).to(torch.int32).contiguous()
        if self.fix_l1:
            l1 = l1.reshape(-1).to(torch.int32).contiguous()
        if self.fix_sink:
            sink = sink.reshape(-1).to(torch.float32).contiguous()
        return i0, l0, i1, l1, sink


def _decode_launch(config, batch, heads, fixed, partials, constexprs):
    """The decode kernel of a plan."""
    block_h, block_t, split_k, num_warps, stages = config
    bind = dict(
        Q="q",
        KV="k0",
        Indices="i0",
        TopkLength="l0",
        Out="part" if partials else "out",
        Lse="plse" if partials else "lse",
        qk_scale="scale",
        KV1="k1",
        Indices1="i1",
        TopkLength1="l1",
        Sink="sink",
    )
    grid = (triton.cdiv(heads, block_h), split_k, batch)
    options = dict(num_warps=num_warps, num_stages=stages)
    return _Kernel(_mma_decode_kernel, grid, fixed, bind, constexprs, options)


def _combine_launch(batch, heads, split_k, block_t, tokens, plan):
    """The combine kernel that merges a plan's split-K partials (and applies
    the sink)."""
    pdl = _pdl(plan.device)
    fixed = dict(
        stride_part_batch=split_k * heads * _HEAD_DIM,
        stride_part_split=heads * _HEAD_DIM,
        stride_part_head=_HEAD_DIM,
        stride_plse_batch=split_k * heads,
        stride_plse_split=heads,
        stride_out_batch=heads * _HEAD_DIM,
        stride_out_head=_HEAD_DIM,
        stride_lse_batch=heads,
    )
    bind = dict(Part="part", PartLse="plse", Out="out", Lse="lse", Sink="sink")
    constexprs = dict(
        SPLIT_K=split_k,
        SPLIT_P2=triton.next_power_of_2(split_k),
        PDL=pdl,
        HAS_SINK=plan.has_sink,
    )
    # Up to 0.5 µs less per call under CUDA-graph replay (run 23).
    options = dict(launch_pdl=pdl)
    # When the (head, batch) grid alone would leave SMs idle, 8 one-warp
    # programs per (head, batch) each merge 64 of the dims: 0.2-0.5 µs less
    # at B = 1; at B >= 16 the slices cost up to 25% (combine runs 8-9, run 15).
    slices = 8 if heads * batch <= 128 else 1
    # A split starts at least BLOCK_T tokens after the one before it, so
    # none past cdiv(tokens, BLOCK_T) holds a token, whatever the rows'
    # lengths: their partials are not read.
    fixed.update(live=min(split_k, triton.cdiv(tokens, block_t)))
    constexprs.update(DIM_BLOCK=_HEAD_DIM // slices)
    options.update(num_warps=1 if slices > 1 else 4)
    return _Kernel(
        _combine_kernel, (heads, batch, slices), fixed, bind, constexprs, options
    )


def _index_layout(indices, batch):
    """(whether each call must copy `indices` to [batch, topk] rows with unit
    stride, the batch stride the kernel reads them with)."""
    flat = indices.reshape(batch, -1)
    if flat.data_ptr() == indices.data_ptr() and flat.stride(-1) == 1:
        return False, flat.stride(0)
    return True, flat.shape[1]


def _is_int32_vector(t):
    return t.dtype == torch.int32 and t.dim() == 1 and t.stride(0) == 1


def _as_fp8(k_cache):
    # The kernels read the cache as fp8 bytes; a uint8 view is the same memory.
    if k_cache.dtype == torch.uint8:
        return k_cache.view(torch.float8_e4m3fn)
    return k_cache


class _Kernel:
    """One launch of a plan: the kernel, its grid, its fixed arguments (by
    parameter name), which call value each remaining parameter takes (bind)
    and its constexprs. The first call compiles it through Triton's JIT
    (warmup) and keeps the compiled kernel's launcher; later calls go
    straight to that launcher with the arguments in the kernel's order."""

    def __init__(self, fn, grid, fixed, bind, constexprs, options):
        self.fn, self.grid, self.bind = fn, grid, bind
        self.constexprs, self.options = constexprs, options
        names = fn.arg_names
        missing = [
            n for n in names if n not in fixed and n not in bind and n not in constexprs
        ]
        if missing:
            raise RuntimeError(f"{fn.__name__}: no value for {missing}")
        self.fixed = fixed
        self.template = [fixed[n] if n in fixed else constexprs.get(n) for n in names]
        self.slots = [(i, bind[n]) for i, n in enumerate(names) if n in bind]
        self.xyz = (tuple(grid) + (1, 1))[:3]
        self.compiled = None

    def first(self, values):
        kwargs = dict(self.fixed, **self.constexprs)
        kwargs.update((n, values[v]) for n, v in self.bind.items())
        if triton.knobs.runtime.interpret:
            # No compiled code to keep: the interpreter runs every launch.
            self.fn[self.grid](**kwargs, **self.options)
            return
        compiled = self.fn.warmup(grid=self.grid, **kwargs, **self.options)
        self._keep(compiled)
        # This first launch goes through Triton's own launcher with the
        # tensors (and a TMA descriptor object), as the shipped module
        # launches every call; later ones take launch().
        args = self.template.copy()
        for i, v in self.slots:
            args[i] = values[v]
        stream = torch._C._cuda_getCurrentRawStream(values["out"].get_device())
        self.run_(
            *self.xyz, stream, self.function, self.packed, None, None, None, *args
        )

    def _keep(self, compiled):
        run = compiled.run  # loads the module on first use
        self.function = compiled.function
        self.packed = compiled.packed_metadata
        self.coop = compiled.metadata.launch_cooperative_grid
        self.pdl = compiled.metadata.launch_pdl
        self.raw = _raw_launcher(run, compiled)
        self.run_ = run
        self.compiled = compiled

    def launch(self, values, stream):
        args = self.template.copy()
        for i, v in self.slots:
            args[i] = values[v]
        gx, gy, gz = self.xyz
        if self.raw is not None:
            self.raw(
                gx,
                gy,
                gz,
                stream,
                self.function,
                self.coop,
                self.pdl,
                None,
                None,
                self.packed,
                None,
                None,
                None,
                *args,
            )
        else:
            self.run_(
                gx, gy, gz, stream, self.function, self.packed, None, None, None, *args
            )


def _raw_launcher(run, compiled):
    """The compiled kernel's C launch function when it can be called
    directly: no global or profile scratch to allocate (CudaLauncher.__call__
    does that). None otherwise (the plan then calls compiled.run)."""
    md = compiled.metadata
    if md.global_scratch_size or md.profile_scratch_size:
        return None
    # The C function itself: this module's kernels take no TMA descriptor.
    return getattr(run, "launch", None)
