"""Make lab/cheads' module copies (git-ignored): `base90`, `base120`, the
modules at 1604722 (the bf16 combine at maxnreg 128, one program a head
and batch row); `hp90`, `hp120`, the working tree's modules, whose bf16
combine merges 4 heads a program (2 warps a head, every thread loading
its head's lse itself); and `hps120`, hp120 whose 64-head pipelined tiles
also signal their combine when they split in two.

    python3 lab/cheads/prepare.py     # lab/cheads/{base90,hp90,base120,hp120,hps120}
"""

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

COMMIT = "1604722"
GUARD = "    if PDL and SPLIT_K > 1 and BLOCK_H == 16:\n"


def tree(target, name):
    """here/name: the working tree's kernels/<target> module and harness."""
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for f in copies.FILES:
        shutil.copy(os.path.join(ROOT, "kernels", target, f), d)


def main():
    for target in ("90", "120"):
        copies.base(HERE, commit=COMMIT, target=f"sm{target}", name=f"base{target}")
        tree(f"sm{target}", f"hp{target}")
    copies.edited(
        HERE,
        "hps120",
        [(GUARD, "    if PDL and SPLIT_K > 1 and (BLOCK_H == 16 or SPLIT_K == 2):\n")],
        source="hp120",
    )


if __name__ == "__main__":
    main()
