"""The tensor-core instructions of every kernel a Triton cache holds.

Run on the device after the sm120 module's harness (DISABLE_MMA_V3=1) filled
its own cache: for each cubin there, the count of HMMA (mma.sync) and HGMMA
(wgmma) instructions in its SASS (cuobjdump, as Triton ships it), so the
H200's build of the sm_120 module shows it ran mma.sync code only.

    python3 gpu/sass_scan.py /tmp/mlagen-cache-sm120 > sass.json
"""

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import triton


def scan(tool, path):
    sass = subprocess.run([tool, "-sass", path], capture_output=True, text=True).stdout
    return {
        "kernel": os.path.basename(path)[: -len(".cubin")],
        "dir": os.path.basename(os.path.dirname(path)),
        "hmma": len(re.findall(r"\bHMMA\.", sass)),
        "hgmma": len(re.findall(r"\bHGMMA\.", sass)),
    }


def main():
    root = sys.argv[1]
    tool = os.path.join(
        os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump"
    )
    paths = [
        os.path.join(dirpath, f)
        for dirpath, _, files in os.walk(root)
        for f in sorted(files)
        if f.endswith(".cubin")
    ]
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        rows = list(pool.map(lambda p: scan(tool, p), paths))
    json.dump({"root": root, "rows": rows}, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
