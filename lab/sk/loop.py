"""The tile loop's instruction mix of a lab copy's configuration, compiled
for sm_120 (no GPU): the backward branch with the most HMMA in its body is
taken as the loop; its length, its 22 most frequent opcodes, and the
counts of a few that matter here.

    .venv/bin/python lab/sk/loop.py COPY CONFIG   # COPY under lab/, e.g. sk/sk2
"""

import collections
import os
import re
import sys

LAB = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, LAB)
sys.path.insert(0, os.path.join(LAB, "..", "calib"))

import calibrate  # noqa: E402
import narrowcompile  # noqa: E402
import sass as S  # noqa: E402

WATCH = ("HMMA", "LDSM", "STS", "LDS", "BAR", "LDL", "STL", "MOV")
BRANCH = re.compile(r"BRA(?:\.U)?\s+(?:!?U?P\d+,\s*)?0x([0-9a-f]+)")


def loop(lines, op="HMMA"):
    """(first, last) line of the backward branch's body holding most `op`
    instructions (lab/fp8 passes "MMA", which counts sm_120's QMMA too)."""
    best = None
    for i, line in enumerate(lines):
        m = BRANCH.search(line)
        if not m:
            continue
        # 16-byte instructions, one a line.
        target = int(m.group(1), 16) // 16
        if target < i:
            n = sum(op in x for x in lines[target:i])
            if best is None or n > best[2]:
                best = (target, i, n)
    return best[0], best[1]


def opcodes(lines, first, last):
    """How many times each full opcode (predicates dropped) occurs in
    lines[first:last + 1]."""
    ops = collections.Counter()
    for line in lines[first : last + 1]:
        words = line.split()
        if words:
            ops[
                words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
            ] += 1
    return ops


def main(copy, name):
    module = calibrate.load_kernel(os.path.join(LAB, copy, "sparse_mla_mma.py"))
    ck, _, _, _ = narrowcompile.compiled(module, name, False, module._PP_MAXNREG, 120)
    lines = S.disassemble(ck.asm["cubin"])[0]
    first, last = loop(lines)
    ops = collections.Counter()
    for op, n in opcodes(lines, first, last).items():
        ops[op.split(".")[0]] += n
    top = " ".join(f"{op}={n}" for op, n in ops.most_common(22))
    print(f"{copy} {name}: loop of {last - first + 1} instructions: {top}")
    print("  " + " ".join(f"{op}={ops[op]}" for op in WATCH))


if __name__ == "__main__":
    main(*sys.argv[1:3])
