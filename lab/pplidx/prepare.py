"""Make lab/pplidx's module copies (git-ignored) from ee1994a's sm_90
module: `base` as it is, and `ppwi`, whose narrow kernel's 8-warp
producer is lab/ppl's ppw (tile i + 1's loads issued, as 32-bit words,
before tile i is stored) with its indices loaded three tiles ahead, so
that nothing in an iteration waits for a load issued in that iteration.

In the shipped producer the L2 prefetch of tile i + 1 uses indices loaded
at the top of iteration i; in ppw the prefetch of tile i + 2 does the
same. Either way each iteration holds one index round trip, and ppw's two
tiles in flight only traded the rows' latency for it (lab/ppl: 0.98-1.03x).
lab/idx2 took the index round trip out of the shipped loop and left the
rows' latency (1.00-1.03x). Here both are out of the chain: tile i + 1's
rows use indices loaded two iterations before, tile i + 2's prefetch
indices loaded one iteration before.

    python3 lab/pplidx/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "ppl"))

import copies  # noqa: E402  lab/copies.py
import prepare as ppl  # noqa: E402  lab/ppl/prepare.py

COMMIT = "ee1994a"


def loop(mode):
    """lab/ppl's pipelined loop with the indices three tiles ahead."""
    assert mode == "words"
    src = ppl.SRC
    return f"""        wl: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [gl.num_warps(), 1], [1, 0])
        wcols = gl.arange(0, 16, layout=gl.SliceLayout(0, wl))
        rows_w = gl.arange(0, BLOCK_T, layout=gl.SliceLayout(1, wl))
        kv, stride, size = _ppl_source(
            start,
            {src}
        )
        cur = _ppl_gather_w(kv, idx_next, stride, size, wcols, wl, rope_lay)
        idx_1 = _ppl_index(
            start + BLOCK_T,
            end,
            rows,
            {src}
        )
        idx_2 = _ppl_index(
            start + 2 * BLOCK_T,
            end,
            rows,
            {src}
        )
        for i in range(n_tiles):
            buf = i % NUM_BUFS
            t1 = start + (i + 1) * BLOCK_T
            # Loaded here, used two iterations on: no wait in this one.
            idx_3 = _ppl_index(
                t1 + 2 * BLOCK_T,
                end,
                rows,
                {src}
            )
            kv_n, stride_n, size_n = _ppl_source(
                t1,
                {src}
            )
            nxt = _ppl_gather_w(kv_n, idx_1, stride_n, size_n, wcols, wl, rope_lay)
            kv_a, stride_a, size_a = _ppl_source(
                t1 + BLOCK_T,
                {src}
            )
            _prefetch_rows(kv_a, idx_2, stride_a, size_a)
            mbarrier.wait(empty.index(buf), ((i // NUM_BUFS) & 1) ^ 1)
{ppl.STORES[mode]}            _st_shared_group(at_rope + buf * (8 * GROUP), cur[8])
            fence_async_shared()
            gl.thread_barrier()
            mbarrier.arrive(ready.index(buf), count=1)
            cur = nxt
            idx_1 = idx_2
            idx_2 = idx_3
"""


def main():
    d = copies.base(HERE, commit=COMMIT, name="base", target="sm90")
    text = open(os.path.join(d, copies.MODULE)).read()
    ppl.pipelined_loop = loop
    # The shipped producer finds a token's page by a shift (lab/dqp).
    ppl.HELPERS = ppl.HELPERS.replace(
        "data, scales_at = _token_offsets(", "data, scales_at = _ws_token_offsets("
    )
    regs = int(os.environ.get("PPWI_REGS", "128"))
    copies.written(HERE, "ppwi", ppl.pipelined(text, regs, "words"))


if __name__ == "__main__":
    main()
