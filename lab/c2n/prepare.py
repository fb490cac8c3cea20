"""Make lab/c2n's module copies (git-ignored): `base`, the sm_90 module at
f33bd7e (this session's starting commit), and `c2n`, the same with two consumer warp groups beside the narrow
16-head kernel's producer instead of one.

The narrow tile's producer alone and its consumer alone each take about 85%
of its time (lab/wst, nc and np), and 16 producer warps instead of 8 change
nothing (lab/p16): the consumer's chain binds once the producer is faster.
Here the two groups take alternate tiles (with two K buffers each group
always reads the same one), each with its own P^T buffer, running maximum,
row sums and O^T; after the loop the second hands its state to the first
through shared memory (32 KB), and the first merges the two and writes the
result as before. Registers: 4 + 4 + 8 warps under a launch bound of 128;
the producer at 80 and the second group at 176 leave the first 176
(Triton's leftover rule), and nothing spills. Two K buffers only (three would need 244 KB).

    python3 lab/c2n/prepare.py
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

GROUP_REGS = 176


def group_function(module_text):
    """_ws_narrow_group: _ws_narrow_consumer made into one of two groups."""
    start = module_text.index("@gluon.jit\ndef _ws_narrow_consumer(")
    end = module_text.index("@gluon.jit\ndef _ws_narrow_kernel(")
    f = module_text[start:end]
    edits = [
        ("def _ws_narrow_consumer(", "def _ws_narrow_group("),
        (
            "    HAS_SINK: gl.constexpr,\n):",
            "    HAS_SINK: gl.constexpr,\n    G: gl.constexpr,\n    x_acc,\n    x_m,\n    x_l,\n    merged,\n):",
        ),
        (
            "    _ws_load_q(QDesc, q_row, q_ready, q_smem, BLOCK_H)\n",
            "    gl.static_assert(NUM_BUFS == 2, 'each group reads its own K buffer')\n"
            "    if G == 0:\n"
            "        _ws_load_q(QDesc, q_row, q_ready, q_smem, BLOCK_H)\n",
        ),
        ("    for i in range(n_tiles):\n", "    for i in range(G, n_tiles, 2):\n"),
        (
            "        buf = i % NUM_BUFS\n",
            "        # i % 2 is G: keep the buffer index opaque to LLVM (topk >> 31 is\n"
            "        # 0), or it hoists the loop's 64 wgmma descriptors and spills.\n"
            "        buf = (i + ((i >> 1) & (topk >> 31))) % NUM_BUFS\n",
        ),
        (
            "    l_i = gl.sum(l_part, 0)\n",
            "    l_i = gl.sum(l_part, 0)\n"
            "    if G == 1:\n"
            "        x_acc.store(acc)\n"
            "        x_m.store(m_i)\n"
            "        x_l.store(l_i)\n"
            "        gl.thread_barrier()\n"
            "        mbarrier.arrive(merged, count=1)\n"
            "        return\n"
            "    mbarrier.wait(merged, 0)\n"
            "    m_1 = x_m.load(heads_of)\n"
            "    l_1 = x_l.load(heads_of)\n"
            "    m_new = gl.maximum(m_i, m_1)\n"
            "    m_safe = gl.where(m_new == float('-inf'), 0.0, m_new)\n"
            "    a_0 = gl.exp2(m_i - m_safe)\n"
            "    a_1 = gl.exp2(m_1 - m_safe)\n"
            "    acc = acc * a_0[None, :] + x_acc.load(s_layout) * a_1[None, :]\n"
            "    l_i = l_i * a_0 + l_1 * a_1\n"
            "    m_i = m_new\n",
        ),
    ]
    for old, new in edits:
        if f.count(old) != 1:
            raise SystemExit(f"{old[:50]!r} occurs {f.count(old)} times")
        f = f.replace(old, new)
    return f


Q_READY = "    q_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())\n"
NARROW_INIT = (
    Q_READY + "    for b in gl.static_range(NUM_BUFS):\n"
    "        mbarrier.init(ready.index(b), count=1)\n"
    "        mbarrier.init(empty.index(b), count=1)\n"
    "    mbarrier.init(q_ready, count=1)\n"
    "    fence_async_shared()\n"
    "    q_row = pid_b.to(gl.int32) * num_heads + pid_h * BLOCK_H\n"
)
HANDOFF = (
    "    p1_smem = gl.allocate_shared_memory(\n"
    "        gl.bfloat16,\n"
    "        [BLOCK_T, BLOCK_H],\n"
    "        gl.NVMMASharedLayout.get_default_for([BLOCK_T, BLOCK_H], gl.bfloat16),\n"
    "    )\n"
    "    flat2: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0])\n"
    "    flat1: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[0])\n"
    "    x_acc = gl.allocate_shared_memory(gl.float32, [HEAD_DIM, BLOCK_H], flat2)\n"
    "    x_m = gl.allocate_shared_memory(gl.float32, [BLOCK_H], flat1)\n"
    "    x_l = gl.allocate_shared_memory(gl.float32, [BLOCK_H], flat1)\n"
    "    merged = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())\n"
    "    mbarrier.init(merged, count=1)\n"
)


def kernel_edits(module_text):
    consumer_args = re.search(
        r"\(\n                _ws_narrow_consumer,\n                \((.*?)\n                \),\n            \),",
        module_text,
        re.S,
    )
    args = consumer_args.group(1)
    call = consumer_args.group(0)
    g0 = call.replace("_ws_narrow_consumer", "_ws_narrow_group").replace(
        "HAS_SINK,\n                ),",
        "HAS_SINK,\n                    0,\n                    x_acc,\n                    x_m,\n"
        "                    x_l,\n                    merged,\n                ),",
    )
    g1 = g0.replace(
        "                    0,\n                    x_acc",
        "                    1,\n                    x_acc",
    ).replace("                    p_smem,\n", "                    p1_smem,\n")
    assert args
    return [
        (call, g0 + "\n" + g1),
        (
            "        [WS_NARROW_PRODUCER_WARPS],\n        [WS_NARROW_PRODUCER_REGS],\n",
            f"        [4, WS_NARROW_PRODUCER_WARPS],\n        [{GROUP_REGS}, WS_NARROW_PRODUCER_REGS],\n",
        ),
        # The hand-off buffers and the second group's P^T, allocated after Q's
        # mbarrier in the narrow kernel (its block is the one ending in q_row).
        (NARROW_INIT, NARROW_INIT.replace(Q_READY, Q_READY + HANDOFF, 1)),
        # The hand-off buffer lies between the K ring and Q: the launcher's
        # check of where the ring starts reads Q's first TMA copy.
        (
            "    ring = num_bufs * block_t * _HEAD_DIM * 2\n",
            "    ring = num_bufs * block_t * _HEAD_DIM * 2\n"
            "    ring += _HEAD_DIM * block_h * 4 if block_h < 64 else 0\n",
        ),
        (
            "WS_NARROW_PRODUCER_REGS = gl.constexpr(96)",
            "WS_NARROW_PRODUCER_REGS = gl.constexpr(80)",
        ),
        # 16 warps in 64K registers.
        (
            "        dict(num_warps=num_warps, maxnreg=_WS_MAXNREG),\n"
            "        cluster=c.split_k if c.cluster_merge else 1,",
            "        dict(num_warps=num_warps, maxnreg=128 if c.block_h < 64 else _WS_MAXNREG),\n"
            "        cluster=c.split_k if c.cluster_merge else 1,",
        ),
    ]


def main():
    d = copies.base(HERE, commit="f33bd7e", name="base", target="sm90")
    text = open(os.path.join(d, "sparse_mla_mma.py")).read()
    group = group_function(text)
    edits = kernel_edits(text) + [
        (
            "@gluon.jit\ndef _ws_narrow_kernel(",
            group + "@gluon.jit\ndef _ws_narrow_kernel(",
        ),
    ]
    print(copies.edited(HERE, "c2n", edits))


if __name__ == "__main__":
    main()
