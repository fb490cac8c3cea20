"""Make lab/today's module copies (git-ignored): the sm_90 and sm_120
modules as they were when issues 25 and 26 were filed (a904148, the commit
before the pipelined family and the selection by heads), beside which
ab.py times the shipped ones.

    python3 lab/today/prepare.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

ISSUE_DAY = "a904148"


def main():
    for target in ("sm90", "sm120"):
        d = copies.base(HERE, commit=ISSUE_DAY, name=f"old-{target}", target=target)
        print(d)


if __name__ == "__main__":
    main()
