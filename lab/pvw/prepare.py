"""Recreate the module copies device.sh compares (not checked in): base/ is
commit 5af65b3's sm_120 module (P.V in the scores' layout, 4 warps down the
heads at BLOCK_H 64); o1/ and o2/ are that module with pv.patch (P.V's
accumulators in a layout of their own, over at most _PP_PV_WARPS_M warps
down the heads) and that constant at 1 or 2.

From the repository root:  python3 lab/pvw/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

copies.base(HERE)
copies.patched(HERE, "o1", "pv.patch")
copies.edited(
    HERE,
    "o2",
    [("_PP_PV_WARPS_M = gl.constexpr(1)", "_PP_PV_WARPS_M = gl.constexpr(2)")],
    source="o1",
)
