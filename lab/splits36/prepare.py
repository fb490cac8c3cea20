"""lab/splits36's module copies (git-ignored): 23853f1's sm_90 and sm_120
modules (lab/copies.base) with 3 and 6 splits added to every ws and pp
kernel (CONFIGS entries only: the kernels take any SPLIT_K), so
fit_splits may pick them.

    python3 lab/splits36/prepare.py
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import copies  # noqa: E402

# A non-cluster two-split ws or pp configuration: its name around the split
# count, and its Config around the split count.
TWO_SPLITS = re.compile(
    r'    "((?:ws|pp)_h\d+_t\d+)_k2(_w\d+_s\d+)": (Config\("(?:ws|pp)", \d+, \d+), 2(, \d+, \d+, False\)),\n'
)


def main():
    for target in ("sm90", "sm120"):
        d = copies.base(HERE, commit="23853f1", name=target, target=target)
        path = os.path.join(d, copies.MODULE)
        with open(path) as f:
            text = f.read()
        lines = [
            f'    "{m[1]}_k{k}{m[2]}": {m[3]}, {k}{m[4]},\n'
            for m in TWO_SPLITS.finditer(text)
            for k in (3, 6)
        ]
        anchor = "CONFIGS = {\n"
        assert text.count(anchor) == 1
        with open(path, "w") as f:
            f.write(text.replace(anchor, anchor + "".join(lines)))
        print(target, len(lines), "configurations added")


if __name__ == "__main__":
    main()
