"""Recreate the module copies device.sh compares (not checked in): base/ is
commit 5af65b3's sm_120 module (each half's scores in one accumulator: one
chain of 32 dependent MMAs); c2/ and c4/ are that module with chains.patch
(_pp_scores_halves, over _PP_SCORE_CHAINS accumulators a half) and that
constant at 2 and 4.

From the repository root:  python3 lab/chains/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

copies.base(HERE)
copies.patched(HERE, "c2", "chains.patch")
copies.edited(
    HERE,
    "c4",
    [("_PP_SCORE_CHAINS = gl.constexpr(2)", "_PP_SCORE_CHAINS = gl.constexpr(4)")],
    source="c2",
)
