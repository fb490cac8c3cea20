"""Slim an installed venv down to what the checks load, then prove it works.

Usage (with the venv's own python):
    python .ci/slim.py triton   Triton's profiler libraries (CUPTI, Proton):
                                the checks never profile (its AMD backend
                                stays: from 3.9 on, importing Triton loads
                                every backend its entry points name)
    python .ci/slim.py torch    the CUDA libraries under nvidia/ that none of
                                torch's own shared objects needs, directly or
                                through another (cuDNN's engines, which it
                                opens only to run on a GPU, the toolkit's
                                extras), and headers, static libraries and
                                device bitcode: the checks run torch on the
                                CPU only

Why: PyPI's torch and the four Triton releases take 7.3 GB installed, and
CI shares a disk whose free space has fallen below that (two runs failed
with it full). This removes 1.6 GB of it.

After removing, a fresh interpreter of the same venv proves what stays is
enough: Triton compiles a small tl.dot kernel for sm_90 and sm_120 (its
ptxas and ptxas-blackwell), torch imports, computes on the CPU and asks for
a GPU. A removal that breaks either fails here, not later in a check that
the compile memo (calib/compiled/) would let pass without compiling.
"""

import mmap
import os
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile

SITE = sysconfig.get_paths()["purelib"]

# Relative to site-packages: what no check loads from Triton.
TRITON_UNUSED = (
    "triton/backends/nvidia/lib/cupti",
    "triton/backends/nvidia/lib/cupti-blackwell",
    "triton/_C/libproton.so",
)

# Libraries torch opens by name rather than through the loader (its
# _preload_cuda_deps), which no DT_NEEDED entry names.
TORCH_PRELOADS = ("libnvrtc-builtins",)


def size_of(path):
    if os.path.isfile(path) or os.path.islink(path):
        return os.lstat(path).st_size
    return sum(
        os.lstat(os.path.join(d, f)).st_size
        for d, _, files in os.walk(path)
        for f in files
    )


def remove(path):
    """Remove a file or a tree; the bytes it took."""
    n = size_of(path)
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.remove(path)
    return n


def needed(path):
    """The DT_NEEDED names of a 64-bit little-endian ELF shared object (what
    the loader opens with it), or () for any other file."""
    with open(path, "rb") as f:
        if f.read(6) != b"\x7fELF\x02\x01":
            return ()
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            shoff = struct.unpack_from("<Q", m, 0x28)[0]
            shentsize, shnum = struct.unpack_from("<HH", m, 0x3A)
            sections = [
                struct.unpack_from("<IIQQQQII", m, shoff + i * shentsize)
                for i in range(shnum)
            ]
            names = []
            for _, sh_type, _, _, offset, size, link, _ in sections:
                if sh_type != 6:  # SHT_DYNAMIC
                    continue
                strtab = sections[link][4]
                for pos in range(offset, offset + size, 16):
                    tag, val = struct.unpack_from("<qQ", m, pos)
                    if tag == 0:  # DT_NULL
                        break
                    if tag == 1:  # DT_NEEDED
                        end = m.find(b"\0", strtab + val)
                        names.append(m[strtab + val : end].decode())
            return tuple(names)


def shared_objects(top):
    for d, _, files in os.walk(top):
        for f in files:
            if ".so" in f and not os.path.islink(os.path.join(d, f)):
                yield os.path.join(d, f)


def slim_torch():
    """Remove what nothing torch ships loads from nvidia/; the bytes freed
    and the files removed."""
    nvidia = os.path.join(SITE, "nvidia")
    by_name = {}
    for p in shared_objects(SITE):
        by_name.setdefault(os.path.basename(p), []).append(p)
    keep, todo = set(), list(shared_objects(os.path.join(SITE, "torch")))
    todo += [p for n, ps in by_name.items() if n.startswith(TORCH_PRELOADS) for p in ps]
    while todo:
        p = todo.pop()
        if p not in keep:
            keep.add(p)
            todo += [q for n in needed(p) for q in by_name.get(n, ())]
    freed, removed = 0, []
    for d, dirs, files in os.walk(nvidia):
        if os.path.basename(d) == "include":
            freed += remove(d)
            removed.append(d)
            dirs[:] = []
            continue
        for f in files:
            p = os.path.join(d, f)
            if (".so" in f and p not in keep) or f.endswith((".a", ".bc")):
                freed += remove(p)
                removed.append(p)
    return freed, removed


def slim_triton():
    freed, removed = 0, []
    for rel in TRITON_UNUSED:
        p = os.path.join(SITE, rel)
        if os.path.lexists(p):
            freed += remove(p)
            removed.append(p)
    return freed, removed


SMOKE_TRITON = """
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

@triton.jit
def mma(a, b, c, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(a + i[:, None] * N + i[None, :])
    y = tl.load(b + i[:, None] * N + i[None, :])
    tl.store(c + i[:, None] * N + i[None, :], tl.dot(x, y))

sig = {"a": "*bf16", "b": "*bf16", "c": "*fp32"}
for cap in (90, 120):
    src = ASTSource(fn=mma, signature={**sig, "N": "constexpr"}, constexprs={"N": 16})
    ck = triton.compile(src, target=GPUTarget("cuda", cap, 32))
    assert ck.asm["cubin"], cap
print(f"Triton {triton.__version__} compiles for sm_90 and sm_120")
"""

SMOKE_TORCH = """
import torch
x = torch.arange(4.0)
assert float((x * x).sum()) == 14.0
print(f"torch {torch.__version__} imports and computes (GPU: {torch.cuda.is_available()})")
"""


def smoke(what):
    """Run the smoke test in a fresh interpreter of this venv, from a file
    (Triton reads a kernel's source from the file that defines it)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"smoke_{what}.py")
        with open(path, "w") as f:
            f.write(SMOKE_TRITON if what == "triton" else SMOKE_TORCH)
        # A compile from Triton's cache would prove nothing.
        env = dict(os.environ, TRITON_CACHE_DIR=tmp, TRITON_ALWAYS_COMPILE="1")
        return subprocess.run(
            [sys.executable, path], capture_output=True, text=True, env=env
        )


def main(argv):
    if len(argv) != 1 or argv[0] not in ("triton", "torch"):
        print(__doc__, file=sys.stderr)
        return 2
    what = argv[0]
    freed, removed = slim_torch() if what == "torch" else slim_triton()
    after = smoke(what)
    if after.returncode != 0:
        print(
            f"slim {what}: the venv fails its smoke test with these removed"
            " (remove the venv and run make again to reinstall it):",
            file=sys.stderr,
        )
        print(
            "\n".join("  " + os.path.relpath(p, SITE) for p in removed), file=sys.stderr
        )
        print(after.stderr, file=sys.stderr)
        return 1
    print(
        f"slim {what}: {freed / 2**20:.0f} MB removed ({len(removed)} paths); {after.stdout.strip()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
