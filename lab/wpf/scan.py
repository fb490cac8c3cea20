"""calib/calibrate.py's prefetch check (prefetch_counts, prefetch_lost) on
the shipped modules under the Triton this runs on, which calib/versions.py
does not run: every kernel with an L2 prefetch (sm_89, sm_100 and sm_120's
16-head pipelined tiles, sm_90's warp-specialised ones) at splits 1 and 2,
per cache and as the whole call, no GPU. One line a compile, then a count.

    .venv/triton-3.8.0/bin/python lab/wpf/scan.py
"""

import os
import sys

import triton

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "calib"))
import calibrate  # noqa: E402
from sass import kernel_source  # noqa: E402

TARGETS = (("sm89", 89), ("sm90", 90), ("sm100", 100), ("sm120", 120))


def main():
    n = lost = 0
    for folder, cap in TARGETS:
        m = calibrate.load_kernel(
            os.path.join(ROOT, "kernels", folder, "sparse_mla_mma.py")
        )
        for name, c in m.CONFIGS.items():
            if not name.startswith(("pp_h16", "ws_")) or c.split_k > 2:
                continue
            for which in ("decode", "decode/full"):
                src, options = kernel_source(m, c._asdict(), cap, which)
                ck, _ = calibrate.compile_logged(src, cap, options)
                counts = calibrate.prefetch_counts(ck.asm["ptx"], ck.asm["cubin"])
                why = calibrate.prefetch_lost(counts)
                n += 1
                lost += bool(why)
                print(
                    f"{folder} {name} {which}: {counts or '-'} {why or 'kept'}",
                    flush=True,
                )
    print(f"Triton {triton.__version__}: {n} compiles, {lost} lost a prefetch")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
