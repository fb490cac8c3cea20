"""What Triton's `--regAllocOptLevel=2` does to the shipped sm_90 kernels'
spills (no GPU). From 3.7 on Triton passes that flag to ptxas on every
compile (a workaround for a ptxas 13 bug it does not name); under 3.9.0,
which compiles sm_90 with `ptxas-blackwell` (CUDA 13), the `ws_*` kernels
spill 4-96 B (calib/triton-3.9.0.txt). This compiles each kernel as
calib/versions.py does, then runs the very ptxas Triton ran on the very
PTX again without the flag, and prints both spill counts.

    .venv/triton-3.9.0/bin/python lab/ralloc/flag.py [CONFIG:KERNEL ...]
    # KERNEL: decode or decode/full; default: every sm_90 kernel that
    # spills under 3.9.0
"""

import os
import re
import subprocess
import sys
import tempfile

os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ralloc-")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "calib"))

import triton  # noqa: E402
from calibrate import compile_logged, load_kernel  # noqa: E402
from sass import kernel_source  # noqa: E402
from triton.backends.nvidia.compiler import get_ptxas  # noqa: E402

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


def spill(log):
    m = re.search(r"(\d+) bytes spill stores", log)
    return int(m.group(1)) if m else None


def without_flag(ptx):
    """ptxas -v on the PTX as Triton runs it, less --regAllocOptLevel=2."""
    arch = re.search(r"^\.target\s+(\S+)", ptx, re.M).group(1)
    ptxas = get_ptxas(90).path
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx")
        with open(p, "w") as f:
            f.write(ptx)
        cmd = [ptxas, "-lineinfo", "-v", f"--gpu-name={arch}", p, "-o", p + ".o"]
        return subprocess.run(cmd, capture_output=True, text=True).stderr


def main(jobs):
    module = load_kernel(MODULE)
    print(f"Triton {triton.__version__}, {os.path.basename(get_ptxas(90).path)}")
    print(f"{'configuration':24} {'kernel':12} {'with flag':>10} {'without':>8}")
    for job in jobs:
        name, which = job.split(":")
        tile = module.CONFIGS[name]._asdict()
        src, options = kernel_source(module, tile, 90, which)
        ck, log = compile_logged(src, 90, options)
        print(
            f"{name:24} {which:12} {spill(log):>8} B {spill(without_flag(ck.asm['ptx'])):>6} B"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or DEFAULT)
