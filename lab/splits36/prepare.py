"""lab/splits36's module copies (git-ignored): 23853f1's sm_90 and sm_120
modules with 3 and 6 splits added to every ws and pp kernel (CONFIGS
entries only: the kernels take any SPLIT_K), so fit_splits may pick them.

    python3 lab/splits36/prepare.py
"""

import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def main():
    for target in ("sm90", "sm120"):
        text = subprocess.run(
            ["git", "show", f"23853f1:kernels/{target}/sparse_mla_mma.py"],
            check=True,
            capture_output=True,
            text=True,
            cwd=HERE,
        ).stdout
        lines = []
        for m in re.finditer(
            r'    "((ws|pp)_h(\d+)_t(\d+)_k2_w(\d+)_s(\d+))": Config\("(ws|pp)", (\d+), (\d+), 2, (\d+), (\d+), False\),\n',
            text,
        ):
            fam, h, t, w, s = m.group(2), m.group(3), m.group(4), m.group(5), m.group(6)
            for k in (3, 6):
                lines.append(
                    f'    "{fam}_h{h}_t{t}_k{k}_w{w}_s{s}": Config("{fam}", {h}, {t}, {k}, {w}, {s}, False),\n'
                )
        anchor = "CONFIGS = {\n"
        assert text.count(anchor) == 1
        text = text.replace(anchor, anchor + "".join(lines))
        d = os.path.join(HERE, target)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "sparse_mla_mma.py"), "w") as f:
            f.write(text)
        print(target, len(lines), "configurations added")


if __name__ == "__main__":
    main()
