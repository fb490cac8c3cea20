"""Check the warp-specialised kernels' TMA descriptor over Q on the CPU (no GPU needed).

The ws family's kernel reads Q through _q_descriptor, which views Q as
[B * H, 512] rows when it can and copies it when it cannot. A descriptor that
pointed at the wrong rows would only show on a GPU, so this checks the host
side wherever torch is installed: for Q laid out as the harness's correctness
cases lay it out (and misaligned by one element), the descriptor's rows must
be Q's heads in order, read in place unless TMA forbids it, for the head
block of every warp-specialised configuration of the module.

    python3 calib/qdesc.py kernels/sm90
"""

import importlib.util
import os
import sys

import torch


def load_harness(d):
    # The harness loads the kernel modules itself (load_module), and so does
    # this check once the harness is in.
    spec = importlib.util.spec_from_file_location(
        "harness", os.path.join(d, "harness.py")
    )
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    return harness


def misaligned(q):
    # The same values one bf16 element past a 16-byte boundary.
    flat = torch.zeros(q.numel() + 1, dtype=q.dtype)
    out = flat[1:].view(q.shape)
    out.copy_(q)
    return out


def check(desc, x, q, block_h, in_place):
    """What is wrong with desc as a descriptor over x's rows ("" when nothing)."""
    batch, _, heads, _ = q.shape
    base = desc.base
    if list(desc.shape) != [batch * heads, 512] or desc.block_shape != [block_h, 64]:
        return f"shape {list(desc.shape)}, box {desc.block_shape}"
    if base.data_ptr() % 16 or desc.strides[0] % 8:
        return f"base or row stride {desc.strides[0]} not 16-byte aligned"
    if (base.data_ptr() == x.data_ptr()) != in_place:
        return (
            "copied Q it could read in place"
            if in_place
            else "read Q in place where TMA cannot"
        )
    rows = torch.as_strided(base, desc.shape, desc.strides, base.storage_offset())
    if not torch.equal(rows.reshape(batch, heads, 512), q[:, 0]):
        return "rows are not Q's heads in order"
    return ""


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "kernels/sm90"
    harness = load_harness(d)
    bundle = harness.load_module(os.path.join(d, harness.BUNDLE))
    block_hs = sorted({c.block_h for c in bundle.CONFIGS.values() if c.family == "ws"})
    if not block_hs:
        print(f"{d}: no warp-specialised configuration, nothing to check")
        return 0
    gen = torch.Generator().manual_seed(0)
    checked = failed = 0
    for batch, heads in ((1, 64), (3, 20), (2, 128)):
        q = torch.randn(batch, 1, heads, 512, generator=gen).to(torch.bfloat16)
        layouts = {
            "contiguous": (harness.lay_out_q(q, "contiguous"), True),
            "padded": (harness.lay_out_q(q, "padded"), True),
            "head_major": (harness.lay_out_q(q, "head_major"), batch == 1),
            "misaligned": (misaligned(q), False),
        }
        for name, (x, in_place) in layouts.items():
            for block_h in block_hs:
                try:
                    problem = check(
                        bundle._q_descriptor(x, block_h), x, q, block_h, in_place
                    )
                except Exception as e:  # TMA's own asserts, an out-of-bounds view
                    problem = f"{type(e).__name__}: {e}"
                checked += 1
                if problem:
                    failed += 1
                    print(
                        f"FAIL BLOCK_H={block_h} B={batch} H={heads} {name}: {problem}"
                    )
    print(
        f"{d}: _q_descriptor for BLOCK_H {block_hs}, {checked - failed}/{checked} Q layouts read correctly"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
