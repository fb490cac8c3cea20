"""lab/p8h: the sm_90 module's 64-head role split (_ws_split_kernel) with 8
producer warps instead of 4, at R registers each (rNN), launched at 128
registers a thread (16 warps) instead of 168 (12 warps). Copies of this
commit's module, not checked in:

    python3 lab/p8h/prepare.py     # lab/p8h/{base,r64,r72,r80}
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

SPLIT_WORKERS = (
    "        [4, WS_PRODUCER_WARPS],\n        [WS_VALUE_REGS, WS_PRODUCER_REGS],\n"
)
LAUNCH = "dict(num_warps=num_warps, maxnreg=_WS_MAXNREG),"


def main():
    copies.base(HERE, commit="HEAD", target="sm90")
    for regs in (64, 72, 80):
        copies.edited(
            HERE,
            f"r{regs}",
            [
                (SPLIT_WORKERS, f"        [4, 8],\n        [WS_VALUE_REGS, {regs}],\n"),
                (
                    LAUNCH,
                    "dict(num_warps=num_warps, "
                    "maxnreg=128 if kernel is _ws_split_kernel else _WS_MAXNREG),",
                ),
            ],
        )


if __name__ == "__main__":
    main()
