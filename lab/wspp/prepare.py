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
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

# Producer registers, of the launch's 168 a thread at 12 warps; Triton
# gives the MMA warps the rest it can, 208 (compile.txt).
PRODUCER_REGS = 80
MAXNREG = 168

# The producer and the MMA warps' partitions.
PARTITIONS = '''

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


'''

# _wspp_decode_kernel is _pp_decode_kernel with these three parts replaced:
# its docstring, the gather's layouts (the producer has its own), and
# everything from the first gather to the epilogue (the fork).
DOC = (
    '    """Scores and P.V for BLOCK_H heads',
    '    """\n',
    '''    """_pp_decode_kernel's arguments and results, warp-specialised: 16-token
    tiles in one piece, two buffer sets, a producer partition of 4 warps."""
    gl.static_assert(NUM_BUFS == 2 and SUBTILES == 1, "two sets of one-piece tiles")
''',
)
GATHER = (
    "    # The gather: one token row per thread row",
    "    pid_h = gl.program_id(0)",
    "",
)
FORK = (
    "    # The first tile's indices and raw bytes go out before Q is staged.",
    "    # The program ids again rather than values kept alive across the loop,",
    """    q_smem = gl.allocate_shared_memory(
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

""",
)


def replace_between(text, first, until, new):
    """text with [first, until) replaced by new (until itself kept)."""
    i = text.index(first)
    j = text.index(until, i)
    return text[:i] + new + text[j:]


def ws_kernel(module):
    """_wspp_decode_kernel's source, from the module's _pp_decode_kernel."""
    start = module.index("@gluon.jit\ndef _pp_decode_kernel(")
    end = module.index("\n\n\n@gluon.jit\ndef _pp_row_sum(")
    k = module[start:end].replace("def _pp_decode_kernel(", "def _wspp_decode_kernel(")
    first, until, new = DOC
    i = k.index(first)
    k = k[:i] + new + k[k.index(until, i) + len(until) :]
    k = replace_between(k, GATHER[0], GATHER[1], GATHER[2])
    return replace_between(k, FORK[0], FORK[1], FORK[2])


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
    base = copies.base(HERE)
    with open(os.path.join(base, copies.MODULE)) as f:
        module = f.read()
    # The partitions and the kernel go in before _pp_row_sum.
    kernel = PARTITIONS + ws_kernel(module) + "\n\n"
    at = "\n\n@gluon.jit\ndef _pp_row_sum("
    copies.edited(HERE, "ws", EDITS + [(at, kernel + at[1:])])
    print("prepared base, ws")


if __name__ == "__main__":
    main()
