"""Bisect lab/fp8's wrong tile (on a GPU): one 64-head per-cache case
through each copy named, with the harness's inputs (token groups scaled by
e^N(0,1)) and without that spread, against the harness's float64
reference: relative error of out and the largest lse error
(`results/run3/debug.txt`).

    DISABLE_MMA_V3=1 python3 lab/fp8/debug.py base f8 f8q   # after prepare.py
    DISABLE_MMA_V3=1 python3 lab/fp8/debug.py f8nn f8nr
    DISABLE_MMA_V3=1 python3 lab/fp8/debug.py base f8 f8g1 f8qd

Each line also counts the heads (of B x 64) whose lse, and whose out row,
is not finite.
"""

import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = "pp_h64_t32_k1_w8_s1"


def main(names):
    sys.path.insert(0, os.path.join(HERE, "base"))
    import harness as H

    dev = torch.device("cuda")
    for spread in (True, False):
        gen = torch.Generator(device=dev).manual_seed(0)
        page_size, batch, heads, topk = 64, 4, 64, 512
        pages = 4 * batch * topk // page_size
        buf = H.quantize_pages(pages, page_size, 576, gen, dev, spread=spread)
        q = torch.randn(batch, 1, heads, 512, generator=gen, device=dev).to(
            torch.bfloat16
        )
        idx = torch.randint(
            0,
            pages * page_size,
            (batch, topk),
            generator=gen,
            device=dev,
            dtype=torch.int32,
        )
        kv = H.dequantize(buf, page_size)
        scale = 512**-0.5
        ref, ref_lse = H.reference(q, kv, idx, None, scale)
        kc = H.as_k_cache(buf, page_size)
        for name in names:
            mod = H.load_module(os.path.join(HERE, name, "sparse_mla_mma.py"))
            out, lse = mod.sparse_decode_with(CONFIG, q, kc, idx, None, scale)
            rel = float((out.double() - ref).norm() / ref.norm())
            le = float((lse.double().view_as(ref_lse) - ref_lse).abs().max())
            bad_lse = int((~torch.isfinite(lse.float())).sum())
            bad_out = int((~torch.isfinite(out.float())).any(-1).sum())
            print(
                f"spread={spread!s:5s} {name:6s} rel {rel:.2e} lse {le:.2e}"
                f" non-finite lse {bad_lse}/{lse.numel()} out rows {bad_out}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
