"""Make lab/two's module copies (git-ignored): `base`, the sm_90 module at
f33bd7e, and `p2`, the same with narrow 16-head configurations that one K
buffer and 4 producer warps make small enough for two programs an SM
(88,108 B of shared memory, a launch bound of 128 registers: 8 warps x 32
x 128 x 2 = 65,536).

    python3 lab/two/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

SPLITS = (1, 2, 4, 8, 16)

EDITS = [
    # 4 producer warps instead of 8, at 104 registers; the consumer warp
    # group gets 128 + (128 - 104) = 152 (Triton's leftover rule).
    (
        "WS_NARROW_PRODUCER_WARPS = gl.constexpr(8)",
        "WS_NARROW_PRODUCER_WARPS = gl.constexpr(4)",
    ),
    (
        "WS_NARROW_PRODUCER_REGS = gl.constexpr(96)",
        "WS_NARROW_PRODUCER_REGS = gl.constexpr(104)",
    ),
    # One K buffer, and the configurations that use it.
    (
        '    "ws_h16_t64_k1_w4_s2": Config("ws", 16, 64, 1, 4, 2, False),\n',
        '    "ws_h16_t64_k1_w4_s2": Config("ws", 16, 64, 1, 4, 2, False),\n'
        + "".join(
            f'    "ws_h16_t64_k{k}_w4_s1": Config("ws", 16, 64, {k}, 4, 1, False),\n'
            for k in SPLITS
        ),
    ),
    # Their launch bound: two programs an SM by registers.
    (
        "        dict(num_warps=num_warps, maxnreg=_WS_MAXNREG),\n"
        "        cluster=c.split_k if c.cluster_merge else 1,",
        "        dict(\n"
        "            num_warps=num_warps,\n"
        "            maxnreg=128 if c.block_h < 64 and c.num_stages == 1 else _WS_MAXNREG,\n"
        "        ),\n"
        "        cluster=c.split_k if c.cluster_merge else 1,",
    ),
]


def main():
    copies.base(HERE, commit="f33bd7e", name="base", target="sm90")
    print(copies.edited(HERE, "p2", EDITS))


if __name__ == "__main__":
    main()
