"""Compile lab/wpf's copies (prepare.py) and the shipped sm_120 module,
no GPU: for each 16-head configuration named (k1 and k8 unless told), per
cache and as the whole call, for sm_90 (DISABLE_MMA_V3, as on the device)
and sm_120, the registers, spills, L2 prefetches in the PTX and in the
SASS (calib/calibrate.py's prefetch_counts) and the machine code's digest.

    python3 lab/wpf/prepare.py && .venv/bin/python lab/wpf/compile.py [CONFIG...]
"""

import os
import sys

os.environ.setdefault("DISABLE_MMA_V3", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "calib"))
sys.path.insert(0, os.path.join(ROOT, "lab"))
import calibrate  # noqa: E402
import narrowcompile  # noqa: E402

COPIES = ("base", "card", "g3", "g2", "one", "blk")


def main():
    names = sys.argv[1:] or ["pp_h16_t64_k1_w8_s1", "pp_h16_t64_k8_w8_s1"]
    paths = [(c, os.path.join(HERE, c, "sparse_mla_mma.py")) for c in COPIES]
    paths.append(
        ("shipped", os.path.join(ROOT, "kernels", "sm120", "sparse_mla_mma.py"))
    )
    for label, path in paths:
        m = calibrate.load_kernel(path)
        for name in names:
            fn, opts = m._pp_program(m.CONFIGS[name])
            for whole in (False, True):
                for cap in (90, 120):
                    ck, log, _, _ = narrowcompile.compiled(
                        m, name, whole, opts.get("maxnreg"), cap, fn
                    )
                    use = calibrate.ptxas_usage(ck.asm["ptx"], cap, log)
                    pf = calibrate.prefetch_counts(ck.asm["ptx"], ck.asm["cubin"])
                    print(
                        f"{label:7s} {name} {'whole' if whole else 'cache'} sm_{cap}: "
                        f"regs {use['regs']} spill {use['spill']} "
                        f"prefetches (PTX, SASS) {pf or '-'} "
                        f"code {calibrate.code_digest(ck.asm['cubin'])}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
