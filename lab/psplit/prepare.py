"""lab/psplit's module copies (git-ignored) from 31cdb3d's sm_90 module:
`base` as it is, and three probes of the narrow 16-head kernel's producer
alone (its consumer hands each buffer back untouched, lab/pace's `nc`;
results wrong by design):

- `nc`: the producer as shipped;
- `ncnost`: its shared-memory stores predicated off at run time (a
  predicate the stores' address never meets), so the loads and the
  dequantisation still run and only the stores go;
- `ncnofence`: no `fence.proxy.async` before each tile's arrive (the
  producer-wide barrier stays: taken out of the source, Triton puts one
  back before the arrive, which one thread issues);
- `ncnold`: every row's loads predicated off (the rows read as empty),
  the next tile's L2 prefetch kept;
- `ncnopf` (fourteenth session): ncnold without the L2 prefetch either,
  so no row leaves DRAM; the index loads, the buffer waits, the barrier
  and the arrive stay;
- `ncnoldlp` (fourteenth session): ncnold with lab/lp's prefetch, one
  `prefetch.global.L2` a 128-byte line instead of one bulk prefetch a row.

lab/pace put the producer alone at about 1.9 µs a 64-token tile, and
lab/dqs showed its arithmetic does not set that; these say whether its
stores, its fence or its loads do.

    python3 lab/psplit/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(HERE, "..")
sys.path.insert(0, LAB)
sys.path.insert(0, os.path.join(LAB, "c2n"))  # lab/pace imports lab/ppl's

import copies  # noqa: E402

STORE = '"st.shared.v4.b32 [b], {$16, $17, $18, $19}; "'
NO_STORE = (
    '".reg .pred off; setp.eq.u32 off, $8, -1; '
    '@off st.shared.v4.b32 [b], {$16, $17, $18, $19}; "'
)
FENCE = (
    "        fence_async_shared()\n"
    "        gl.thread_barrier()\n"
    "        mbarrier.arrive(ready.index(buf), count=1)\n"
)
NO_FENCE = (
    "        gl.thread_barrier()\n"
    "        mbarrier.arrive(ready.index(buf), count=1)\n"
)


# The producer's rows, predicated off (every slot read as empty): no load
# of a row or its scale word is issued; the next tile's L2 prefetch stays.
VALID = "        valid = idx >= 0\n        idx = gl.where(valid, idx, 0)\n"
NO_LOADS = "        valid = idx < -1\n        idx = gl.where(valid, idx, 0)\n"

# The next tile's rows into L2, not started.
PREFETCH = "        _prefetch_rows(kv_n, idx_next, stride_n, size_n)\n"
NO_PREFETCH = "        # lab/psplit ncnopf: no L2 prefetch.\n"


def replaced(text, old, new):
    assert text.count(old) == 1, old[:60]
    return text.replace(old, new)


def main():
    d = copies.base(HERE, commit="31cdb3d", name="base", target="sm90")
    text = open(os.path.join(d, copies.MODULE)).read()
    nc = copies.lab_module("pace").no_consumer(text)
    copies.written(HERE, "nc", nc)
    copies.written(HERE, "ncnost", replaced(nc, STORE, NO_STORE))
    copies.written(HERE, "ncnofence", replaced(nc, FENCE, NO_FENCE))
    nold = replaced(nc, VALID, NO_LOADS)
    copies.written(HERE, "ncnold", nold)
    copies.written(HERE, "ncnopf", replaced(nold, PREFETCH, NO_PREFETCH))
    copies.written(HERE, "ncnoldlp", copies.lab_module("lp").line_prefetch(nold))


if __name__ == "__main__":
    main()
