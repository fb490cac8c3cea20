"""Make lab/nclus's module copies (git-ignored) from the shipped sm_90
module (a42b63e): `base` as it is, and `nclus`, whose narrow 16-head
kernel can also run its SPLIT_K programs of a batch row as one
thread-block cluster that merges the splits itself (`_cluster_merge`,
through global memory, as the 64-head `wsc_*` configurations of more than
two splits do): configurations `wsc_h16_t64_k{2,4,8}_w4_s{2,3}`, with no
combine kernel.

lab/chain: at B 16 the combine's wait returns 0.7 µs after the decode's
last store, the merge takes 0.9 µs, and the next kernel starts 1.2 µs
after it. In a cluster each program stores its partial, arrives on the
cluster barrier and merges BLOCK_H / SPLIT_K heads over every split's
partial as soon as its siblings have stored theirs.

    python3 lab/nclus/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

COMMIT = "a42b63e"

NEW_ARGS = (
    "FinalOut",
    "FinalLse",
    "stride_fout_batch",
    "stride_fout_head",
    "stride_flse_batch",
)


def edits(text):
    # The consumer's argument tuple in _ws_narrow_kernel's warp_specialize.
    at = text.index("                _ws_narrow_consumer,\n                (\n")
    tuple_old = text[
        at : text.index("                ),\n", at) + len("                ),\n")
    ]
    tuple_new = tuple_old.replace(
        "                    HAS_SINK,\n                ),\n",
        "                    HAS_SINK,\n"
        + "".join(f"                    {a},\n" for a in NEW_ARGS)
        + "                    CLUSTER_MERGE,\n"
        "                ),\n",
    )
    configs = "".join(
        f'    "wsc_h16_t64_k{k}_w4_s{s}": Config("ws", 16, 64, {k}, 4, {s}, True),\n'
        for k in (2, 4, 8)
        for s in (2, 3)
    )
    return [
        (
            '    "ws_h16_t64_k8_w4_s2": Config("ws", 16, 64, 8, 4, 2, False),\n',
            '    "ws_h16_t64_k8_w4_s2": Config("ws", 16, 64, 8, 4, 2, False),\n'
            + configs,
        ),
        (
            '    gl.static_assert(not CLUSTER_MERGE, "narrow head blocks merge in the combine")\n'
            "    pid_h = gl.program_id(0)\n"
            "    pid_s = gl.program_id(1)\n",
            "    # lab/nclus: the splits of a head block may run as one cluster along x.\n"
            "    if CLUSTER_MERGE:\n"
            "        _trap_unless_cluster_of(SPLIT_K)\n"
            "        pid_h = gl.program_id(0) // SPLIT_K\n"
            "        pid_s = gl.program_id(0) % SPLIT_K\n"
            "    else:\n"
            "        pid_h = gl.program_id(0)\n"
            "        pid_s = gl.program_id(1)\n",
        ),
        (
            "    HAS_TOPK_LENGTH1: gl.constexpr,\n"
            "    HAS_SINK: gl.constexpr,\n"
            "):\n"
            '    """Scores and P.V of one warp group with the heads on the wgmma\'s N side:\n',
            "    HAS_TOPK_LENGTH1: gl.constexpr,\n"
            "    HAS_SINK: gl.constexpr,\n"
            + "".join(f"    {a},\n" for a in NEW_ARGS)
            + "    CLUSTER_MERGE: gl.constexpr,\n"
            "):\n"
            '    """Scores and P.V of one warp group with the heads on the wgmma\'s N side:\n',
        ),
        (
            "        lse_ptr = Lse + pid_b * stride_lse_batch + pid_s * stride_lse_split + heads\n"
            "        gl.store(lse_ptr, lse2, mask=head_ok)\n"
            "\n"
            "\n"
            "@gluon.jit\n"
            "def _ws_narrow_kernel(\n",
            "        lse_ptr = Lse + pid_b * stride_lse_batch + pid_s * stride_lse_split + heads\n"
            "        gl.store(lse_ptr, lse2, mask=head_ok)\n"
            "    if CLUSTER_MERGE:\n"
            "        # lab/nclus: the cluster's programs merge their partials.\n"
            "        _cluster_merge(Out, Lse, FinalOut, FinalLse, pid_b, pid_h, pid_s,\n"
            "            stride_out_batch, stride_out_split, stride_out_head,\n"
            "            stride_lse_batch, stride_lse_split, stride_fout_batch,\n"
            "            stride_fout_head, stride_flse_batch, num_heads, BLOCK_H,\n"
            "            SPLIT_K, Sink, HAS_SINK)\n"
            "\n"
            "\n"
            "@gluon.jit\n"
            "def _ws_narrow_kernel(\n",
        ),
        (tuple_old, tuple_new),
        (
            "        if c.cluster_merge and _merges_in_shared_memory(c.split_k, True):\n",
            "        if (\n"
            "            c.cluster_merge\n"
            "            and c.block_h == 64\n"
            "            and _merges_in_shared_memory(c.split_k, True)\n"
            "        ):\n",
        ),
    ]


def main():
    d = copies.base(HERE, commit=COMMIT, name="base", target="sm90")
    print(d)
    text = open(os.path.join(d, copies.MODULE)).read()
    print(copies.edited(HERE, "nclus", edits(text)))


if __name__ == "__main__":
    main()
