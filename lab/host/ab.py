"""The whole call's host time, the sm_90 module of 8a1e407 (base) against
the working tree's (supports_full() handing its plan to sparse_decode_full()),
alternating five times at each shape so that the host's drift falls on both.

    python3 lab/host/ab.py lab/host/base kernels/sm90   # on the device
"""

import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prof import host_us, load  # noqa: E402


def main():
    base, new = sys.argv[1:3]
    (harness, a), (_, b) = load(base), load(new)
    rows = []
    for heads, batch, extra in [
        (64, 1, 512),
        (64, 16, 512),
        (128, 1, 512),
        (64, 1, 2048),
    ]:
        gen = torch.Generator(device="cuda").manual_seed(0)
        kw = harness.whole_call_set(
            heads, batch, 128, extra, gen, torch.device("cuda")
        )["kw"]

        def call(m):
            def run():
                if not m.supports_full(**kw):
                    raise RuntimeError("refused")
                return m.sparse_decode_full(**kw)

            return run

        times = {base: [], new: []}
        for _ in range(5):
            for d, m in ((base, a), (new, b)):
                times[d].append(host_us(call(m)))
        row = {
            "heads": heads,
            "batch": batch,
            "extra": extra,
            **{d: t for d, t in times.items()},
        }
        rows.append(row)
        ma, mb = statistics.median(times[base]), statistics.median(times[new])
        print(
            f"H {heads:3d} B {batch:3d} extra {extra:4d}: base {ma:5.1f} µs "
            f"({min(times[base]):.1f}-{max(times[base]):.1f}), new {mb:5.1f} µs "
            f"({min(times[new]):.1f}-{max(times[new]):.1f}), new/base {mb / ma:.2f}",
            flush=True,
        )
    with open(os.path.join(os.environ.get("OUT", "/tmp"), "host-ab.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
