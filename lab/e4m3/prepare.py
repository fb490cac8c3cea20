"""lab/e4m3's module copy (git-ignored): old/, the sm_86 module as it was
before the word conversion (commit db17572), beside kernels/sm86 as it is.

    python3 lab/e4m3/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import copies  # noqa: E402

copies.base(HERE, commit="db17572", name="old", target="sm86")
print("prepared old")
