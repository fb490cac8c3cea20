"""lab/wsap/wsap: lab/wsa's consumer split on lab/pairasync's head pairs
(wsap_*: two 64-head programs of a cluster, each gathering half of every
tile into both K rings by st.async), beside lab/wsa's unpaired kernel
(wsa_*), for device.sh.

Starts from lab/pairasync/pair (run lab/pair/prepare.py and
lab/pairasync/prepare.py first), inserts lab/wsa/wsa_kernel.py with the
pair's additions (the consumers' arrival on the cluster barrier at start,
the freed barriers, the producer's pair arguments), and moves the pair's
barrier byte (PAIR_BARS, the st.async PTX's ready address, the launcher's
check) to where Triton places this kernel's barriers: BARS below, read
from its PTX (prepare.py --find prints it).

    python3 lab/wsap/prepare.py [--find]
"""

import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "pairasync", "pair")
FILES = ("sparse_mla_mma.py", "harness.py", "simt_baseline.py")
OLD_BARS = (2 * 64 + 64) * 512 * 2 + 4096  # lab/pair's PAIR_BARS
# The bytes of this kernel's ready and freed barriers of buffer 0 (buffer
# b's are 8 b further), read from its PTX by prepare.py --find.
READY = 205792
FREED = 205824


def edit(text, old, new, count=1):
    n = text.count(old)
    if n != count:
        raise SystemExit(f"{n} copies (want {count}) of {old[:70]!r}")
    return text.replace(old, new)


def kernel_text():
    with open(os.path.join(HERE, "..", "wsa", "wsa_kernel.py")) as f:
        k = f.read()
    # Both consumer groups arrive on the cluster barrier the producers wait
    # at, so neither producer reaches the other's barriers before they exist.
    for fn in ("_wsa_scores", "_wsa_values"):
        at = k.index(f"def {fn}(")
        sig_end = k.index("    HAS_SINK: gl.constexpr,\n):\n", at)
        k = (
            k[:sig_end]
            + "    HAS_SINK: gl.constexpr,\n    HEAD_PAIR: gl.constexpr,\n):\n"
            + k[sig_end + len("    HAS_SINK: gl.constexpr,\n):\n") :]
        )
        doc_end = k.index('"""\n', k.index('"""', k.index(f"def {fn}(")) + 3) + 4
        k = (
            k[:doc_end]
            + "    if HEAD_PAIR:\n        _cluster_barrier(True, False)\n"
            + k[doc_end:]
        )
    k = edit(
        k,
        '    HAS_SINK: gl.constexpr,\n):\n    """_ws_decode_kernel\'s arguments',
        "    HAS_SINK: gl.constexpr,\n    HEAD_PAIR: gl.constexpr,\n):\n"
        '    """_ws_decode_kernel\'s arguments',
    )
    k = edit(
        k,
        "    pid_h = gl.program_id(0)\n",
        "    if HEAD_PAIR:\n        _trap_unless_cluster_of(2)\n    pid_h = gl.program_id(0)\n",
    )
    # freed: the other producer's word that its consumers are done with a
    # buffer (lab/pair's relay).
    k = edit(
        k,
        "    q_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())\n",
        "    q_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())\n"
        "    freed = gl.allocate_shared_memory(\n"
        "        gl.int64, [NUM_BUFS, 1], mbarrier.MBarrierLayout()\n"
        "    )\n"
        "    PAIR_BARS: gl.constexpr = _WSAP_READY\n",
    )
    k = edit(
        k,
        "        mbarrier.init(empty.index(b), count=2)\n",
        "        mbarrier.init(empty.index(b), count=2)\n"
        "        mbarrier.init(freed.index(b), count=WS_PRODUCER_WARPS)\n",
    )
    k = edit(
        k,
        "    fence_async_shared()\n    q_row",
        "    fence_async_shared()\n    if HEAD_PAIR:\n        _fence_barrier_init()\n    q_row",
    )
    # The consumers' and the producer's arguments.
    k = edit(
        k,
        "                    HAS_SINK,\n                ),\n",
        "                    HAS_SINK,\n                    HEAD_PAIR,\n                ),\n",
        count=2,
    )
    k = edit(
        k,
        "                    k_ring,\n                    ready,\n                    empty,\n                    KV,\n",
        "                    k_ring,\n                    ready,\n                    empty,\n                    freed,\n                    KV,\n",
    )
    k = edit(
        k,
        "                    HAS_TOPK_LENGTH1,\n                ),\n            ),\n        ],\n",
        "                    HAS_TOPK_LENGTH1,\n                    HEAD_PAIR,\n                    PAIR_BARS,\n"
        "                ),\n            ),\n        ],\n",
    )
    return (
        f"_WSAP_READY = gl.constexpr({READY})\n_WSAP_FREED = gl.constexpr({FREED})\n\n"
        + k
    )


def main():
    out = os.path.join(HERE, "wsap")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for f in FILES:
        shutil.copy(os.path.join(SRC, f), out)
    path = os.path.join(out, "sparse_mla_mma.py")
    with open(path) as f:
        text = f.read()
    text = edit(
        text,
        "    decode = _Kernel(\n        _ws_decode_kernel,\n",
        "    decode = _Kernel(\n"
        "        _wsa_decode_kernel if c.num_warps == 4 else _ws_decode_kernel,\n",
    )
    # The pair's barrier byte: the st.async PTX (dequantise and rope) and
    # the launcher's check. lab/pair's wsp_ kernels no longer match it.
    text = edit(text, f"add.u32 rb, rb, {OLD_BARS}; ", f"add.u32 rb, rb, {READY}; ")
    text = edit(text, f"add.u32 c, c, {OLD_BARS}; ", f"add.u32 c, c, {READY}; ")
    text = edit(
        text,
        "_pair_arrive(PAIR_BARS + 16 * NUM_BUFS + 8 * buf)",
        "_pair_arrive(_WSAP_FREED + 8 * buf)",
    )
    # The launcher's check: ready and freed of each buffer where the
    # producers address them (inits in the kernel's order: ready, empty,
    # freed of buffer 0, then of buffer 1).
    text = edit(
        text,
        "        want += [at + 8 * b, at + 8 * (num_bufs + b), at + 8 * (2 * num_bufs + b)]\n",
        f"        want += [{READY} + 8 * b, None, {FREED} + 8 * b]\n",
    )
    text = edit(
        text,
        "    if offsets == want:\n",
        "    if all(w is None or o == w for o, w in zip(offsets, want)):\n",
    )
    # The whole call places the barriers elsewhere (and differently for each
    # split): the pair serves the per-cache entry only.
    text = edit(
        text,
        "    plan = _full_plan(\n        config,\n",
        '    if config is not None and config.startswith("wsap_"):\n'
        '        raise Refused("lab/wsap: the head pairs serve the per-cache entry only")\n'
        "    plan = _full_plan(\n        config,\n",
    )
    anchor = "def _ws_launches("
    at = text.index(anchor)
    text = text[:at] + kernel_text() + "\n\n" + text[at:]
    anchor = "CONFIGS = {\n"
    at = text.index(anchor) + len(anchor)
    configs = "".join(
        f'    "{name}_h64_t64_k{k}_w4_s2": Config("ws", 64, 64, {k}, 4, 2, False, {pair}),\n'
        for name, pair in (("wsap", True), ("wsa", False))
        for k in (1, 2, 4, 8)
    )
    text = text[:at] + configs + text[at:]
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}")
    if "--find" in sys.argv:
        find(path)


def find(path):
    """Print the bytes of the compiled wsap kernel's mbarrier.init
    instructions (ready, empty, freed of each buffer come first)."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "calib"))
    import calibrate
    import sass
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    m = calibrate.load_kernel(path)
    tile = m.CONFIGS["wsap_h64_t64_k1_w4_s2"]._asdict()
    fn, sig, cx, opts, _ = sass.decode_job(m, tile, 90)
    fn = m._wsa_decode_kernel
    cx["HEAD_PAIR"] = True
    sig["HEAD_PAIR"] = "constexpr"
    c = triton.compile(
        GluonASTSource(fn, sig, cx, sass.specialised(fn, sig)),
        target=GPUTarget("cuda", 90, 32),
        options=opts,
    )
    ptx = c.asm["ptx"]
    for reg in re.findall(r"mbarrier\.init\.shared::cta\.b64 \[(%r\d+)\]", ptx):
        add = re.search(rf"add\.s32\s+{re.escape(reg)}, %r\d+, (\d+);", ptx)
        print(reg, add.group(1) if add else None)
    print("check:", m._pair_bars_error(ptx, 64, 64, 2), "smem", c.metadata.shared)


if __name__ == "__main__":
    main()
