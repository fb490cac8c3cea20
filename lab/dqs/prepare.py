"""lab/dqs's module copies (git-ignored) from 31cdb3d's sm_90 module:
`base` as it is, and `dqs`, whose warp-specialised producer (the narrow
16-head kernel's included) dequantises every tile with the cluster
kernels' PTX (`_dequant_store`: e4m3 bytes placed as bf16 bits by PRMT,
shifts and masks, one mul.bf16x2 by a power of two) instead of the fp32
route (cvt to f16, two to fp32, two multiplies and a pack for every two
values), so the producer converts nothing.

lab/f16 (sm_120) found conversion-heavy code slow; the narrow producer
converts every value three times (F2FP.E4M3, HADD2.F32, F2FP.BF16.PACK),
and its pace (about 1.9 µs a 64-token tile, lab/pace) moved with neither
its warps nor its tiles in flight, as a pipe's throughput would not.
lab/ppl's ppw took this PTX together with two tiles in flight (0.98-1.03x);
this copy takes it alone.

    python3 lab/dqs/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

copies.base(HERE, commit="31cdb3d", target="sm90")
copies.edited(
    HERE,
    "dqs",
    [
        (
            "        if CLUSTER_MERGE:\n" "            # Against the fp32 route below:",
            "        if True:\n" "            # Against the fp32 route below:",
        )
    ],
)
print("prepared base, dqs")
