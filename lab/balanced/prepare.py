"""lab/balanced's module copy (git-ignored): 23853f1's sm_120 module with
bal.patch (the balanced pipelined launch, `ppb_*` configurations).

    python3 lab/balanced/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402


def main():
    copies.base(HERE, commit="23853f1")
    copies.patched(HERE, "bal", "bal.patch")


if __name__ == "__main__":
    main()
