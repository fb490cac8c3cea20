"""lab/host's module copy (git-ignored): base/, the sm_90 module of commit
8a1e407, before supports_full() handed its plan to sparse_decode_full().

    python3 lab/host/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

copies.base(HERE, commit="8a1e407", target="sm90")
print("prepared base")
