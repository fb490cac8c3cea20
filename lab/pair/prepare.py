"""lab/pair/pair: the sm_90 module with head pairs (wsp_*), for device.sh.

Applies head-pair.patch (the template, gen and calib/sass.py change) to a
scratch worktree of BASE, the commit it was made against, emits the sm_90 module there, copies it
with its harness into lab/pair/pair and adds the four wsp_ configurations
to its CONFIGS (no selection names them; device.sh asks for them by name).
Needs Go and the repository's .venv (make kernels).

    python3 lab/pair/prepare.py
"""

import os
import shutil
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
FILES = ("sparse_mla_mma.py", "harness.py", "simt_baseline.py")
BASE = "7476faf"


def main():
    out = os.path.join(HERE, "pair")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "tree")
        subprocess.run(
            ["git", "worktree", "add", "--detach", tree, BASE], cwd=ROOT, check=True
        )
        try:
            subprocess.run(
                ["git", "apply", os.path.join(HERE, "head-pair.patch")],
                cwd=tree,
                check=True,
            )
            os.symlink(os.path.join(ROOT, ".venv"), os.path.join(tree, ".venv"))
            subprocess.run(["make", "kernels"], cwd=tree, check=True)
            for f in FILES:
                shutil.copy(os.path.join(tree, "kernels", "sm90", f), out)
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", tree], cwd=ROOT, check=True
            )
    path = os.path.join(out, "sparse_mla_mma.py")
    with open(path) as f:
        text = f.read()
    anchor = "CONFIGS = {\n"
    at = text.index(anchor) + len(anchor)
    pairs = "".join(
        f'    "wsp_h64_t64_k{k}_w8_s2": Config("ws", 64, 64, {k}, 8, 2, False, True),\n'
        for k in (1, 2, 4, 8)
    )
    with open(path, "w") as f:
        f.write(text[:at] + pairs + text[at:])


if __name__ == "__main__":
    main()
