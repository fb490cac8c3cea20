"""Make lab/pdl64's module copies (git-ignored) from the sm_120 module at
f28c7e3, whose 64-head pipelined tile does not signal its combine: `base`
as it is; `late`, whose 64-head tile signals as its tile loop ends (as
lab/pdl120's late did, 1.09x slower per cache at B 16, topk 512); `end`,
whose 64-head tile signals after its epilogue's stores, just before it
exits.

    python3 lab/pdl64/prepare.py     # lab/pdl64/{base,late,end}
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

GUARD = "    if PDL and SPLIT_K > 1 and BLOCK_H == 16:\n"
EPILOGUE_END = """        mma,
    )


@gluon.jit
def _pp_row_sum("""


def main():
    copies.base(HERE, commit="f28c7e3", target="sm120")
    copies.edited(HERE, "late", [(GUARD, "    if PDL and SPLIT_K > 1:\n")])
    copies.edited(
        HERE,
        "end",
        [
            (
                EPILOGUE_END,
                EPILOGUE_END.replace(
                    "        mma,\n    )\n",
                    "        mma,\n    )\n"
                    "    if PDL and SPLIT_K > 1 and BLOCK_H == 64:\n"
                    "        _launch_dependents()\n",
                ),
            )
        ],
    )


if __name__ == "__main__":
    main()
