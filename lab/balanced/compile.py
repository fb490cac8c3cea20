"""Cross-compile lab/balanced's copy (no GPU): the pp configurations both
as split (BALANCED False) and balanced, per cache and as the whole call,
for sm_120 (ptxas-blackwell) and sm_90, with registers, spills and shared
memory; and the balanced combine.

    python3 lab/balanced/compile.py lab/balanced/bal/sparse_mla_mma.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "calib"))

import calibrate  # noqa: E402
import sass  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402


def main():
    path = sys.argv[1]
    m = calibrate.load_kernel(path)
    names = sys.argv[2:] or [
        "pp_h64_t32_k2_w8_s1",
        "pp_h16_t64_k2_w8_s1",
        "pp_h64_t32_k1_w8_s1",
    ]
    for cap in (120, 90):
        for name in names:
            for balanced in (False, True):
                for whole in (False, True):
                    tile = m.CONFIGS[name]._asdict()
                    fn, sig, cx, opt, gl = sass.decode_job(m, tile, cap, whole)
                    cx = dict(cx, BALANCED=balanced)
                    if balanced:
                        cx["SPLIT_K"] = 4
                    sig = {k: ("constexpr" if k in cx else v) for k, v in sig.items()}
                    src = GluonASTSource(
                        fn=fn,
                        signature=sig,
                        constexprs=cx,
                        attrs=sass.specialised(fn, sig),
                    )
                    try:
                        ck, log = calibrate.compile_logged(src, cap, opt)
                        use = calibrate.ptxas_usage(ck.asm["ptx"], cap, log)
                        print(
                            f"sm_{cap} {name} {'balanced' if balanced else 'split   '} "
                            f"{'whole' if whole else 'cache'}: smem {ck.metadata.shared} {use}",
                            flush=True,
                        )
                    except Exception as e:
                        print(f"sm_{cap} {name} balanced={balanced}: {str(e)[:2000]}")
        tile = m.CONFIGS[names[0]]._asdict()
        tile["split_k"] = 4
        for label, fn, sig, cx, opt, _ in sass.combine_jobs(m, tile, cap, True):
            for balanced in (False, True):
                cx2 = dict(cx, BALANCED=balanced)
                sig2 = {k: ("constexpr" if k in cx2 else v) for k, v in sig.items()}
                src = ASTSource(
                    fn=fn,
                    signature=sig2,
                    constexprs=cx2,
                    attrs=sass.specialised(fn, sig2),
                )
                ck, log = calibrate.compile_logged(src, cap, opt)
                print(
                    f"sm_{cap} {label} balanced={balanced}: {calibrate.ptxas_usage(ck.asm['ptx'], cap, log)}"
                )


if __name__ == "__main__":
    main()
