"""Recreate lab/cs120's module copies (not checked in): base/ is the sm_120
module at COMMIT; cs/ is that module with _cs_decode_kernel (kernel.py.in,
the 64-head tile split by columns) and its configurations
pp_h64_t16_k<K>_w8_s<N> (N K slots, 2 or 3), which _pp_program sends there.

From the repository root:  python3 lab/cs120/prepare.py
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

COMMIT = os.environ.get("COMMIT", "adc5604")
SPLITS = (1, 2, 4, 8)


def main():
    base = copies.base(HERE, commit=COMMIT)
    with open(os.path.join(base, copies.MODULE)) as f:
        module = f.read()
    params = re.search(r"def _pp_decode_kernel\((.*?)\n\):", module, re.S).group(1)
    row = re.search(r"\n(    rng = \(\n.*?\n    \)\n)", module, re.S).group(1)
    with open(os.path.join(HERE, "kernel.py.in")) as f:
        kernel = f.read().replace("@PARAMS@", params + "\n").replace("@ROW@", row)
    configs = "".join(
        f'    "pp_h64_t16_k{k}_w8_s{n}": Config("pp", 64, 16, {k}, 8, {n}, False),\n'
        for n in (2, 3)
        for k in SPLITS
    )
    at = "\n\n@gluon.jit\ndef _pp_row_sum("
    copies.edited(
        HERE,
        "cs",
        [
            (
                '    "pp_h64_t32_k1_w8_s1": Config("pp", 64, 32, 1, 8, 1, False),\n',
                '    "pp_h64_t32_k1_w8_s1": Config("pp", 64, 32, 1, 8, 1, False),\n'
                + configs,
            ),
            (
                "    return _pp_decode_kernel, dict(num_warps=c.num_warps, maxnreg=_PP_MAXNREG)",
                "    if c.block_h == 64 and c.block_t == 16 and c.num_warps == 8:\n"
                "        return _cs_decode_kernel, dict(num_warps=8, maxnreg=_PP_MAXNREG)\n"
                "    return _pp_decode_kernel, dict(num_warps=c.num_warps, maxnreg=_PP_MAXNREG)",
            ),
            (at, kernel.rstrip("\n") + "\n" + at),
        ],
    )
    print("prepared base, cs")


if __name__ == "__main__":
    main()
