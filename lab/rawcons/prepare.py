"""lab/rawcons' module copies (git-ignored) from the commit's sm_90 module:
`base` as it is, and `raw`, whose narrow 16-head kernel (_ws_narrow_kernel,
every ws_h16_* configuration) is raw.py.in's: a producer warp group copying
the tile's bytes as they are, one consumer warp group converting them into
its own wgmma operands, two programs an SM (launched at RC_MAXNREG
registers); and `rawp`, raw with its consumer pipelined (RC_PIPE).

    python3 lab/rawcons/prepare.py [COMMIT]

Raw reads Q by pointer, so it needs the strides of the contiguous Q copy
a plan makes for a ws kernel: the module binds them from 2f0b6fb on (run
1's copies patched it in here), so COMMIT must be that or later.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

COMMIT = sys.argv[1] if len(sys.argv) > 1 else "HEAD"

with open(os.path.join(HERE, "raw.py.in")) as f:
    RAW = f.read()

EDITS = [
    # cp.async for the producer.
    (
        "from triton.experimental.gluon.nvidia.hopper import TensorDescriptor\n",
        "from triton.experimental.gluon.nvidia.hopper import TensorDescriptor\n"
        "from triton.experimental.gluon.language.nvidia.ampere import async_copy\n",
    ),
    # The shipped narrow kernel keeps its code under another name; raw's
    # takes its name, so every ws_h16_* configuration launches it.
    (
        "@gluon.jit\ndef _ws_narrow_kernel(\n",
        RAW + "@gluon.jit\ndef _ws_narrow_kernel_shipped(\n",
    ),
    # Two programs an SM: 8 warps at RC_MAXNREG (raw.py.in's header).
    (
        "        dict(num_warps=num_warps, maxnreg=_WS_MAXNREG),\n",
        "        dict(num_warps=num_warps, maxnreg=_WS_MAXNREG if c.block_h >= 64 else RC_MAXNREG),\n",
    ),
    # No K ring of bf16 rows for the producer's hand-written stores.
    (
        "    shared = compiled.metadata.shared\n    error = _k_ring_error(",
        "    shared = compiled.metadata.shared\n"
        '    if constexprs["BLOCK_H"] < 64:\n        return None\n'
        "    error = _k_ring_error(",
    ),
]

copies.base(HERE, COMMIT, "base", target="sm90")
copies.edited(HERE, "raw", EDITS)
copies.edited(
    HERE,
    "rawp",
    [("RC_PIPE = gl.constexpr(False)", "RC_PIPE = gl.constexpr(True)")],
    source="raw",
)
