"""Make lab/pace's module copies (git-ignored) from 5616a4b's sm_90 module:
`base` as it is, and three producer-alone probes of its narrow 16-head
kernel, whose consumer takes each buffer and hands it back without its
MMAs or softmax (results wrong by design; lab/wst's nc on today's loop):

- `nc`: the shipped producer (8 warps, one tile in flight);
- `ncp16`: lab/p16's producer (16 warps at 80 registers);
- `ncppw`: lab/ppl's `ppw` producer (8 warps, two tiles in flight as
  32-bit words);

and for a second call, lab/p16's kernel without the producer's L2 prefetch
(each tile's loads go to DRAM themselves, as in lab/gatherrate, where 16
warps gathered 1.4x faster an SM than 8): `p16np` whole and `ncp16np` its
producer alone.

lab/bounds puts the narrow consumer's core at 1.11 µs of the 2.49 µs tile,
so the producer side paces the tile; yet p16 and ppw, which should speed
that side up, left the tile as it was. Whether they speed up the producer
alone says whether the producer's own pace or its interplay with the
consumer sets the tile.

    python3 lab/pace/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(HERE, "..")
sys.path.insert(0, LAB)
sys.path.insert(0, os.path.join(LAB, "c2n"))  # lab/ppl/prepare.py imports it

import copies  # noqa: E402

COMMIT = "5616a4b"


# What the probes' consumer does with each buffer instead of its loop body.
HAND_BACK = """        # lab/pace: one 2 KB read of the buffer keeps the K ring allocated.
        seen = k_ring.index(buf).slice(0, BLOCK_H, dim=1).load(s_layout)
        l_part = l_part + gl.where(valid[:, None], 1.0, 0.0) + seen.to(gl.float32) * 0.0
        mbarrier.arrive(empty.index(buf), count=1)
"""


NO_PREFETCH = (
    "        _prefetch_rows(kv_n, idx_next, stride_n, size_n, LANES)\n",
    "        # lab/pace: no L2 prefetch; the loads go to DRAM themselves.\n",
)


def no_consumer(text):
    """text with the narrow consumer's loop body, from its buffer's MMAs to
    the end of the iteration, replaced by HAND_BACK."""
    at = text.index("def _ws_narrow_consumer(")
    first = "        k = k_ring.index(buf)\n"
    last = "        m_i = m_new\n"
    a = text.index(first, at)
    b = text.index(last, a) + len(last)
    return text[:a] + HAND_BACK + text[b:]


def main():
    d = copies.base(HERE, commit=COMMIT, name="base", target="sm90")
    text = open(os.path.join(d, copies.MODULE)).read()
    copies.written(HERE, "nc", no_consumer(text))
    p16 = text
    for old, new in copies.lab_module("p16").edits(text):
        assert p16.count(old) == 1, old[:60]
        p16 = p16.replace(old, new)
    copies.written(HERE, "ncp16", no_consumer(p16))
    # Second call (device2.sh): p16 with its loads straight from DRAM, no L2
    # prefetch, whole and producer alone.
    p16np = p16.replace(NO_PREFETCH[0], NO_PREFETCH[1])
    assert p16.count(NO_PREFETCH[0]) == 1
    copies.written(HERE, "p16np", p16np)
    copies.written(HERE, "ncp16np", no_consumer(p16np))
    ppw = copies.lab_module("ppl").pipelined(text, 120, "words")
    copies.written(HERE, "ncppw", no_consumer(ppw))


if __name__ == "__main__":
    main()
