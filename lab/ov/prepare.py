"""Make lab/ov's module copies (git-ignored) from 5616a4b's sm_90 module:
`base` as it is; `ov`, whose narrow 16-head consumer leaves each tile's P.V
in flight and issues the next tile's S^T before waiting for it; `ovw`, ov's
consumer beside lab/ppl's `ppw` producer (two tiles in flight, carried as
32-bit words).

The shipped consumer waits for each wgmma group in full: S^T, wait, the
softmax, P^T's store, P.V, wait, the buffer handed back, then the next
tile's buffer waited for and its S^T issued. lab/wst's probes put the
consumer alone (no memory traffic) at about 2.1 µs a 64-token tile and the
producer alone at about the same, overlapping into 2.5: a 1.3x needs both
sides faster. Here the consumer's P.V of tile i runs while it waits for
buffer i + 1 and issues S^T of tile i + 1; one wait then covers both (wgmma
groups complete in order), after which buffer i is handed back, one S^T
later than before. This is not lab/wst's `pl`, which issued tile i + 1's
S^T before tile i's P.V and so made P.V wait for the next buffer.

    python3 lab/ov/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "ppl"))

import copies  # noqa: E402
import prepare as ppl  # noqa: E402  (lab/ppl/prepare.py)

COMMIT = "5616a4b"

EDITS = [
    (
        "    warpgroup_mma_wait,\n)\n",
        "    warpgroup_mma_wait,\n    warpgroup_mma_init,\n)\n",
    ),
    (
        # The accumulator is carried across the loop while its P.V runs.
        "    acc = gl.zeros([HEAD_DIM, BLOCK_H], gl.float32, s_layout)\n",
        "    acc = warpgroup_mma_init(gl.zeros([HEAD_DIM, BLOCK_H], gl.float32, s_layout))\n",
    ),
    (
        "        s = warpgroup_mma_wait(0, deps=(s,))\n"
        '        s = gl.where(valid[:, None], s * qk_scale, float("-inf"))\n'
        "        m_new = gl.maximum(m_i, gl.max(s, 0))\n",
        "        # lab/ov: this wait also covers the previous tile's P.V.\n"
        "        s, acc = warpgroup_mma_wait(0, deps=(s, acc))\n"
        "        if i > 0:\n"
        "            mbarrier.arrive(empty.index((i - 1) % NUM_BUFS), count=1)\n"
        '        s = gl.where(valid[:, None], s * qk_scale, float("-inf"))\n'
        "        m_new = gl.maximum(m_i, gl.max(s, 0))\n",
    ),
    (
        "        acc = warpgroup_mma(k.permute((1, 0)), p_smem, acc, is_async=True)\n"
        "        acc = warpgroup_mma_wait(0, deps=(acc,))\n"
        "        mbarrier.arrive(empty.index(buf), count=1)\n"
        "        m_i = m_new\n",
        "        acc = warpgroup_mma(k.permute((1, 0)), p_smem, acc, is_async=True)\n"
        "        m_i = m_new\n"
        "    acc = warpgroup_mma_wait(0, deps=(acc,))\n"
        "    if n_tiles > 0:\n"
        "        mbarrier.arrive(empty.index((n_tiles - 1) % NUM_BUFS), count=1)\n",
    ),
]


def overlapped(text):
    for old, new in EDITS:
        assert text.count(old) == 1, old[:60]
        text = text.replace(old, new)
    return text


def main():
    d = copies.base(HERE, commit=COMMIT, name="base", target="sm90")
    text = open(os.path.join(d, copies.MODULE)).read()
    copies.written(HERE, "ov", overlapped(text))
    words = ppl.pipelined(text, int(os.environ.get("OVW_REGS", "120")), "words")
    copies.written(HERE, "ovw", overlapped(words))


if __name__ == "__main__":
    main()
