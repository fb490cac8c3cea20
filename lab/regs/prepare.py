"""lab/regs's module copies (git-ignored): base/, the sm_120 module of
commit 8c306f9, and r255/, the same with the pipelined family launched at
maxnreg 255 (as the bytes targets' is since that commit), which changes
only the 16-head tiles' code: without a bound ptxas compiles them at
exactly 128 registers.

    python3 lab/regs/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

copies.base(HERE, commit="8c306f9")
copies.edited(
    HERE,
    "r255",
    [
        (
            "    options = dict(num_warps=c.num_warps)\n"
            "    decode = _Kernel(_pp_decode_kernel",
            "    options = dict(num_warps=c.num_warps, maxnreg=255)\n"
            "    decode = _Kernel(_pp_decode_kernel",
        )
    ],
)
print("prepared base, r255")
