"""The modules before the entry points asked the driver for their stream's
multiprocessors (76c1a70's sm_90 and sm_120), as lab/greenctx/before-*,
for probe.py's host-time comparison. Not checked in.

    python3 lab/greenctx/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import copies  # noqa: E402  lab/copies.py

for target in ("sm90", "sm120"):
    copies.base(HERE, "76c1a70", f"before-{target}", target)
