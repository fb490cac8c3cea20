"""Recreate lab/rs120's module copies (not checked in). base/ is the
sm_120 module at COMMIT. Each copy in FORMS is that module with the
64-head tile split by role (kernel.py.in): a score group of 4 warps
holding Q's first QREG column groups in registers (the rest in shared
memory), a value group of 8 warps holding the accumulators, a producer of
4 warps, around a ring of SLOTS K slots of TILE tokens. Its
configurations pp_h64_t<TILE>_k<K>_w8_s<SLOTS> are added to CONFIGS and
launched as _rs_decode_kernel. ABLATIONS are timing-only copies of rs.

From the repository root:  python3 lab/rs120/prepare.py

FORMS gives each copy's QREG, the setmaxnreg of the two worker partitions
and LAZY (rsl); the value group gets what the launch's 128 registers
leave, 128 + ((128 - score) + (128 - producer)) * 4 / 8 rounded down to 8
(168 for rs and rsl, 160 for rs5). RS_TILE and RS_SLOTS change the ring
for every copy (compile.txt says why 16 and 3), and
RS_FORMS=NAME:QREG:SCORE:PRODUCER[:LAZY],... replaces FORMS (and makes
no ablation copies).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

COMMIT = os.environ.get("COMMIT", "d435875")
FORMS = {
    "rs": dict(qreg=4, score=120, producer=56),
    "rs5": dict(qreg=5, score=128, producer=56),
    # rs with the value group's rescale skipped on tiles where no row's
    # maximum moved, a row's maximum moving only by more than 2^8.
    "rsl": dict(qreg=4, score=120, producer=56, lazy=8),
}
# Timing-only copies of rs, each with one partition's work taken out
# (results wrong by design; device-ablate.sh): what paces the tile.
ABLATIONS = {
    # The value group only hands its slots back: no P.V, no rescale.
    "rsnv": [
        (
            "            accs = _pp_pv(p, _rs_slot(ring, slot), accs, alpha, dot_b)\n",
            "            accs = accs\n",
        )
    ],
    # The score group without its MMAs (and so without their operand reads).
    "rsns": [
        ("                s0 = mma_v2(a, b, s0)\n", "                s0 = s0\n"),
        ("                s1 = mma_v2(a, b, s1)\n", "                s1 = s1\n"),
    ],
    # The producer without rows: index loads and the hand-over only.
    "rsnp": [("        _pp_store_tile(raw, _rs_slot(ring, slot))\n", "")],
}
if os.environ.get("RS_FORMS"):
    # NAME:QREG:SCORE:PRODUCER,... instead (compile explorations).
    FORMS = {
        name: dict(qreg=int(q), score=int(sc), producer=int(pr), lazy=int(lz))
        for name, q, sc, pr, lz in (
            (f + ":0").split(":")[:5] for f in os.environ["RS_FORMS"].split(",")
        )
    }
TILE = int(os.environ.get("RS_TILE", "16"))
SLOTS = int(os.environ.get("RS_SLOTS", "3"))
SPLITS = (1, 2, 4, 8)
# 16 warps: 65,536 registers / 512 threads.
MAXNREG = 128


def edits(qreg, score, producer, lazy=0):
    configs = "".join(
        f'    "pp_h64_t{TILE}_k{k}_w8_s{SLOTS}": Config("pp", 64, {TILE}, {k}, 8, {SLOTS}, False),\n'
        for k in SPLITS
    )
    return [
        (
            "from triton.experimental.gluon.language.nvidia.ampere import mma_v2\n",
            "from triton.experimental.gluon.language.nvidia.ampere import mma_v2\n"
            "from triton.experimental.gluon.language.nvidia.hopper import mbarrier\n",
        ),
        (
            '    "pp_h64_t32_k1_w8_s1": Config("pp", 64, 32, 1, 8, 1, False),\n',
            '    "pp_h64_t32_k1_w8_s1": Config("pp", 64, 32, 1, 8, 1, False),\n'
            + configs,
        ),
        (
            """    options = dict(num_warps=c.num_warps, maxnreg=_PP_MAXNREG)
    decode = _Kernel(_pp_decode_kernel, grid, fixed, bind, constexprs, options)""",
            f"""    options = dict(num_warps=c.num_warps, maxnreg=_PP_MAXNREG)
    fn = _pp_decode_kernel
    if c.block_h == 64 and c.block_t == {TILE} and c.num_stages == {SLOTS}:
        # lab/rs120: the role split, launched at a register count setmaxnreg
        # divides between its partitions.
        fn, options = _rs_decode_kernel, dict(options, maxnreg=_RS_MAXNREG)
    decode = _Kernel(fn, grid, fixed, bind, constexprs, options)""",
        ),
        (
            "\n_PP_HALVES_BLOCK_T = ",
            f"\n_RS_QREG = gl.constexpr({qreg})\n"
            f"_RS_SCORE_REGS = gl.constexpr({score})\n"
            f"_RS_PRODUCER_REGS = gl.constexpr({producer})\n"
            f"_RS_LAZY = gl.constexpr({float(lazy)})\n"
            f"_RS_MAXNREG = {MAXNREG}\n_RS_TILE = {TILE}\n_RS_SLOTS = {SLOTS}\n"
            "_PP_HALVES_BLOCK_T = ",
        ),
    ]


def main():
    copies.base(HERE, commit=COMMIT)
    with open(os.path.join(HERE, "kernel.py.in")) as f:
        kernel = f.read()
    at = "\n\n@gluon.jit\ndef _pp_row_sum("
    for name, form in FORMS.items():
        copies.edited(
            HERE, name, edits(**form) + [(at, kernel.rstrip("\n") + "\n" + at)]
        )
    names = list(FORMS)
    if "rs" in FORMS and not os.environ.get("RS_FORMS"):
        for name, cuts in ABLATIONS.items():
            copies.edited(HERE, name, cuts, source="rs")
            names.append(name)
    print(f"prepared base, {', '.join(names)} (tile {TILE}, slots {SLOTS})")


if __name__ == "__main__":
    main()
