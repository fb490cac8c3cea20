"""lab/pexch: compile one configuration of module copies for a target and
count what matters in its SASS (no GPU): registers, local memory, shared
memory, and the barriers, ldmatrix, shared stores and loads and HMMAs of the
decode kernel (all of them / those from its first HMMA to its last, the
tile loop).

    python3 lab/pexch/inspect_sass.py CAP CONFIG DIR...
"""

import os
import re
import sys

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../calib")
)
import sass  # noqa: E402

PATTERNS = [
    ("BAR", r"BAR\.SYNC"),
    ("LDSM", r"LDSM"),
    ("STS", r"STS"),
    ("LDS", r"LDS(?!M)"),
    ("HMMA", r"HMMA"),
]


def main():
    cap, config, dirs = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    sass.BIN = os.path.join(
        os.path.dirname(triton.__file__), "backends", "nvidia", "bin"
    )
    for d in dirs:
        path = os.path.join(d, "sparse_mla_mma.py")
        module = sass.load(path)
        tile = sass.tile_of(module.CONFIGS[config])
        for full in (False, True):
            fn, sig, constexprs, options, gluon = sass.decode_job(module, tile, cap, full)
            src = GluonASTSource(
                fn=fn,
                signature=sig,
                constexprs=constexprs,
                attrs=sass.specialised(fn, sig),
            )
            try:
                ck = triton.compile(
                    src, target=GPUTarget("cuda", cap, 32), options=options
                )
            except Exception as e:
                print(d, "full" if full else "cache", "ERROR", str(e)[:2000])
                continue
            lines, regs, local = sass.disassemble(ck.asm["cubin"])
            counts = {
                name: sum(bool(re.match(pat, line)) for line in lines)
                for name, pat in PATTERNS
            }
            hmma = [i for i, line in enumerate(lines) if line.startswith("HMMA")]
            body = lines[hmma[0] : hmma[-1] + 1] if hmma else []
            loop = {
                name: sum(bool(re.match(pat, line)) for line in body)
                for name, pat in PATTERNS
            }
            what = " ".join(f"{k} {v}/{loop[k]}" for k, v in counts.items())
            # ldmatrix bytes a warp in the loop: LDSM.16.M88.4 (or MT88.4)
            # moves four 8x8 bf16 matrices, 512 B; .2 256 B; no suffix 128 B.
            ldsm = sum(
                {"4": 512, "2": 256}.get(line.split()[0].split(".")[-1], 128)
                for line in body
                if line.startswith("LDSM")
            )
            what += f" ldsm_bytes {ldsm}"
            entry = "whole" if full else "cache"
            print(
                f"{d:10s} {entry:5s} regs {regs} local {local} "
                f"smem {ck.metadata.shared} lines {len(lines)} {what}"
            )


if __name__ == "__main__":
    main()
