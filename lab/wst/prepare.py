"""lab/wst: the sm_90 module with a 16-head warp-specialised kernel whose
consumer puts the heads on the wgmma's N side (wst_kernel.py), and more
producer warps, for device.sh.

Copies kernels/sm90 (module, harness, SIMT baseline) as of BASE into
lab/wst/<copy> for each copy in COPIES (producer warps, their registers,
the launch's register bound), inserts wst_kernel.py's kernels, runs them
for the configurations with 16-head blocks (_ws_program), and adds
wst_h{16,32}_t64_k{1,2,4,8}_w4_s{2,3} to CONFIGS (no selection names them;
device.sh asks for them by name).

    python3 lab/wst/prepare.py
"""

import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
FILES = ("sparse_mla_mma.py", "harness.py", "simt_baseline.py")
BASE = "e6c374b"
# copy: (producer warps, producer registers, launch register bound)
COPIES = {"p4": (4, 120, 168), "p8": (8, 96, 168)}


def replace(text, old, new, count=1):
    n = text.count(old)
    if n != count:
        raise SystemExit(f"{n} copies of {old[:60]!r}, expected {count}")
    return text.replace(old, new)


def make(name, warps, regs, maxnreg):
    out = os.path.join(HERE, name)
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
    # The producer's layouts from its partition's own warp count.
    text = replace(text, "[WS_PRODUCER_WARPS, 1]", "[gl.num_warps(), 1]", 2)
    text = replace(
        text,
        "WS_PRODUCER_REGS = gl.constexpr(120)\n",
        "WS_PRODUCER_REGS = gl.constexpr(120)\n"
        f"WST_PRODUCER_WARPS = gl.constexpr({warps})\n"
        f"WST_PRODUCER_REGS = gl.constexpr({regs})\n"
        f"_WST_MAXNREG = {maxnreg}\n",
    )
    text = replace(
        text,
        "    if c.cluster_merge:\n        return _ws_decode_kernel, c.num_warps\n",
        "    if c.block_h < 64:\n        return _wst_kernel, 4\n"
        "    if c.cluster_merge:\n        return _ws_decode_kernel, c.num_warps\n",
    )
    text = replace(
        text,
        "        dict(num_warps=num_warps, maxnreg=_WS_MAXNREG),\n",
        "        dict(num_warps=num_warps, maxnreg=_WST_MAXNREG if c.block_h < 64 else _WS_MAXNREG),\n",
    )
    with open(os.path.join(HERE, "wst_kernel.py")) as f:
        kernel = f.read()
    at = text.index("def _why_not_ws(")
    text = text[:at] + kernel + "\n\n" + text[at:]
    anchor = "CONFIGS = {\n"
    at = text.index(anchor) + len(anchor)
    configs = "".join(
        f'    "wst_h{h}_t64_k{k}_w4_s{s}": Config("ws", {h}, 64, {k}, 4, {s}, False),\n'
        for h in (16, 32)
        for k in (1, 2, 4, 8)
        for s in (2, 3)
    )
    with open(path, "w") as f:
        f.write(text[:at] + configs + text[at:])
    print(f"wrote {path}")


S_CHAIN = """        s = warpgroup_mma(
            k,
            q_smem.permute((1, 0)),
            gl.zeros([BLOCK_T, BLOCK_H], gl.float32, s_layout),
            use_acc=False,
            is_async=True,
        )
        s = warpgroup_mma_wait(0, deps=(s,))
"""
# s4: the score MMA as four independent chains over 128 columns each.
S_FOUR = """        zero = gl.zeros([BLOCK_T, BLOCK_H], gl.float32, s_layout)
        s0 = warpgroup_mma(k.slice(0, 128, dim=1), q_smem.slice(0, 128, dim=1).permute((1, 0)), zero, use_acc=False, is_async=True)
        s1 = warpgroup_mma(k.slice(128, 128, dim=1), q_smem.slice(128, 128, dim=1).permute((1, 0)), zero, use_acc=False, is_async=True)
        s2 = warpgroup_mma(k.slice(256, 128, dim=1), q_smem.slice(256, 128, dim=1).permute((1, 0)), zero, use_acc=False, is_async=True)
        s3 = warpgroup_mma(k.slice(384, 128, dim=1), q_smem.slice(384, 128, dim=1).permute((1, 0)), zero, use_acc=False, is_async=True)
        s0, s1, s2, s3 = warpgroup_mma_wait(0, deps=(s0, s1, s2, s3))
        s = (s0 + s1) + (s2 + s3)
"""
PV = """        acc = warpgroup_mma(k.permute((1, 0)), p_smem, acc, is_async=True)
        acc = warpgroup_mma_wait(0, deps=(acc,))
"""


def two_groups(text):
    """c2: wst2_kernel.py's kernel beside wst_kernel.py's, for the
    configurations wst2_h16_t64_k{1,2,4,8}_w8_s2 (two consumer warp groups
    on alternate tiles, 4 + 4 + 8 warps at a launch bound of 128: the second
    group at 176 registers, the producer at 80). Compiled only: it spills
    (NOTES.md)."""
    with open(os.path.join(HERE, "wst2_kernel.py")) as f:
        kernel = f.read()
    at = text.index("def _why_not_ws(")
    text = text[:at] + kernel + "\n\n" + text[at:]
    text = replace(
        text,
        "    if c.block_h < 64:\n        return _wst_kernel, 4\n",
        "    if c.block_h < 64:\n"
        "        return (_wst2_kernel if c.num_warps == 8 else _wst_kernel), 4\n",
    )
    text = replace(
        text,
        "maxnreg=_WST_MAXNREG if c.block_h < 64 else _WS_MAXNREG",
        "maxnreg=(128 if c.num_warps == 8 else _WST_MAXNREG) if c.block_h < 64 else _WS_MAXNREG",
    )
    text = replace(
        text,
        "_WST_MAXNREG = 168\n",
        "_WST_MAXNREG = 168\nWST2_GROUP_REGS = gl.constexpr(176)\n"
        "WST2_PRODUCER_REGS = gl.constexpr(80)\n",
    )
    anchor = "CONFIGS = {\n"
    at = text.index(anchor) + len(anchor)
    configs = "".join(
        f'    "wst2_h16_t64_k{k}_w8_s2": Config("ws", 16, 64, {k}, 8, 2, False),\n'
        for k in (1, 2, 4, 8)
    )
    return text[:at] + configs + text[at:]


# A probe (timing only, wrong results): np, the producer without its
# gather (what the consumer alone allows).
LOOP_START = "    n_tiles = gl.cdiv(gl.maximum(end - start, 0), BLOCK_T)\n    for i in range(n_tiles):\n"
LOOP_END = "        m_i = m_new\n\n    empty_row = l_i == 0.0\n"


def pipelined(text):
    """pl: the consumer loop of pl_loop.txt (tile i + 1's scores before tile
    i's P.V) in place of wst_kernel.py's."""
    a = text.index(LOOP_START, text.index("def _wst_consumer("))
    b = text.index(LOOP_END, a) + len(LOOP_END)
    with open(os.path.join(HERE, "pl_loop.txt")) as f:
        loop = f.read()
    text = text[:a] + loop + "    empty_row = l_i == 0.0\n" + text[b:]
    return replace(
        text,
        "    warpgroup_mma_wait,\n",
        "    warpgroup_mma_wait,\n    warpgroup_mma_init,\n",
    )


# ls: the row sums kept as per-thread partials of the tile's shape and
# reduced once after the loop, instead of across the 4 warps every tile.
def row_sums_once(text):
    a = text.index("def _wst_consumer(")
    b = text.index("def _wst_kernel(")
    body = text[a:b]
    for old, new in (
        (
            "    l_i = gl.zeros([BLOCK_H], gl.float32, heads_of)\n",
            "    l_part = gl.zeros([BLOCK_T, BLOCK_H], gl.float32, s_layout)\n",
        ),
        (
            "        l_i = l_i * alpha + gl.sum(p, 0)\n",
            "        l_part = l_part * alpha[None, :] + p\n",
        ),
        (
            "    empty_row = l_i == 0.0\n",
            "    l_i = gl.sum(l_part, 0)\n    empty_row = l_i == 0.0\n",
        ),
    ):
        body = replace(body, old, new)
    return text[:a] + body + text[b:]


# nc: the consumer takes each tile's buffer and hands it back without its
# MMAs or softmax (results wrong by design): the producer's own pace, with
# ls's loop otherwise.
NO_CONSUMER = (
    """        k = k_ring.index(buf)
        s = warpgroup_mma(
            k,
            q_smem.permute((1, 0)),
            gl.zeros([BLOCK_T, BLOCK_H], gl.float32, s_layout),
            use_acc=False,
            is_async=True,
        )
        s = warpgroup_mma_wait(0, deps=(s,))
        s = gl.where(valid[:, None], s * qk_scale, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(s, 0))
        m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = gl.exp2(m_i - m_safe)
        p = gl.exp2(s - m_safe[None, :])
        l_part = l_part * alpha[None, :] + p
        acc = acc * alpha[None, :]
        p_smem.store(p.to(gl.bfloat16))
        fence_async_shared()
        gl.thread_barrier()
        acc = warpgroup_mma(k.permute((1, 0)), p_smem, acc, is_async=True)
        acc = warpgroup_mma_wait(0, deps=(acc,))
        mbarrier.arrive(empty.index(buf), count=1)
        m_i = m_new
""",
    """        # One 2 KB read of the buffer keeps the K ring allocated.
        seen = k_ring.index(buf).slice(0, BLOCK_H, dim=1).load(s_layout)
        l_part = l_part + gl.where(valid[:, None], 1.0, 0.0) + seen.to(gl.float32) * 0.0
        mbarrier.arrive(empty.index(buf), count=1)
""",
)

PROBES = {
    "pl": [pipelined],
    "s4": [(S_CHAIN, S_FOUR)],
    "c2": [two_groups],
    "ls": [row_sums_once],
    "nc": [row_sums_once, NO_CONSUMER],
    "np": [
        (
            "        valid = idx >= 0\n        idx = gl.where(valid, idx, 0)\n",
            "        valid = idx < -1000\n        idx = gl.where(valid, idx, 0)\n",
        )
    ],
}


def main():
    for name, (warps, regs, maxnreg) in COPIES.items():
        make(name, warps, regs, maxnreg)
    for name, edits in PROBES.items():
        out = os.path.join(HERE, name)
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(os.path.join(HERE, "p8"), out)
        path = os.path.join(out, "sparse_mla_mma.py")
        with open(path) as f:
            text = f.read()
        for edit in edits:
            text = edit(text) if callable(edit) else replace(text, *edit)
        with open(path, "w") as f:
            f.write(text)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
