"""Make lab/creg's module copies (git-ignored) from the modules at 5b63512:
`base90` and `base120` as they are, and `r64_*`, `r128_*`, whose bf16
split-K combine (_combine_bf16_kernel, every warp-specialised and
pipelined split) launches with `maxnreg` 64 or 128.

Why (lab/chain): the combine of a B 16 call takes about 1.06 µs from its
griddepcontrol.wait to its last store. Its 2 warps are 64 threads, and
ptxas builds it at 32 registers (full occupancy for 64-thread blocks), so
an 8-split merge cannot hold its 8 partial loads at once: in the SASS
they go out two at a time, each pair waited for before the next, about
four L2 round trips after the lse's. At maxnreg 64 or 128 ptxas takes
56-64 registers and every partial's load goes out before the first
shuffle of the lse's maximum.

    python3 lab/creg/prepare.py     # lab/creg/{base,r64_,r128_}{90,120}
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

COMMIT = "5b63512"
OPTIONS = "    options = dict(num_warps=num_warps, launch_pdl=pdl)\n"


def with_maxnreg(n):
    return OPTIONS + (
        "    if fn is _combine_bf16_kernel:\n" f'        options["maxnreg"] = {n}\n'
    )


def main():
    for target in ("90", "120"):
        base = f"base{target}"
        copies.base(HERE, commit=COMMIT, target=f"sm{target}", name=base)
        for n in (64, 128):
            copies.edited(
                HERE, f"r{n}_{target}", [(OPTIONS, with_maxnreg(n))], source=base
            )


if __name__ == "__main__":
    main()
