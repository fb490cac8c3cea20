"""Make lab/chain's module copies (git-ignored) from the modules at 5b63512:
`base90` and `base120` as they are, and `stamp90` and `stamp120`, whose
kernels write time stamps as a small-batch call runs: %globaltimer (ns,
one clock for the whole GPU) and %clock64 (the SM's cycles) at the points
of one program's chain, and the SM it ran on.

- sm_90's narrow 16-head kernel: its consumer warps as they start, once
  the row's length is in (_split_range), once Q is in shared memory, once
  the first tile is ready, as the loop ends and after the epilogue's
  stores; its producer warps as they start, once the first tile's indices
  are in, once its scale words are in, and after its first arrive.
- sm_120's pipelined kernel: as it starts, once the row's length is in,
  once the first tile's indices are in, once the first tile and Q are in
  shared memory, as the loop ends and after the epilogue's stores.
- the bf16 split-K combine of both: as a program starts, after its
  griddepcontrol.wait and after its stores.

The stamps go to the kernels' Sink argument, which these calls do not
otherwise read (no sink): the plan passes the module's stamp buffer
(_stamps) there. A stamp after a load takes the loaded values as an
operand of a predicated read of the timer, so it is read only once they
have arrived. Program p of the decode grid (p = (pid2 * grid1 + pid1) *
grid0 + pid0) writes slots 32p..32p+31, program q of the combine 2^19 +
16q..; the probe's stamp kernels before and after the call write the last
slots. (results/ and results2/ were made when a combine program had 8
slots, and its last stamp's SM id overwrote the next program's first timer:
their combine start times are not times.)

`stamp120s` is stamp120 whose 64-head tiles signal their combine in every
split, as lab/pdl120's `late` did: device3.sh and placement.py trace where
its combine programs go (written in the twenty-first session, run in the
twenty-second from a42b63e's modules: results3/).

    python3 lab/chain/prepare.py [COMMIT]   # lab/chain/{base90,stamp90,base120,stamp120,stamp120s}

COMMIT is 5b63512 unless given (the twenty-first session's second run,
results2/, was made from 02e6438's modules).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

COMMIT = "5b63512"

HELPERS = '''

# --- lab/chain: time stamps -------------------------------------------------

_STAMP_BUFFERS = {}
STAMP_SLOTS = 1 << 20
COMBINE_SLOTS = 1 << 19  # _combine_bf16_kernel's CS


def _stamps(device):
    """The device's stamp buffer (int64, STAMP_SLOTS), made once."""
    key = str(device)
    if key not in _STAMP_BUFFERS:
        _STAMP_BUFFERS[key] = torch.zeros(STAMP_SLOTS, dtype=torch.int64, device=device)
    return _STAMP_BUFFERS[key]


_TIMER = tl.constexpr(
    "{ .reg .pred p; mov.u64 $0, 0; setp.ne.s32 p, $1, 2147483647; "
    "@p mov.u64 $0, %globaltimer; }"
)
_CLOCK = tl.constexpr(
    "{ .reg .pred p; mov.u64 $0, 0; setp.ne.s32 p, $1, 2147483647; "
    "@p mov.u64 $0, %clock64; }"
)


@gluon.jit
def _program_slot():
    p = (
        gl.program_id(2) * gl.num_programs(1) + gl.program_id(1)
    ) * gl.num_programs(0) + gl.program_id(0)
    return p * 32


@gluon.jit
def _stamp_rows(Stamps, k, dep, rows):
    """The timer and the SM's clock at slots k and k + 1 of this program's,
    read once dep (int32, elementwise) is in; written by the threads that
    hold rows == 0."""
    S = Stamps.to(gl.pointer_type(gl.int64)) + _program_slot() + k
    t = gl.inline_asm_elementwise(
        _TIMER, "=l,r", [dep], dtype=gl.int64, is_pure=False, pack=1
    )
    c = gl.inline_asm_elementwise(
        _CLOCK, "=l,r", [dep], dtype=gl.int64, is_pure=False, pack=1
    )
    first = rows == 0
    gl.store(S + rows * 0, t, mask=first)
    gl.store(S + 1 + rows * 0, c, mask=first)


@gluon.jit
def _stamp(Stamps, k, value):
    """_stamp_rows once `value` (an int32 scalar) is in, by the calling
    warps' first thread."""
    lay: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    rows = gl.arange(0, 32 * gl.num_warps(), layout=lay)
    _stamp_rows(Stamps, k, gl.zeros([32 * gl.num_warps()], gl.int32, lay) + value, rows)


@gluon.jit
def _stamp_sm(Stamps, k):
    lay: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    rows = gl.arange(0, 32 * gl.num_warps(), layout=lay)
    sm = gl.inline_asm_elementwise(
        "mov.u32 $0, %smid;", "=r,r", [rows], dtype=gl.int32, is_pure=False, pack=1
    )
    S = Stamps.to(gl.pointer_type(gl.int64)) + _program_slot() + k
    gl.store(S + rows * 0, sm.to(gl.int64), mask=rows == 0)


@triton.jit
def _tstamp(Stamps, slot):
    """Timer, clock and SM at Stamps[slot..slot + 2], by the first thread."""
    S = Stamps.to(tl.pointer_type(tl.int64)) + slot
    r = tl.arange(0, 32)
    zero = r * 0
    t = tl.inline_asm_elementwise(_TIMER, "=l,r", [zero], dtype=tl.int64, is_pure=False, pack=1)
    c = tl.inline_asm_elementwise(_CLOCK, "=l,r", [zero], dtype=tl.int64, is_pure=False, pack=1)
    sm = tl.inline_asm_elementwise(
        "mov.u32 $0, %smid;", "=r,r", [zero], dtype=tl.int32, is_pure=False, pack=1
    )
    tl.store(S + zero, t, mask=r == 0)
    tl.store(S + 1 + zero, c, mask=r == 0)
    tl.store(S + 2 + zero, sm.to(tl.int64), mask=r == 0)


@triton.jit
def _stamp_kernel(Stamps, slot):
    _tstamp(Stamps, slot)
'''

# The plan passes the stamp buffer as the kernels' Sink.
PLAN = [
    (
        "sink=(lse if sink is None else sink).data_ptr(),",
        "sink=_stamps(device).data_ptr(),",
    ),
    ("sink=lse if sink is None else sink,", "sink=_stamps(device),"),
]

# The bf16 combine: slots 2^19 + 16q: start 0, after the wait 3, end 6
# (each timer, clock and SM).
COMBINE = [
    (
        """4x slower. With HAS_SINK
    the head's attention sink joins the merge as a partial with no value.
    \"\"\"
""",
        """4x slower. With HAS_SINK
    the head's attention sink joins the merge as a partial with no value.
    \"\"\"
    CS = 524288 + (tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)) * 16
    _tstamp(Sink, CS)
""",
    ),
    (
        """    head = tl.program_id(0)
    pid_b = tl.program_id(1).to(tl.int64)
    split = tl.arange(0, SPLIT_P2)
    dims = tl.arange(0, HEAD_DIM)""",
        """    _tstamp(Sink, CS + 3)
    head = tl.program_id(0)
    pid_b = tl.program_id(1).to(tl.int64)
    split = tl.arange(0, SPLIT_P2)
    dims = tl.arange(0, HEAD_DIM)""",
    ),
    (
        "    tl.store(Lse + pid_b * stride_lse_batch + head, lse)\n",
        "    tl.store(Lse + pid_b * stride_lse_batch + head, lse)\n"
        "    _tstamp(Sink, CS + 6)\n",
    ),
]

# sm_90's narrow kernel. Consumer slots: start 0, length 2, Q 4, first
# tile 6, loop end 8, stores issued 10, SM 12. Producer: start 14, first
# indices 16, first scale words 18, first arrive 20.
NARROW = [
    (
        """    _ws_load_q(QDesc, q_row, q_ready, q_smem, BLOCK_H)
    start, end, base1, n0, n_virt = _split_range(""",
        """    _stamp(Sink, 0, 0)
    _ws_load_q(QDesc, q_row, q_ready, q_smem, BLOCK_H)
    start, end, base1, n0, n_virt = _split_range(""",
    ),
    (
        """    s_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_H, 16]
    )""",
        """    _stamp(Sink, 2, end)
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_H, 16]
    )""",
    ),
    (
        "    mbarrier.wait(q_ready, 0)\n    acc = gl.zeros([HEAD_DIM, BLOCK_H]",
        "    mbarrier.wait(q_ready, 0)\n    _stamp(Sink, 4, 0)\n"
        "    acc = gl.zeros([HEAD_DIM, BLOCK_H]",
    ),
    (
        """        mbarrier.wait(ready.index(buf), (i // NUM_BUFS) & 1)
        k = k_ring.index(buf)
        s = warpgroup_mma(
            k,
            q_smem.permute((1, 0)),""",
        """        mbarrier.wait(ready.index(buf), (i // NUM_BUFS) & 1)
        if i == 0:
            _stamp(Sink, 6, 0)
        k = k_ring.index(buf)
        s = warpgroup_mma(
            k,
            q_smem.permute((1, 0)),""",
    ),
    (
        """    if SPLIT_K > 1:
        _launch_dependents()
    l_i = gl.sum(l_part, 0)""",
        """    _stamp(Sink, 8, 0)
    if SPLIT_K > 1:
        _launch_dependents()
    l_i = gl.sum(l_part, 0)""",
    ),
    (
        """        gl.store(lse_ptr, lse2, mask=head_ok)


@gluon.jit
def _ws_narrow_kernel(""",
        """        gl.store(lse_ptr, lse2, mask=head_ok)
    _stamp(Sink, 10, 0)
    _stamp_sm(Sink, 12)


@gluon.jit
def _ws_narrow_kernel(""",
    ),
    ("    PREFETCH: gl.constexpr,\n):", "    PREFETCH: gl.constexpr,\n    Stamps,\n):"),
    (
        '    gl.static_assert(BLOCK_T == 64, "_DEQUANT_STORE_PTX',
        '    _stamp(Stamps, 14, 0)\n    gl.static_assert(BLOCK_T == 64, "_DEQUANT_STORE_PTX',
    ),
    (
        "        valid = idx >= 0\n        idx = gl.where(valid, idx, 0)\n",
        "        valid = idx >= 0\n        idx = gl.where(valid, idx, 0)\n"
        "        if i == 0:\n            _stamp_rows(Stamps, 16, idx, rows)\n",
    ),
    (
        "        mbarrier.wait(empty.index(buf), ((i // NUM_BUFS) & 1) ^ 1)\n",
        "        if i == 0:\n"
        "            _stamp_rows(Stamps, 18, (words != 12345).to(gl.int32), rows)\n"
        "        mbarrier.wait(empty.index(buf), ((i // NUM_BUFS) & 1) ^ 1)\n",
    ),
    (
        "        mbarrier.arrive(ready.index(buf), count=1)\n",
        "        mbarrier.arrive(ready.index(buf), count=1)\n"
        "        if i == 0:\n            _stamp(Stamps, 20, 0)\n",
    ),
]

# sm_120's pipelined kernel: start 0, length 2, first indices 4, first tile
# and Q stored 6, loop end 8, stores issued 10, SM 12.
PIPELINED = [
    (
        "    pid_b = gl.program_id(2).to(gl.int64)\n    h0 = pid_h * BLOCK_H\n",
        "    _stamp(Sink, 0, 0)\n"
        "    pid_b = gl.program_id(2).to(gl.int64)\n    h0 = pid_h * BLOCK_H\n",
    ),
    (
        "    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)\n    # Both caches'",
        "    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)\n"
        "    _stamp(Sink, 2, end)\n    # Both caches'",
    ),
    (
        "    idx = _pp_indices(src, start, end, HAS_EXTRA, gl.arange(0, BLOCK_T, layout=rows))\n",
        "    idx = _pp_indices(src, start, end, HAS_EXTRA, gl.arange(0, BLOCK_T, layout=rows))\n"
        "    _stamp_rows(Sink, 4, idx, gl.arange(0, BLOCK_T, layout=rows))\n",
    ),
    (
        """    _pp_store_tile(raw, set_a)
    gl.thread_barrier()
    qs = _pp_q_operands(q_smem, Q_REG_GROUPS, mma)""",
        """    _pp_store_tile(raw, set_a)
    gl.thread_barrier()
    _stamp(Sink, 6, 0)
    qs = _pp_q_operands(q_smem, Q_REG_GROUPS, mma)""",
    ),
    (
        "    if PDL and SPLIT_K > 1 and",
        "    _stamp(Sink, 8, 0)\n    if PDL and SPLIT_K > 1 and",
    ),
    (
        """        HAS_SINK,
        mma,
    )


@gluon.jit
def _pp_row_sum""",
        """        HAS_SINK,
        mma,
    )
    _stamp(Sink, 10, 0)
    _stamp_sm(Sink, 12)


@gluon.jit
def _pp_row_sum""",
    ),
]


# The signal's rule in the modules from 02e6438 on.
SIGNAL_RULE = "    if PDL and SPLIT_K > 1 and (BLOCK_H == 16 or SPLIT_K == 2):\n"


def with_helpers(name):
    """Append the stamp helpers to copy `name`'s module."""
    path = os.path.join(HERE, name, copies.MODULE)
    with open(path, "a") as f:
        f.write(HELPERS)


def producer_calls(name):
    """Give every _ws_producer partition the kernel's Sink as its Stamps."""
    path = os.path.join(HERE, name, copies.MODULE)
    with open(path) as f:
        text = f.read()
    n = 0
    for flag in ("True", "False"):
        old = f"                    HAS_TOPK_LENGTH1,\n                    {flag},\n                ),\n"
        new = old.replace(f"{flag},\n", f"{flag},\n                    Sink,\n")
        n += text.count(old)
        text = text.replace(old, new)
    if n != 3:
        raise SystemExit(f"{name}: {n} producer partitions, expected 3")
    with open(path, "w") as f:
        f.write(text)


def main():
    commit = sys.argv[1] if len(sys.argv) > 1 else COMMIT
    copies.base(HERE, commit=commit, target="sm90", name="base90")
    copies.base(HERE, commit=commit, target="sm120", name="base120")
    copies.edited(HERE, "stamp90", PLAN + COMBINE + NARROW, source="base90")
    producer_calls("stamp90")
    with_helpers("stamp90")
    copies.edited(HERE, "stamp120", PLAN + COMBINE + PIPELINED, source="base120")
    with_helpers("stamp120")
    copies.edited(
        HERE, "stamp120s", [(SIGNAL_RULE, "    if PDL and SPLIT_K > 1:\n")], "stamp120"
    )


if __name__ == "__main__":
    main()
