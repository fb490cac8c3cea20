"""Compile lab/l2pp's copies (prepare.py) for sm_90 (DISABLE_MMA_V3, as
on the device) and sm_120, no GPU: registers, spills, shared memory and
the tile loop's instruction counts, per cache and as the whole call.

    python3 lab/l2pp/prepare.py && .venv/bin/python lab/l2pp/compile.py [CONFIG...]
"""

import collections
import os
import sys

os.environ.setdefault("DISABLE_MMA_V3", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "calib"))
sys.path.insert(0, os.path.join(ROOT, "lab"))
import calibrate  # noqa: E402
import narrowcompile  # noqa: E402
import sass as S  # noqa: E402

OPS = ("HMMA", "LDSM", "LDG", "CCTL", "FMUL", "BAR", "STS", "BRA")


def main():
    names = sys.argv[1:] or ["pp_h64_t32_k1_w8_s1", "pp_h16_t64_k1_w8_s1"]
    for copy in ("base", "pf"):
        m = calibrate.load_kernel(os.path.join(HERE, copy, "sparse_mla_mma.py"))
        for name in names:
            fn, opts = m._pp_program(m.CONFIGS[name])
            for whole in (False, True):
                for cap in (90, 120):
                    ck, log, _, _ = narrowcompile.compiled(
                        m, name, whole, opts["maxnreg"], cap, fn
                    )
                    use = calibrate.ptxas_usage(ck.asm["ptx"], cap, log)
                    code = S.disassemble_at(ck.asm["cubin"])[0]
                    loops = narrowcompile.partition_loops(code)
                    body = max(loops, key=len) if loops else []
                    c = collections.Counter(
                        x.split()[1 if x.startswith("@") else 0].split(".")[0]
                        for x in body
                    )
                    print(
                        f"{copy} {name}{' whole' if whole else ''} sm_{cap}: "
                        f"regs {use['regs']} spill {use['spill']} smem {ck.metadata.shared}; "
                        f"loop {len(body)}: " + " ".join(f"{o} {c[o]}" for o in OPS),
                        flush=True,
                    )


if __name__ == "__main__":
    main()
