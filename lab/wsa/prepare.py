"""lab/wsa/wsa: the sm_90 module with FlashMLA's split of the consumer warps
(wsa_*), for device.sh.

Copies kernels/sm90 (module, harness, SIMT baseline) as of BASE, the
commit the prototype was measured against, into lab/wsa/wsa,
inserts wsa_kernel.py's kernel before _ws_launches, launches it for the
configurations with 4 warps (the score group; the value group and the
producer are its workers), and adds wsa_h64_t64_k{1,2,4,8}_w4_s2 to
CONFIGS (no selection names them; device.sh asks for them by name).

    python3 lab/wsa/prepare.py
"""

import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
FILES = ("sparse_mla_mma.py", "harness.py", "simt_baseline.py")
BASE = "6490de7"

EDITS = [
    (
        "    decode = _Kernel(\n        _ws_decode_kernel,\n",
        "    decode = _Kernel(\n"
        "        _wsa_decode_kernel if c.num_warps == 4 else _ws_decode_kernel,\n",
    ),
]


def main():
    out = os.path.join(HERE, "wsa")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for f in FILES:
        text = subprocess.run(
            ["git", "show", f"{BASE}:kernels/sm90/{f}"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        with open(os.path.join(out, f), "w") as g:
            g.write(text)
    path = os.path.join(out, "sparse_mla_mma.py")
    with open(path) as f:
        text = f.read()
    for old, new in EDITS:
        n = text.count(old)
        if n != 1:
            raise SystemExit(f"{n} copies of {old[:60]!r} in {path}")
        text = text.replace(old, new)
    with open(os.path.join(HERE, "wsa_kernel.py")) as f:
        kernel = f.read()
    anchor = "def _ws_launches("
    at = text.index(anchor)
    text = text[:at] + kernel + "\n\n" + text[at:]
    anchor = "CONFIGS = {\n"
    at = text.index(anchor) + len(anchor)
    configs = "".join(
        f'    "wsa_h64_t64_k{k}_w4_s2": Config("ws", 64, 64, {k}, 4, 2, False),\n'
        for k in (1, 2, 4, 8)
    )
    with open(path, "w") as f:
        f.write(text[:at] + configs + text[at:])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
