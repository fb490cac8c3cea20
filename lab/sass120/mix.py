"""The instruction mix of the shipped sm_120 module's pipelined decode
kernels as built for sm_120 itself (Triton 3.6's ptxas-blackwell, no GPU):
the whole kernel, and the body of its tile loop (the instructions between
the loop's head and its backward branch, the longest such span).

    .venv/bin/python lab/sass120/mix.py [CONFIG ...]   # default: the 64- and 16-head k1 tiles
"""

import collections
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "calib"))

import narrowcompile  # noqa: E402
import sass  # noqa: E402

MODULE = os.path.join(HERE, "..", "..", "kernels", "sm120", "sparse_mla_mma.py")
CLASSES = [
    ("HMMA", r"^HMMA"),
    ("LDSM (ldmatrix)", r"^LDSM"),
    ("LDS", r"^LDS(\.|\s)"),
    ("STS", r"^STS"),
    ("LDG", r"^LDG"),
    ("STG", r"^STG"),
    ("BAR", r"^BAR"),
    ("F2FP/F2F (conversions)", r"^F2F"),
    ("FMUL", r"^FMUL"),
    ("FFMA", r"^FFMA"),
    ("MUFU", r"^MUFU"),
    ("SHFL", r"^SHFL"),
]


def opcode(ins):
    # "@P0 LDG.E.64 R2, desc[...]" -> "LDG.E.64"
    ins = re.sub(r"^@!?U?P\w+\s+", "", ins)
    return ins.split()[0].rstrip(";")


def loop_body(code):
    """The instructions of the longest backward branch's span."""
    best = (0, 0)
    for addr, ins in code:
        # "BRA 0x6830", "BRA.U UP0, 0x3220 &req={4}": the target is the
        # branch's last address.
        targets = re.findall(r"0x[0-9a-f]+", ins) if "BRA" in ins else []
        if targets:
            target = int(targets[-1], 16)
            if target < addr and addr - target > best[1] - best[0]:
                best = (target, addr)
    return [ins for addr, ins in code if best[0] <= addr <= best[1]]


def mix(instructions):
    ops = collections.Counter(opcode(i) for i in instructions)
    row = {}
    for label, pattern in CLASSES:
        row[label] = sum(n for op, n in ops.items() if re.match(pattern, op))
    widths = collections.Counter(
        op for op in ops.elements() if op.startswith(("LDG", "LDSM"))
    )
    return len(instructions), row, widths


def main(names):
    module = sass.load(MODULE)
    for name in names:
        # The decode kernel as its entry launches it, built for sm_120.
        ck = narrowcompile.compiled(module, name, cap=120)[0]
        code, regs, local = sass.disassemble_at(ck.asm["cubin"])
        print(
            f"{name}: sm_120 cubin, {regs} registers, {local} B local, {ck.metadata.shared} B shared"
        )
        for what, ins in (
            ("kernel", [i for _, i in code]),
            ("tile loop", loop_body(code)),
        ):
            n, row, widths = mix(ins)
            print(
                f"  {what}: {n} instructions; "
                + ", ".join(f"{k} {v}" for k, v in row.items())
            )
            print(
                "    load widths: "
                + ", ".join(f"{k} {v}" for k, v in sorted(widths.items()))
            )


if __name__ == "__main__":
    main(sys.argv[1:] or ["pp_h64_t32_k1_w8_s1", "pp_h16_t64_k1_w8_s1"])
