"""lab/dqp: the sm_90 module's warp-specialised producers with two cuts that
lab/stall's samples point at (git-ignored copies of this commit's module):

    shift  a token's page and slot by a shift and a mask, not by an integer
           division by the runtime page size (about 30 instructions and two
           conversions a token a tile, in the producer's chain); valid for
           page sizes that are powers of two (SGLang's 64 and 256)
    dqps   shift, and every producer dequantising with _dequant_store's PTX
           (bf16 bits and one mul.bf16x2 a pair), as the cluster kernels do,
           instead of the fp32 route (three instructions a value)

    python3 lab/dqp/prepare.py     # lab/dqp/{base,shift,dqps}
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

DIVIDE = """    page = idx // page_size
    slot = idx - page * page_size
"""
# log2 of a power of two as a sum of comparisons: scalar, once a program.
SHIFT = (
    "    shift = "
    + " + ".join(f"(page_size >= {1 << k}).to(gl.int32)" for k in range(1, 13))
    + "\n    page = idx >> shift\n    slot = idx & (page_size - 1)\n"
)
FP32_ROUTE = """        if CLUSTER_MERGE:
            # Against the fp32 route below"""
PTX_ROUTE = """        if True:
            # Against the fp32 route below"""


def main():
    copies.base(HERE, commit="HEAD", target="sm90")
    copies.edited(HERE, "shift", [(DIVIDE, SHIFT)])
    copies.edited(HERE, "dqps", [(FP32_ROUTE, PTX_ROUTE)], source="shift")


if __name__ == "__main__":
    main()
