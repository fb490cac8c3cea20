"""Lab prototype: a pipelined mma.sync sparse-MLA decode for sm_120-class GPUs.

Not product code: the product is generated from ``templates/``. This module is
the prototype of a template family for the targets that have only
``mma.sync`` (sm_89, sm_120; sm_80 and sm_86 once the dequantisation no
longer uses Triton's fp8e4nv type, which those targets lack): no wgmma, no
TMA multicast, no clusters, no setmaxnreg. It keeps the bundle's host contract,
``sparse_decode(q, k_cache, indices, topk_length, softmax_scale) ->
(out [B, 1, H, 512] bf16, lse [B, 1, H] fp32)``, with every tile parameter a
constexpr and nothing autotuned.

The kernel (Gluon, ``mma_v2``), one program per (head block, split, batch row):

* Q for BLOCK_H heads is staged once in shared memory and read as the A
  operand of the score MMA every tile (ldmatrix), never held in registers
  across the loop; the fp32 accumulator [BLOCK_H, 512] is spread over the
  warps (WARPS_M = BLOCK_H / 16 warps down the heads, WARPS_N across the
  columns), eight [BLOCK_H, 64] pieces, one per 64-wide column group.
* A K tile of BLOCK_T tokens lives in shared memory as bf16, one buffer per
  column group (7 dequantised fp8 groups and the bf16 rope); both MMAs read
  it (Kt as the B operand of S = Q.Kt, K as the B operand of P.K).
* Overlap without warp specialisation: the raw bytes of tile i + 1 (the
  fp8 groups, the rope and the scale word of each token) are loaded into
  registers before the MMAs of tile i and dequantised and stored after them.
  With NUM_BUFS = 2 the loop is unrolled by two over two buffer sets, so the
  stores of one tile go to the set the MMAs are not reading: one barrier a
  tile. With NUM_BUFS = 1 the stores wait for the MMAs (two barriers a tile)
  and the tile may be twice as wide in the same shared memory.
* Split-K over programs as the shipped kernels do, bf16 partials and a
  log-sum-exp combine kernel.

What was measured, and what limits it (the gather's latency is still paid
every tile: the compiler unpacks the loop-carried raw bytes before the back
edge), is in NOTES.md beside this file.
"""

import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import mma_v2

# DeepSeek-V4-Flash MLA latent: 448 fp8 "nope" values in 7 groups of 64 (one
# UE8M0 scale each) and 64 bf16 "rope" values; 512 dims in all.
_HEAD_DIM = 512
_NOPE_DIM = 448
# Per page: page_size * 576 data bytes (448 fp8 + 128 rope), then
# page_size * 8 scale bytes (7 scales + 1 pad). The page stride may be larger.
_TOKEN_DATA_BYTES = 576
_TOKEN_SCALE_BYTES = 8
_LOG2E = 1.4426950408889634

HEAD_DIM = gl.constexpr(_HEAD_DIM)
NOPE_DIM = gl.constexpr(_NOPE_DIM)
TOKEN_DATA_BYTES = gl.constexpr(_TOKEN_DATA_BYTES)
TOKEN_SCALE_BYTES = gl.constexpr(_TOKEN_SCALE_BYTES)
LN2 = gl.constexpr(0.6931471805599453)

# name -> the kernel's tile constexprs. num_warps is BLOCK_H // 16 * WARPS_N.
# PIPE 2 issues a tile's loads at the top of the iteration before its
# store instead of carrying them around the loop (PIPE 1): compiled and
# read in SASS only, never run on a GPU (NOTES.md, "the gather's latency").
# ABLATE is for timing experiments only (wrong results): 1 leaves out both
# MMAs, 2 the gather's memory traffic, 3 (two-half tiles) the second half's
# P.V; 4 and 5 (two-half tiles) leave out the gather's memory traffic and
# read Q's (4) or the K tile's (5) score operand of one column group for all
# eight, so the shared-memory reads of that operand fall to an eighth.
CONFIGS = {}


def config_name(
    block_h,
    block_t,
    split_k,
    warps_n,
    bufs,
    chains,
    subtiles=1,
    pv_m=0,
    ablate=0,
    coalesce=1,
    pipe=1,
):
    warps = block_h // 16 * warps_n
    name = f"pp_h{block_h}_t{block_t}_k{split_k}_w{warps}_b{bufs}_c{chains}"
    if subtiles > 1:
        name += f"_s{subtiles}"
    if pv_m and pv_m != block_h // 16:
        name += f"_o{pv_m}"
    if coalesce != 1:
        name += {0: "_d", 2: "_q"}[coalesce]
    if pipe != 1:
        name += f"_p{pipe}"
    return name + (f"_a{ablate}" if ablate else "")


def add_config(
    block_h,
    block_t,
    split_k,
    warps_n,
    bufs,
    chains,
    subtiles=1,
    pv_m=0,
    ablate=0,
    coalesce=1,
    pipe=1,
):
    """Register a configuration; pv_m 0 means the scores' warps down the heads,
    coalesce 0 (name suffix _d) writes the output straight from the MMA layout,
    2 (_q) through Q's shared memory, 1 through convert_layout."""
    name = config_name(
        block_h,
        block_t,
        split_k,
        warps_n,
        bufs,
        chains,
        subtiles,
        pv_m,
        ablate,
        coalesce,
        pipe,
    )
    CONFIGS[name] = dict(
        BLOCK_H=block_h,
        BLOCK_T=block_t,
        SPLIT_K=split_k,
        WARPS_N=warps_n,
        NUM_BUFS=bufs,
        CHAINS=chains,
        SUBTILES=subtiles,
        PV_WARPS_M=pv_m or block_h // 16,
        COALESCE=coalesce,
        PIPE=pipe,
        ABLATE=ablate,
    )
    return name


# The configurations the prototype would ship, the fastest correct ones of
# lab run 3 on the H200 (lab/sm120/NOTES.md; every one compiles for sm_120
# without spills within 101,376 B). select() keys on heads (up to 16, or
# more: a 64-head program masks the rows past H), then the first batch bound
# >= batch, then the first topk bound >= topk (None: no bound). At batch 1
# the shipped tl.dot kernel (BLOCK_H 16, deep split-K) is faster still; a
# bundle would hold both families and select across them.
_H16 = dict(block_h=16, block_t=64, warps_n=8, bufs=1, chains=2)
_H64 = dict(block_h=64, block_t=32, warps_n=2, bufs=1, chains=2, subtiles=2)
HEAD_BOUNDS = (16, None)
BATCH_BOUNDS = (1, 16, 64, None)
TOPK_BOUNDS = (512, None)
SELECTION = (
    (  # heads <= 16
        (add_config(split_k=8, **_H16), add_config(split_k=32, **_H16)),  # batch 1
        (add_config(split_k=8, **_H16), add_config(split_k=8, **_H16)),  # <= 16
        (add_config(split_k=2, **_H16), add_config(split_k=2, **_H16)),  # <= 64
        (add_config(split_k=1, **_H16), add_config(split_k=1, **_H16)),  # more
    ),
    (  # more heads
        (add_config(split_k=16, **_H64), add_config(split_k=32, **_H64)),
        (add_config(split_k=8, **_H64), add_config(split_k=8, **_H64)),
        (add_config(split_k=2, **_H64), add_config(split_k=2, **_H64)),
        (add_config(split_k=1, **_H64), add_config(split_k=1, **_H64)),
    ),
)


def _bucket(bounds, n):
    for i, bound in enumerate(bounds):
        if bound is None or n <= bound:
            return i
    return len(bounds) - 1


def select(batch, topk, heads):
    """Name of the configuration for this batch size, topk and head count."""
    table = SELECTION[_bucket(HEAD_BOUNDS, heads)]
    return table[_bucket(BATCH_BOUNDS, batch)][_bucket(TOPK_BOUNDS, topk)]


def num_warps_of(name):
    c = CONFIGS[name]
    return c["BLOCK_H"] // 16 * c["WARPS_N"]


def constexprs_of(name):
    return dict(CONFIGS[name])


@gluon.jit
def _token_offsets(idx, page_stride, page_size):
    """Byte offsets of each token's data row and of its scale word in the paged cache."""
    page = idx // page_size
    slot = idx - page * page_size
    page_base = page.to(gl.int64) * page_stride
    data = page_base + slot * TOKEN_DATA_BYTES
    scales_at = page_base + page_size * TOKEN_DATA_BYTES + slot * TOKEN_SCALE_BYTES
    return data, scales_at


@gluon.jit
def _fetch(
    KV,
    idx_row,
    idx,
    t_next,
    end,
    page_stride,
    page_size,
    BLOCK_T: gl.constexpr,
    ABLATE: gl.constexpr,
    lay: gl.constexpr,
):
    """Issue the loads of one tile whose indices are `idx`, and of the next tile's indices.

    Returns the raw tile (7 fp8 groups, the bf16 rope, the scale words) and
    the next indices; nothing here waits for memory, so the MMAs that follow
    run while these bytes arrive.
    """
    rows: gl.constexpr = gl.SliceLayout(1, lay)
    cols = gl.arange(0, 64, layout=gl.SliceLayout(0, lay))
    valid = idx >= 0
    data, scales_at = _token_offsets(gl.where(valid, idx, 0), page_stride, page_size)
    if ABLATE == 2 or ABLATE == 4 or ABLATE == 5:
        valid = valid & False
    ok = valid[:, None]
    nope = KV + data[:, None] + cols[None, :]
    raw = (
        gl.load(nope, mask=ok, other=0.0),
        gl.load(nope + 64, mask=ok, other=0.0),
        gl.load(nope + 128, mask=ok, other=0.0),
        gl.load(nope + 192, mask=ok, other=0.0),
        gl.load(nope + 256, mask=ok, other=0.0),
        gl.load(nope + 320, mask=ok, other=0.0),
        gl.load(nope + 384, mask=ok, other=0.0),
        gl.load(
            (KV + data + NOPE_DIM).to(gl.pointer_type(gl.bfloat16))[:, None]
            + cols[None, :],
            mask=ok,
            other=0.0,
        ),
        # The 8 scale bytes of a token (7 exponents and a pad) as one word.
        gl.load((KV + scales_at).to(gl.pointer_type(gl.int64)), mask=valid, other=0),
    )
    tok = t_next + gl.arange(0, BLOCK_T, layout=rows)
    idx_next = gl.load(idx_row + tok, mask=tok < end, other=-1)
    return raw, idx_next


@gluon.jit
def _dequant(x, words, group: gl.constexpr):
    # UE8M0: byte `group` of the token's scale word is a bare exponent,
    # 2^(e - 127), i.e. the fp32 bits e << 23.
    e = ((words >> (8 * group)) & 0xFF).to(gl.int32)
    scale = (e << 23).to(gl.float32, bitcast=True)
    return (x.to(gl.float32) * scale[:, None]).to(gl.bfloat16)


@gluon.jit
def _store_tile(raw, kset):
    """Dequantise a raw tile and write it into one buffer set (8 column groups).

    Each group is its own allocation, so Triton's barrier analysis sees
    eight independent stores (into slices of one buffer it would put a
    barrier between every two).
    """
    words = raw[8]
    kset[0].store(_dequant(raw[0], words, 0))
    kset[1].store(_dequant(raw[1], words, 1))
    kset[2].store(_dequant(raw[2], words, 2))
    kset[3].store(_dequant(raw[3], words, 3))
    kset[4].store(_dequant(raw[4], words, 4))
    kset[5].store(_dequant(raw[5], words, 5))
    kset[6].store(_dequant(raw[6], words, 6))
    kset[7].store(raw[7])


@gluon.jit
def _scores_group(
    q_smem, kset, g: gl.constexpr, s, dot_a: gl.constexpr, dot_b: gl.constexpr
):
    a = q_smem.slice(g * 64, 64, dim=1).load(dot_a)
    b = kset[g].permute((1, 0)).load(dot_b)
    return mma_v2(a, b, s)


@gluon.jit
def _scores(
    q_smem, kset, z, dot_a: gl.constexpr, dot_b: gl.constexpr, CHAINS: gl.constexpr
):
    """S = Q.Kt over the 8 column groups, both operands read from shared memory.

    Each warp's share of S is one or two 16x8 tiles, so one accumulator would
    make the 32 MMAs of a tile one dependent chain (each waits for the one
    before); CHAINS accumulators over interleaved groups run side by side.
    """
    if CHAINS == 1:
        s = z
        for g in gl.static_range(8):
            s = _scores_group(q_smem, kset, g, s, dot_a, dot_b)
    elif CHAINS == 2:
        s0 = z
        s1 = z
        for j in gl.static_range(4):
            s0 = _scores_group(q_smem, kset, 2 * j, s0, dot_a, dot_b)
            s1 = _scores_group(q_smem, kset, 2 * j + 1, s1, dot_a, dot_b)
        s = s0 + s1
    else:
        s0 = z
        s1 = z
        s2 = z
        s3 = z
        for j in gl.static_range(2):
            s0 = _scores_group(q_smem, kset, 4 * j, s0, dot_a, dot_b)
            s1 = _scores_group(q_smem, kset, 4 * j + 1, s1, dot_a, dot_b)
            s2 = _scores_group(q_smem, kset, 4 * j + 2, s2, dot_a, dot_b)
            s3 = _scores_group(q_smem, kset, 4 * j + 3, s3, dot_a, dot_b)
        s = (s0 + s1) + (s2 + s3)
    return s


@gluon.jit
def _pv(p, kset, accs, alpha, dot_b: gl.constexpr):
    """acc_g = acc_g * alpha + P.K_g for the 8 column groups."""
    a = alpha[:, None]
    return (
        mma_v2(p, kset[0].load(dot_b), accs[0] * a),
        mma_v2(p, kset[1].load(dot_b), accs[1] * a),
        mma_v2(p, kset[2].load(dot_b), accs[2] * a),
        mma_v2(p, kset[3].load(dot_b), accs[3] * a),
        mma_v2(p, kset[4].load(dot_b), accs[4] * a),
        mma_v2(p, kset[5].load(dot_b), accs[5] * a),
        mma_v2(p, kset[6].load(dot_b), accs[6] * a),
        mma_v2(p, kset[7].load(dot_b), accs[7] * a),
    )


@gluon.jit
def _pv_add(p, kset, accs, dot_b: gl.constexpr):
    """acc_g += P.K_g for the 8 column groups."""
    return (
        mma_v2(p, kset[0].load(dot_b), accs[0]),
        mma_v2(p, kset[1].load(dot_b), accs[1]),
        mma_v2(p, kset[2].load(dot_b), accs[2]),
        mma_v2(p, kset[3].load(dot_b), accs[3]),
        mma_v2(p, kset[4].load(dot_b), accs[4]),
        mma_v2(p, kset[5].load(dot_b), accs[5]),
        mma_v2(p, kset[6].load(dot_b), accs[6]),
        mma_v2(p, kset[7].load(dot_b), accs[7]),
    )


@gluon.jit
def _rows(kset, start: gl.constexpr, length: gl.constexpr):
    """The token rows [start, start + length) of each of a buffer set's 8 groups."""
    return (
        kset[0].slice(start, length, dim=0),
        kset[1].slice(start, length, dim=0),
        kset[2].slice(start, length, dim=0),
        kset[3].slice(start, length, dim=0),
        kset[4].slice(start, length, dim=0),
        kset[5].slice(start, length, dim=0),
        kset[6].slice(start, length, dim=0),
        kset[7].slice(start, length, dim=0),
    )


@gluon.jit
def _scores_halves(
    q_smem, lo, hi, z, dot_a: gl.constexpr, dot_b: gl.constexpr, ABLATE: gl.constexpr
):
    """S for two token halves of a tile, each Q fragment loaded once for both."""
    s_lo = z
    s_hi = z
    if ABLATE == 4:
        a = q_smem.slice(0, 64, dim=1).load(dot_a)
        for g in gl.static_range(8):
            s_lo = mma_v2(a, lo[g].permute((1, 0)).load(dot_b), s_lo)
            s_hi = mma_v2(a, hi[g].permute((1, 0)).load(dot_b), s_hi)
    elif ABLATE == 5:
        b_lo = lo[0].permute((1, 0)).load(dot_b)
        b_hi = hi[0].permute((1, 0)).load(dot_b)
        for g in gl.static_range(8):
            a = q_smem.slice(g * 64, 64, dim=1).load(dot_a)
            s_lo = mma_v2(a, b_lo, s_lo)
            s_hi = mma_v2(a, b_hi, s_hi)
    else:
        for g in gl.static_range(8):
            a = q_smem.slice(g * 64, 64, dim=1).load(dot_a)
            s_lo = mma_v2(a, lo[g].permute((1, 0)).load(dot_b), s_lo)
            s_hi = mma_v2(a, hi[g].permute((1, 0)).load(dot_b), s_hi)
    return s_lo, s_hi


@gluon.jit
def _pair_sum(x):
    """x [R, C] in the MMA layout summed over column pairs: [R, C // 2].

    Each thread of an mma.sync accumulator holds columns in adjacent pairs,
    so this adds in registers and keeps half the running denominators.
    """
    return gl.sum(gl.reshape(x, [x.shape[0], x.shape[1] // 2, 2]), 2)


@gluon.jit
def _attend_halves(
    q_smem,
    kset,
    idx_row,
    t0,
    end,
    qk_scale,
    m_i,
    l2,
    accs,
    BLOCK_H: gl.constexpr,
    BLOCK_T: gl.constexpr,
    ABLATE: gl.constexpr,
    mma: gl.constexpr,
    mma_o: gl.constexpr,
):
    """_attend for a tile of two halves: each P half reaches the A operand
    layout through its own shared-memory round trip (one [BLOCK_H, BLOCK_T]
    scratch would take more shared memory than the budget has left at
    BLOCK_H 64, BLOCK_T 32), and both halves share each Q fragment."""
    HALF: gl.constexpr = BLOCK_T // 2
    dot_a: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
    dot_b: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=2)
    dot_a_o: gl.constexpr = gl.DotOperandLayout(
        operand_index=0, parent=mma_o, k_width=2
    )
    dot_b_o: gl.constexpr = gl.DotOperandLayout(
        operand_index=1, parent=mma_o, k_width=2
    )
    lo = _rows(kset, 0, HALF)
    hi = _rows(kset, HALF, HALF)
    tok = t0 + gl.arange(0, HALF, layout=gl.SliceLayout(0, mma))
    valid_lo = gl.load(idx_row + tok, mask=tok < end, other=-1) >= 0
    valid_hi = gl.load(idx_row + tok + HALF, mask=tok + HALF < end, other=-1) >= 0
    z = gl.zeros([BLOCK_H, HALF], gl.float32, mma)
    if ABLATE == 1:
        s_lo = z
        s_hi = z
    else:
        s_lo, s_hi = _scores_halves(q_smem, lo, hi, z, dot_a, dot_b, ABLATE)
    s_lo = gl.where(valid_lo[None, :], s_lo * qk_scale, float("-inf"))
    s_hi = gl.where(valid_hi[None, :], s_hi * qk_scale, float("-inf"))
    m_new = gl.maximum(m_i, gl.max(gl.maximum(s_lo, s_hi), 1))
    # A tile with no valid token leaves m at -inf; subtracting it would give NaN.
    m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = gl.exp2(m_i - m_safe)
    p_lo = gl.exp2(s_lo - m_safe[:, None])
    p_hi = gl.exp2(s_hi - m_safe[:, None])
    l2 = l2 * gl.convert_layout(alpha, gl.SliceLayout(1, l2.type.layout))[:, None]
    l2 = l2 + _pair_sum(p_lo + p_hi)
    p_lo = gl.convert_layout(p_lo.to(gl.bfloat16), dot_a_o)
    if ABLATE != 1:
        accs = _pv(p_lo, lo, accs, _rows_to(alpha, mma, mma_o), dot_b_o)
    p_hi = gl.convert_layout(p_hi.to(gl.bfloat16), dot_a_o)
    if ABLATE != 1 and ABLATE != 3:
        accs = _pv_add(p_hi, hi, accs, dot_b_o)
    return m_new, l2, accs


@gluon.jit
def _attend(
    q_smem,
    kset,
    idx_row,
    t0,
    end,
    qk_scale,
    m_i,
    l2,
    accs,
    BLOCK_H: gl.constexpr,
    BLOCK_T: gl.constexpr,
    CHAINS: gl.constexpr,
    ABLATE: gl.constexpr,
    mma: gl.constexpr,
    mma_o: gl.constexpr,
):
    """One tile's scores, online softmax (base 2) and P.V.

    l2 keeps the running denominator per (head, token column) and is summed
    over the columns once after the loop: a per-tile row sum would cross the
    warps that split the tile's tokens (a shared-memory round trip a tile).
    """
    dot_a: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
    dot_b: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=2)
    dot_a_o: gl.constexpr = gl.DotOperandLayout(
        operand_index=0, parent=mma_o, k_width=2
    )
    dot_b_o: gl.constexpr = gl.DotOperandLayout(
        operand_index=1, parent=mma_o, k_width=2
    )
    tok = t0 + gl.arange(0, BLOCK_T, layout=gl.SliceLayout(0, mma))
    # The indices came in two tiles ago; this reload hits L1 or L2.
    valid = gl.load(idx_row + tok, mask=tok < end, other=-1) >= 0
    z = gl.zeros([BLOCK_H, BLOCK_T], gl.float32, mma)
    if ABLATE == 1:
        s = z
    else:
        s = _scores(q_smem, kset, z, dot_a, dot_b, CHAINS)
    s = gl.where(valid[None, :], s * qk_scale, float("-inf"))
    m_new = gl.maximum(m_i, gl.max(s, 1))
    # A tile with no valid token leaves m at -inf; subtracting it would give NaN.
    m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = gl.exp2(m_i - m_safe)
    p = gl.exp2(s - m_safe[:, None])
    l2 = l2 * alpha[:, None] + p
    p = gl.convert_layout(p.to(gl.bfloat16), dot_a_o)
    if ABLATE != 1:
        accs = _pv(p, kset, accs, _rows_to(alpha, mma, mma_o), dot_b_o)
    return m_new, l2, accs


@gluon.jit
def _rows_to(x, mma: gl.constexpr, mma_o: gl.constexpr):
    """A per-head vector from the scores' layout to the accumulator's (a
    shared-memory round trip when their warps split the heads differently)."""
    if mma == mma_o:
        return x
    else:
        return gl.convert_layout(x, gl.SliceLayout(1, mma_o))


@gluon.jit
def _tile(
    q_smem,
    kset,
    idx_row,
    t0,
    end,
    qk_scale,
    m_i,
    l2,
    accs,
    BLOCK_H: gl.constexpr,
    BLOCK_T: gl.constexpr,
    CHAINS: gl.constexpr,
    SUBTILES: gl.constexpr,
    ABLATE: gl.constexpr,
    mma: gl.constexpr,
    mma_o: gl.constexpr,
):
    if SUBTILES == 2:
        return _attend_halves(
            q_smem,
            kset,
            idx_row,
            t0,
            end,
            qk_scale,
            m_i,
            l2,
            accs,
            BLOCK_H,
            BLOCK_T,
            ABLATE,
            mma,
            mma_o,
        )
    else:
        return _attend(
            q_smem,
            kset,
            idx_row,
            t0,
            end,
            qk_scale,
            m_i,
            l2,
            accs,
            BLOCK_H,
            BLOCK_T,
            CHAINS,
            ABLATE,
            mma,
            mma_o,
        )


@gluon.jit
def _alloc_set(BLOCK_T: gl.constexpr):
    k_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for(
        [BLOCK_T, 64], gl.bfloat16
    )
    return (
        gl.allocate_shared_memory(gl.bfloat16, [BLOCK_T, 64], k_layout),
        gl.allocate_shared_memory(gl.bfloat16, [BLOCK_T, 64], k_layout),
        gl.allocate_shared_memory(gl.bfloat16, [BLOCK_T, 64], k_layout),
        gl.allocate_shared_memory(gl.bfloat16, [BLOCK_T, 64], k_layout),
        gl.allocate_shared_memory(gl.bfloat16, [BLOCK_T, 64], k_layout),
        gl.allocate_shared_memory(gl.bfloat16, [BLOCK_T, 64], k_layout),
        gl.allocate_shared_memory(gl.bfloat16, [BLOCK_T, 64], k_layout),
        gl.allocate_shared_memory(gl.bfloat16, [BLOCK_T, 64], k_layout),
    )


@gluon.jit
def _load_q(
    Q,
    q_smem,
    pid_b,
    stride_q_batch,
    stride_q_head,
    h0,
    num_heads,
    BLOCK_H: gl.constexpr,
    NUM_WARPS: gl.constexpr,
):
    """Q's BLOCK_H rows into shared memory once (rows past num_heads are zeros)."""
    q_lay: gl.constexpr = gl.BlockedLayout([1, 8], [1, 32], [NUM_WARPS, 1], [1, 0])
    heads = h0 + gl.arange(0, BLOCK_H, layout=gl.SliceLayout(1, q_lay))
    dims = gl.arange(0, HEAD_DIM, layout=gl.SliceLayout(0, q_lay))
    q = gl.load(
        Q + pid_b * stride_q_batch + heads[:, None] * stride_q_head + dims[None, :],
        mask=(heads < num_heads)[:, None],
        other=0.0,
    )
    q_smem.store(q)


@gluon.jit
def _pipe_decode_kernel(
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
    HAS_TOPK_LENGTH: gl.constexpr,
    BLOCK_H: gl.constexpr,
    BLOCK_T: gl.constexpr,
    SPLIT_K: gl.constexpr,
    WARPS_N: gl.constexpr,
    NUM_BUFS: gl.constexpr,
    CHAINS: gl.constexpr,
    SUBTILES: gl.constexpr,
    PV_WARPS_M: gl.constexpr,
    COALESCE: gl.constexpr,
    PIPE: gl.constexpr,
    ABLATE: gl.constexpr,
):
    """Scores and P.V for BLOCK_H heads of one batch row over one split of its tokens.

    The scores' MMA layout gives each warp 16 heads (WARPS_M warps down the
    heads); the accumulator's may give each warp more (PV_WARPS_M warps
    down the heads, each MMA's K fragment then serving 2 or 4 row blocks
    from registers), which halves or quarters the P.V reads of the K tile.
    """
    WARPS_M: gl.constexpr = BLOCK_H // 16
    NUM_WARPS: gl.constexpr = WARPS_M * WARPS_N
    mma: gl.constexpr = gl.NVMMADistributedLayout(
        version=[2, 0], warps_per_cta=[WARPS_M, WARPS_N], instr_shape=[16, 8]
    )
    if PV_WARPS_M == WARPS_M:
        mma_o: gl.constexpr = mma
    else:
        mma_o: gl.constexpr = gl.NVMMADistributedLayout(
            version=[2, 0],
            warps_per_cta=[PV_WARPS_M, NUM_WARPS // PV_WARPS_M],
            instr_shape=[16, 8],
        )
    # The gather: one token row per thread row, V contiguous bytes (fp8) or
    # values (rope) a thread, every thread of the program loading.
    V: gl.constexpr = BLOCK_T * 64 // (NUM_WARPS * 32)
    lay: gl.constexpr = gl.BlockedLayout(
        [1, V], [32 // (64 // V), 64 // V], [NUM_WARPS, 1], [1, 0]
    )
    rows: gl.constexpr = gl.SliceLayout(1, lay)

    pid_h = gl.program_id(0)
    pid_s = gl.program_id(1)
    pid_b = gl.program_id(2).to(gl.int64)
    h0 = pid_h * BLOCK_H
    idx_row = Indices + pid_b * stride_idx_batch

    n_tokens = topk
    if HAS_TOPK_LENGTH:
        n_tokens = gl.minimum(gl.load(TopkLength + pid_b), topk)
    # Whole tiles per split, sized from this row's own length so splits stay balanced.
    per_split = gl.cdiv(gl.cdiv(n_tokens, SPLIT_K), BLOCK_T) * BLOCK_T
    start = pid_s * per_split
    end = gl.minimum(start + per_split, n_tokens)
    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)

    # The first tile's indices and raw bytes go out before Q is staged.
    tok = start + gl.arange(0, BLOCK_T, layout=rows)
    idx = gl.load(idx_row + tok, mask=tok < end, other=-1)
    raw, idx = _fetch(
        KV,
        idx_row,
        idx,
        start + BLOCK_T,
        end,
        page_stride,
        page_size,
        BLOCK_T,
        ABLATE,
        lay,
    )

    q_smem = gl.allocate_shared_memory(
        gl.bfloat16,
        [BLOCK_H, HEAD_DIM],
        gl.NVMMASharedLayout.get_default_for([BLOCK_H, HEAD_DIM], gl.bfloat16),
    )
    _load_q(
        Q,
        q_smem,
        pid_b,
        stride_q_batch,
        stride_q_head,
        h0,
        num_heads,
        BLOCK_H,
        NUM_WARPS,
    )
    set_a = _alloc_set(BLOCK_T)
    _store_tile(raw, set_a)
    gl.thread_barrier()

    m_i = gl.full([BLOCK_H], float("-inf"), gl.float32, gl.SliceLayout(1, mma))
    l2 = gl.zeros([BLOCK_H, BLOCK_T // SUBTILES], gl.float32, mma)
    if SUBTILES == 2:
        l2 = _pair_sum(l2)
    z = gl.zeros([BLOCK_H, 64], gl.float32, mma_o)
    accs = (z, z, z, z, z, z, z, z)
    if PIPE == 2:
        # Tile i + 1's loads are issued at the top of iteration i and stored
        # at its end, so the raw bytes are never carried around the loop:
        # carried, Triton's fp8 elements become one register a byte, which
        # the compiler unpacks (and so waits for) before the back edge.
        if NUM_BUFS == 1:
            for i in range(n_tiles):
                t0 = start + i * BLOCK_T
                raw, idx = _fetch(
                    KV,
                    idx_row,
                    idx,
                    t0 + 2 * BLOCK_T,
                    end,
                    page_stride,
                    page_size,
                    BLOCK_T,
                    ABLATE,
                    lay,
                )
                m_i, l2, accs = _tile(
                    q_smem,
                    set_a,
                    idx_row,
                    t0,
                    end,
                    qk_scale,
                    m_i,
                    l2,
                    accs,
                    BLOCK_H,
                    BLOCK_T,
                    CHAINS,
                    SUBTILES,
                    ABLATE,
                    mma,
                    mma_o,
                )
                _store_tile(raw, set_a)
                gl.thread_barrier()
        else:
            set_b = _alloc_set(BLOCK_T)
            for i in range(0, n_tiles, 2):
                t0 = start + i * BLOCK_T
                raw, idx = _fetch(
                    KV,
                    idx_row,
                    idx,
                    t0 + 2 * BLOCK_T,
                    end,
                    page_stride,
                    page_size,
                    BLOCK_T,
                    ABLATE,
                    lay,
                )
                m_i, l2, accs = _tile(
                    q_smem,
                    set_a,
                    idx_row,
                    t0,
                    end,
                    qk_scale,
                    m_i,
                    l2,
                    accs,
                    BLOCK_H,
                    BLOCK_T,
                    CHAINS,
                    SUBTILES,
                    ABLATE,
                    mma,
                    mma_o,
                )
                _store_tile(raw, set_b)
                gl.thread_barrier()
                raw, idx = _fetch(
                    KV,
                    idx_row,
                    idx,
                    t0 + 3 * BLOCK_T,
                    end,
                    page_stride,
                    page_size,
                    BLOCK_T,
                    ABLATE,
                    lay,
                )
                if i + 1 < n_tiles:
                    m_i, l2, accs = _tile(
                        q_smem,
                        set_b,
                        idx_row,
                        t0 + BLOCK_T,
                        end,
                        qk_scale,
                        m_i,
                        l2,
                        accs,
                        BLOCK_H,
                        BLOCK_T,
                        CHAINS,
                        SUBTILES,
                        ABLATE,
                        mma,
                        mma_o,
                    )
                _store_tile(raw, set_a)
                gl.thread_barrier()
    else:
        raw, idx = _fetch(
            KV,
            idx_row,
            idx,
            start + 2 * BLOCK_T,
            end,
            page_stride,
            page_size,
            BLOCK_T,
            ABLATE,
            lay,
        )
        if NUM_BUFS == 1:
            for i in range(n_tiles):
                t0 = start + i * BLOCK_T
                m_i, l2, accs = _tile(
                    q_smem,
                    set_a,
                    idx_row,
                    t0,
                    end,
                    qk_scale,
                    m_i,
                    l2,
                    accs,
                    BLOCK_H,
                    BLOCK_T,
                    CHAINS,
                    SUBTILES,
                    ABLATE,
                    mma,
                    mma_o,
                )
                # Triton puts the barrier before these stores (the MMAs read set_a).
                _store_tile(raw, set_a)
                gl.thread_barrier()
                raw, idx = _fetch(
                    KV,
                    idx_row,
                    idx,
                    t0 + 3 * BLOCK_T,
                    end,
                    page_stride,
                    page_size,
                    BLOCK_T,
                    ABLATE,
                    lay,
                )
        else:
            set_b = _alloc_set(BLOCK_T)
            for i in range(0, n_tiles, 2):
                t0 = start + i * BLOCK_T
                m_i, l2, accs = _tile(
                    q_smem,
                    set_a,
                    idx_row,
                    t0,
                    end,
                    qk_scale,
                    m_i,
                    l2,
                    accs,
                    BLOCK_H,
                    BLOCK_T,
                    CHAINS,
                    SUBTILES,
                    ABLATE,
                    mma,
                    mma_o,
                )
                _store_tile(raw, set_b)
                gl.thread_barrier()
                raw, idx = _fetch(
                    KV,
                    idx_row,
                    idx,
                    t0 + 3 * BLOCK_T,
                    end,
                    page_stride,
                    page_size,
                    BLOCK_T,
                    ABLATE,
                    lay,
                )
                if i + 1 < n_tiles:
                    m_i, l2, accs = _tile(
                        q_smem,
                        set_b,
                        idx_row,
                        t0 + BLOCK_T,
                        end,
                        qk_scale,
                        m_i,
                        l2,
                        accs,
                        BLOCK_H,
                        BLOCK_T,
                        CHAINS,
                        SUBTILES,
                        ABLATE,
                        mma,
                        mma_o,
                    )
                _store_tile(raw, set_a)
                gl.thread_barrier()
                raw, idx = _fetch(
                    KV,
                    idx_row,
                    idx,
                    t0 + 4 * BLOCK_T,
                    end,
                    page_stride,
                    page_size,
                    BLOCK_T,
                    ABLATE,
                    lay,
                )

    # The program ids again rather than values kept alive across the loop,
    # whose registers it needs.
    _epilogue(
        accs,
        _rows_to(m_i, mma, mma_o),
        _rows_to(_row_sum(l2, NUM_WARPS, mma), mma, mma_o),
        q_smem,
        Out,
        Lse,
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
        COALESCE,
        mma_o,
    )


@gluon.jit
def _row_sum(l2, NUM_WARPS: gl.constexpr, mma: gl.constexpr):
    """The denominators: l2 summed over its token columns, once after the loop.

    Summed in a row-major layout of its own, so the reduction shares no
    thread-index arithmetic with the loop's row maxima: shared, those values
    stay live across the loop and spill at 255 registers.
    """
    lay: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [NUM_WARPS, 1], [1, 0])
    total = gl.sum(gl.convert_layout(l2, lay), 1)
    return gl.convert_layout(total, gl.SliceLayout(1, mma))


@gluon.jit
def _epilogue(
    accs,
    m_i,
    l_i,
    q_smem,
    Out,
    Lse,
    pid_b,
    pid_s,
    h0,
    num_heads,
    stride_out_batch,
    stride_out_split,
    stride_out_head,
    stride_lse_batch,
    stride_lse_split,
    BLOCK_H: gl.constexpr,
    SPLIT_K: gl.constexpr,
    NUM_WARPS: gl.constexpr,
    COALESCE: gl.constexpr,
    mma: gl.constexpr,
):
    """Normalise and write the output (or this split's bf16 partial) and the lse."""
    row_lay: gl.constexpr = gl.SliceLayout(1, mma)
    empty = l_i == 0.0
    inv = gl.where(empty, 0.0, 1.0 / l_i)[:, None]
    lse2 = gl.where(empty, float("-inf"), m_i + gl.log2(l_i))
    heads = h0 + gl.arange(0, BLOCK_H, layout=row_lay)
    # Row-major bf16 stores (whole sectors) rather than the MMA layout's pairs.
    # 4 rows a warp, or 2 where 8 warps share 16 rows (no thread stores twice).
    if BLOCK_H // NUM_WARPS >= 4:
        out_lay: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [NUM_WARPS, 1], [1, 0])
    else:
        out_lay: gl.constexpr = gl.BlockedLayout(
            [1, 4], [2, 16], [NUM_WARPS, 1], [1, 0]
        )
    out_heads = h0 + gl.arange(0, BLOCK_H, layout=gl.SliceLayout(1, out_lay))
    out_cols = gl.arange(0, 64, layout=gl.SliceLayout(0, out_lay))
    o_ptr = (
        Out
        + pid_b * stride_out_batch
        + out_heads[:, None] * stride_out_head
        + out_cols[None, :]
    )
    if SPLIT_K > 1:
        o_ptr += pid_s * stride_out_split
    o_mask = (out_heads < num_heads)[:, None]
    # Or straight from the accumulator's layout (4-byte stores), which needs
    # fewer registers kept across the loop for the epilogue's index math.
    m_heads = h0 + gl.arange(0, BLOCK_H, layout=gl.SliceLayout(1, mma))
    m_cols = gl.arange(0, 64, layout=gl.SliceLayout(0, mma))
    m_ptr = (
        Out
        + pid_b * stride_out_batch
        + m_heads[:, None] * stride_out_head
        + m_cols[None, :]
    )
    if SPLIT_K > 1:
        m_ptr += pid_s * stride_out_split
    if COALESCE == 2:
        # Through Q's shared memory, free once the loop is done: the same
        # round trip as convert_layout, in one pass with one barrier.
        gl.thread_barrier()
        for g in gl.static_range(8):
            q_smem.slice(g * 64, 64, dim=1).store((accs[g] * inv).to(gl.bfloat16))
        gl.thread_barrier()
        for g in gl.static_range(8):
            o = q_smem.slice(g * 64, 64, dim=1).load(out_lay)
            gl.store(o_ptr + g * 64, o, mask=o_mask)
    else:
        for g in gl.static_range(8):
            o = (accs[g] * inv).to(gl.bfloat16)
            if COALESCE:
                gl.store(o_ptr + g * 64, gl.convert_layout(o, out_lay), mask=o_mask)
            else:
                gl.store(m_ptr + g * 64, o, mask=(m_heads < num_heads)[:, None])
    if SPLIT_K == 1:
        gl.store(
            Lse + pid_b * stride_lse_batch + heads, lse2 * LN2, mask=heads < num_heads
        )
    else:
        # The lse stays base 2 until the combine kernel merges the partials.
        lse_ptr = Lse + pid_b * stride_lse_batch + pid_s * stride_lse_split + heads
        gl.store(lse_ptr, lse2, mask=heads < num_heads)


@triton.jit
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
):
    """Merge the SPLIT_K bf16 partial results of one (batch, head) by log-sum-exp.

    One split at a time as a 512-vector: bf16 splits loaded as one tile would
    land in different warps and their sum would cross shared memory.
    """
    if PDL:
        # Launched with programmatic dependent launch: wait here until the
        # decode kernel's partials are written and visible.
        tl.extra.cuda.gdc_wait()
    head = tl.program_id(0)
    pid_b = tl.program_id(1).to(tl.int64)
    split = tl.arange(0, SPLIT_P2)
    dims = tl.arange(0, HEAD_DIM)
    plse = PartLse + pid_b * stride_plse_batch + head
    part = Part + pid_b * stride_part_batch + head * stride_part_head + dims
    lse2 = tl.load(
        plse + split * stride_plse_split, mask=split < SPLIT_K, other=float("-inf")
    )
    top = tl.max(lse2, 0)
    # Every split empty: keep the weights at zero rather than exp2(-inf + inf).
    top = tl.where(top == float("-inf"), 0.0, top)
    total = tl.sum(tl.exp2(lse2 - top), 0)
    acc = tl.zeros([HEAD_DIM], tl.float32)
    for s in tl.static_range(SPLIT_K):
        # Every split writes its partial (zeros and -inf when empty): no mask.
        w = tl.exp2(tl.load(plse + s * stride_plse_split) - top)
        acc += tl.load(part + s * stride_part_split).to(tl.float32) * w
    o = acc / tl.maximum(total, 1e-30)
    lse = tl.where(total > 0.0, (top + tl.log2(total)) * LN2, float("-inf"))
    tl.store(
        Out + pid_b * stride_out_batch + head * stride_out_head + dims,
        o.to(tl.bfloat16),
    )
    tl.store(Lse + pid_b * stride_lse_batch + head, lse)


def _pdl(device):
    """griddepcontrol exists from sm_90 on (the combine's early launch)."""
    return device.type == "cuda" and torch.cuda.get_device_capability(device)[0] >= 9


def supports(q, k_cache, indices):
    """True when the kernel handles these inputs; callers fall back otherwise."""
    return (
        q.is_cuda
        and q.dtype == torch.bfloat16
        and q.dim() == 4
        and q.shape[1] == 1
        and q.shape[3] == _HEAD_DIM
        and q.stride(3) == 1
        and 0 < q.shape[0] <= 65535
        and k_cache.dtype in (torch.float8_e4m3fn, torch.uint8)
        and k_cache.dim() == 4
        and k_cache.is_cuda
        and k_cache.stride(0)
        >= k_cache.shape[1] * (_TOKEN_DATA_BYTES + _TOKEN_SCALE_BYTES)
        # Each token's scales load as one 8-byte word: pages 8-byte aligned
        # (SGLang pads the stride to a multiple of 576).
        and k_cache.stride(0) % _TOKEN_SCALE_BYTES == 0
        and k_cache.data_ptr() % _TOKEN_SCALE_BYTES == 0
        and indices.dtype == torch.int32
        and indices.shape[0] == q.shape[0]
    )


def sparse_decode(q, k_cache, indices, topk_length, softmax_scale):
    """Drop-in for _run_triton_sparse_decode: (out [B, 1, H, 512] bf16, lse [B, 1, H] fp32)."""
    batch, _, heads, _ = q.shape
    name = select(batch, indices.reshape(batch, -1).shape[1], heads)
    return launch(name, q, k_cache, indices, topk_length, softmax_scale)


def launch(name, q, k_cache, indices, topk_length, softmax_scale):
    """Run configuration `name`: (out [B, 1, H, 512] bf16, lse [B, 1, H] fp32)."""
    block_h, split_k = CONFIGS[name]["BLOCK_H"], CONFIGS[name]["SPLIT_K"]
    batch, _, num_heads, _ = q.shape
    if k_cache.dtype == torch.uint8:
        k_cache = k_cache.view(torch.float8_e4m3fn)
    idx = indices.reshape(batch, -1)
    if idx.stride(-1) != 1:
        idx = idx.contiguous()
    if topk_length is not None and topk_length.dtype != torch.int32:
        topk_length = topk_length.to(torch.int32)
    out = torch.empty(
        (batch, 1, num_heads, _HEAD_DIM), dtype=torch.bfloat16, device=q.device
    )
    lse = torch.empty((batch, 1, num_heads), dtype=torch.float32, device=q.device)
    if split_k == 1:
        part, part_lse = out, lse
    else:
        # Allocated inside the call: CUDA-graph capture records these too.
        part = torch.empty(
            (batch, split_k, num_heads, _HEAD_DIM),
            dtype=torch.bfloat16,
            device=q.device,
        )
        part_lse = torch.empty(
            (batch, split_k, num_heads), dtype=torch.float32, device=q.device
        )
    has_len = topk_length is not None
    grid = (triton.cdiv(num_heads, block_h), split_k, batch)
    _pipe_decode_kernel[grid](
        q,
        k_cache,
        idx,
        topk_length if has_len else idx,
        part,
        part_lse,
        q.stride(0),
        q.stride(2),
        idx.stride(0),
        part.stride(0),
        part.stride(1),
        part.stride(2),
        part_lse.stride(0),
        part_lse.stride(1),
        k_cache.stride(0),
        k_cache.shape[1],
        idx.shape[1],
        num_heads,
        softmax_scale * _LOG2E,
        HAS_TOPK_LENGTH=has_len,
        **constexprs_of(name),
        num_warps=num_warps_of(name),
    )
    if split_k > 1:
        pdl = _pdl(q.device)
        _combine_kernel[(num_heads, batch)](
            part,
            part_lse,
            out,
            lse,
            part.stride(0),
            part.stride(1),
            part.stride(2),
            part_lse.stride(0),
            part_lse.stride(1),
            out.stride(0),
            out.stride(2),
            lse.stride(0),
            SPLIT_K=split_k,
            SPLIT_P2=triton.next_power_of_2(split_k),
            PDL=pdl,
            num_warps=2,
            launch_pdl=pdl,
        )
    return out, lse
