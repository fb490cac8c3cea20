"""What Triton's `--regAllocOptLevel=2` does to the shipped sm_90 kernels'
spills (no GPU). From 3.7 on Triton passes that flag to ptxas on every
compile (a workaround for a ptxas 13 bug it does not name); under 3.9.0,
which compiles sm_90 with `ptxas-blackwell` (CUDA 13), the `ws_*` kernels
spill 4-96 B (calib/triton-3.9.0.txt). This compiles each kernel as
calib/versions.py does, then runs the very ptxas Triton ran on the very
PTX again without the flag (calib/calibrate.py's ptxas_usage, which runs
ptxas with Triton 3.6's flags), and prints both spill counts.

    .venv/triton-3.9.0/bin/python lab/ralloc/flag.py [CONFIG:KERNEL ...]
    # KERNEL: decode or decode/full; default: every sm_90 kernel that
    # spills under 3.9.0
"""

import os
import sys
import tempfile

os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ralloc-")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "calib"))

import triton  # noqa: E402
from calibrate import compile_logged, load_kernel, ptxas_tool, ptxas_usage  # noqa: E402
from sass import kernel_source  # noqa: E402

MODULE = os.path.join(HERE, "..", "..", "kernels", "sm90", "sparse_mla_mma.py")
DEFAULT = [
    "ws_h64_t64_k1_w8_s2:decode",
    "ws_h64_t64_k1_w8_s2:decode/full",
    "ws_h64_t64_k2_w8_s2:decode",
    "ws_h64_t64_k2_w8_s2:decode/full",
    "wsc_h64_t64_k2_w8_s2:decode",
    "wsc_h64_t64_k2_w8_s2:decode/full",
    "ws_h16_t64_k1_w4_s3:decode",
    "ws_h16_t64_k2_w4_s2:decode/full",
    "ws_h16_t64_k2_w4_s3:decode",
    "mma_h64_t16_k1_w8_s1:decode",
]


def main(jobs):
    module = load_kernel(MODULE)
    print(f"Triton {triton.__version__}, {os.path.basename(ptxas_tool(90))}")
    print(f"{'configuration':24} {'kernel':12} {'with flag':>10} {'without':>8}")
    for job in jobs:
        name, which = job.split(":")
        tile = module.CONFIGS[name]._asdict()
        src, options = kernel_source(module, tile, 90, which)
        ck, log = compile_logged(src, 90, options)
        ptx = ck.asm["ptx"]
        # Triton's own log, and ptxas run again on the same PTX with Triton
        # 3.6's flags, that is without --regAllocOptLevel=2 (ptxas_usage).
        flagged, plain = ptxas_usage(ptx, 90, log), ptxas_usage(ptx, 90)
        print(f"{name:24} {which:12} {flagged['spill']:>8} B {plain['spill']:>6} B")


if __name__ == "__main__":
    main(sys.argv[1:] or DEFAULT)
