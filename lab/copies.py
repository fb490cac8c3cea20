"""Module copies for the lab's experiments (not checked in): a commit's
module (sm_120's unless told) as a folder of its own, and copies of a
folder with a patch or with text edits made in its module. Each lab
folder's prepare.py calls these; its device script carries the folders to
the GPU.
"""

import os
import shutil
import subprocess

FILES = ("sparse_mla_mma.py", "harness.py", "simt_baseline.py")
MODULE = "sparse_mla_mma.py"


def base(here, commit="5af65b3", name="base", target="sm120"):
    """here/name: commit's kernels/<target> module, harness and baseline."""
    d = _fresh(here, name)
    for f in FILES:
        text = subprocess.run(
            ["git", "show", f"{commit}:kernels/{target}/{f}"],
            check=True,
            capture_output=True,
            text=True,
            cwd=here,
        ).stdout
        with open(os.path.join(d, f), "w") as out:
            out.write(text)
    return d


def patched(here, name, patch, source="base"):
    """here/name: here/source with here/patch applied to its module."""
    d = _copy(here, source, name)
    with open(os.path.join(here, patch)) as p:
        subprocess.run(
            ["patch", "-s", "--no-backup-if-mismatch", os.path.join(d, MODULE)],
            stdin=p,
            check=True,
        )
    return d


def edited(here, name, edits, source="base"):
    """here/name: here/source with each (old, new) of edits made in its
    module; old must occur there exactly once."""
    d = _copy(here, source, name)
    path = os.path.join(d, MODULE)
    with open(path) as f:
        text = f.read()
    for old, new in edits:
        count = text.count(old)
        if count != 1:
            raise SystemExit(f"{name}: {old[:60]!r} occurs {count} times in {source}")
        text = text.replace(old, new)
    with open(path, "w") as f:
        f.write(text)
    return d


def lab_module(folder):
    """lab/<folder>/prepare.py as a module of its own name, for the edits
    another folder's copies reuse."""
    import importlib.util

    path = os.path.join(
        os.path.dirname(os.path.abspath(__file__)), folder, "prepare.py"
    )
    spec = importlib.util.spec_from_file_location(f"{folder}_prepare", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def written(here, name, text, source="base"):
    """here/name: here/source with its module replaced by text."""
    d = _copy(here, source, name)
    with open(os.path.join(d, MODULE), "w") as f:
        f.write(text)
    print(d)
    return d


def _fresh(here, name):
    d = os.path.join(here, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def _copy(here, source, name):
    d = os.path.join(here, name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(os.path.join(here, source), d)
    return d
