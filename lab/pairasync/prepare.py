"""lab/pairasync/pair: lab/pair's head pairs (wsp_*) with the remote half of
each tile sent by st.async, as FlashMLA's 128-head sparse decode sends it.

lab/pair's producers stored the other program's half with
st.shared::cluster and then arrived on its ready barrier with release at
cluster scope, which waits for those stores to land. Here each remote
16-byte store is an st.async that signals the other program's ready barrier
by its bytes (complete_tx), and each producer arrives on its own ready
barrier once, expecting the other's 32 KB: no remote arrive on the data
path, no release. The freed relay (buffers handed back across the pair)
is lab/pair's.

Run lab/pair/prepare.py first (it writes lab/pair/pair); this rewrites a
copy of that module, checking that every piece it replaces is there once.

    python3 lab/pair/prepare.py && python3 lab/pairasync/prepare.py
"""

import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "pair", "pair")
FILES = ("sparse_mla_mma.py", "harness.py", "simt_baseline.py")
# Byte of buffer 0's ready barrier: _ws_decode_kernel's PAIR_BARS for the
# wsp_ configurations (BLOCK_T 64, BLOCK_H 64, two buffers); the launcher's
# _pair_bars_error checks the compiled kernel against it.
READY = (2 * 64 + 64) * 512 * 2 + 4096

EDITS = [
    # The dequantise-and-store PTX: the other program's ready barrier of
    # this row's buffer (byte offsets of buffer b start at b << 16).
    (
        '"{ .reg .b32 lo, hi, e, c, d, t, s0, s1, r0, r1, v<4>; .reg .pred big, any; "',
        '"{ .reg .b32 lo, hi, e, c, d, t, s0, s1, r0, r1, rb, v<4>; .reg .pred big, any; "',
    ),
    (
        '"mapa.shared::cluster.u32 r0, s0, t; mapa.shared::cluster.u32 r1, s1, t; "',
        '"mapa.shared::cluster.u32 r0, s0, t; mapa.shared::cluster.u32 r1, s1, t; "\n'
        f'        "shr.u32 rb, $4, 16; shl.b32 rb, rb, 3; add.u32 rb, rb, {READY}; "\n'
        '        "mov.u32 e, global_smem; add.u32 e, e, rb; mapa.shared::cluster.u32 rb, e, t; "',
    ),
    (
        'ptx += f"st.shared::cluster.v4.b32 [{at}], " + "{v0, v1, v2, v3}; "',
        "ptx += (\n"
        '                        f"st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [{at}], "\n'
        '                        + "{v0, v1, v2, v3}, [rb]; "\n'
        "                    )",
    ),
    # The rope's 16-byte stores.
    (
        '"{ .reg .u32 a, b, r; mov.u32 b, global_smem; add.u32 b, b, $8; "\n'
        '        "mov.u32 r, %cluster_ctarank; xor.b32 r, r, 1; "\n'
        '        "mapa.shared::cluster.u32 a, b, r; "\n'
        '        "st.shared.v4.b32 [b], {$16, $17, $18, $19}; "\n'
        '        "st.shared::cluster.v4.b32 [a], {$16, $17, $18, $19}; "',
        '"{ .reg .u32 a, b, r, c, d; mov.u32 b, global_smem; add.u32 b, b, $8; "\n'
        '        "mov.u32 r, %cluster_ctarank; xor.b32 r, r, 1; "\n'
        '        "mapa.shared::cluster.u32 a, b, r; "\n'
        f'        "shr.u32 c, $8, 16; shl.b32 c, c, 3; add.u32 c, c, {READY}; "\n'
        '        "mov.u32 d, global_smem; add.u32 d, d, c; mapa.shared::cluster.u32 c, d, r; "\n'
        '        "st.shared.v4.b32 [b], {$16, $17, $18, $19}; "\n'
        '        "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [a], "\n'
        '        "{$16, $17, $18, $19}, [c]; "',
    ),
    # The producer: one arrive on its own ready barrier, expecting the other
    # producer's half (every row of it is stored, invalid ones as zeros).
    (
        "        mbarrier.arrive(ready.index(buf), count=1)\n"
        "        if HEAD_PAIR:\n"
        "            _pair_arrive(PAIR_BARS + 8 * buf)\n",
        "        if HEAD_PAIR:\n"
        "            mbarrier.expect(ready.index(buf), BLOCK_T // 2 * HEAD_DIM * 2)\n"
        "        else:\n"
        "            mbarrier.arrive(ready.index(buf), count=1)\n",
    ),
    (
        "            mbarrier.init(ready.index(b), count=1 + WS_PRODUCER_WARPS)\n",
        "            mbarrier.init(ready.index(b), count=1)\n",
    ),
    # The refusals as today's modules raise them (Refused), so today's
    # harness records the 64-head cases a pair refuses as declined.
    (
        '_Family = collections.namedtuple("_Family", "launches why_not partials")\n',
        '_Family = collections.namedtuple("_Family", "launches why_not partials")\n\n\n'
        "class Refused(ValueError):\n"
        '    """A configuration cannot serve these inputs."""\n',
    ),
    (
        'raise ValueError(f"sparse_decode: {plan.refusal}',
        'raise Refused(f"sparse_decode: {plan.refusal}',
    ),
    (
        "        raise ValueError(\n"
        '            f"sparse_decode_full: {plan.refusal}',
        "        raise Refused(\n" '            f"sparse_decode_full: {plan.refusal}',
    ),
]


def main():
    out = os.path.join(HERE, "pair")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for f in FILES:
        shutil.copy(os.path.join(SRC, f), out)
    # Today's harness (it records refusals); the module is lab/pair's.
    shutil.copy(os.path.join(HERE, "..", "..", "kernels", "sm90", "harness.py"), out)
    path = os.path.join(out, "sparse_mla_mma.py")
    with open(path) as f:
        text = f.read()
    for old, new in EDITS:
        n = text.count(old)
        if n != 1:
            raise SystemExit(f"{n} copies of {old[:60]!r} in {path}")
        text = text.replace(old, new)
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
