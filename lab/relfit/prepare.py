"""lab/relfit's module copies (git-ignored) from the sm_120 module at HEAD:
`base` as it is, and `q5`, whose 16-head pipelined tile keeps 5 of Q's
column groups in registers instead of 6.

Why: under the Triton releases newer SGLang installs (3.7.1, 3.8.0) the
16-head tile with 6 groups spills 12-36 B; with 5 it compiles clean under
3.6.0, 3.8.0 and 3.9.0 (3.7.1: 12 B in the whole call). device.sh times
both under the GPU's 3.6.0 and a packed release, and the batch-1
candidates (the 4-warp 32-token `tl.dot` tile spills inside its loop
under 3.7+) beside each other under both.

    python3 lab/relfit/prepare.py [COMMIT]    # 2026-12-05's runs: 1c8c0bd
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

commit = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
copies.base(HERE, commit=commit)
copies.edited(
    HERE,
    "q5",
    [("_PP_Q_REG_GROUPS_ONE_PIECE_H16 = 6", "_PP_Q_REG_GROUPS_ONE_PIECE_H16 = 5")],
)
