"""Every fp8 code at every UE8M0 exponent through a kernel module, bit for bit.

With q = 0 every score is 0, so a batch row whose only valid token is t
returns, for every head, token t's dequantised vector (softmax weight 1,
accumulated in fp32, rounded to bf16 once). The cache built here gives its
tokens' 7 nope groups every pair of (a quarter of the 256 codes, exponent
0-246), and random rope values; out must equal float64 dequantisation
rounded to bf16 in every bit (a zero of either sign matching a zero). The
fp32 route of the variants without clusters reads exponent 0 as a zero
scale, so they fail there by design. Exponents from 247 up are left
out: there a group's largest codes overflow bf16, in the reference too, and
an infinite K makes q . k = 0 * inf a NaN score. The NaN codes (0x7F, 0xFF)
are stored as 0.

    python3 gpu/dequant_check.py kernels/sm90/wsc_h64_t64_k2_w8_s2.py ...
    python3 gpu/dequant_check.py --out check.json kernels/sm90/ws*.py

Exit status 1 when any module differs in any value.
"""

import argparse
import importlib.util
import json
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE_SIZE = 64
MAX_EXPONENT = 246


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_cache(harness, device):
    """Bytes of a paged cache whose tokens cover every (code quarter, exponent)
    pair in their groups, and the number of tokens used."""
    pairs = [(e, q) for e in range(MAX_EXPONENT + 1) for q in range(4)]
    tokens = -(-len(pairs) // 7)
    pages = -(-tokens // PAGE_SIZE)
    slots = pages * PAGE_SIZE
    codes = torch.zeros(slots, 7, 64, dtype=torch.uint8)
    exps = torch.full((slots, 7), 127, dtype=torch.uint8)
    quarter = torch.arange(64, dtype=torch.uint8)
    for k, (e, q) in enumerate(pairs):
        t, g = divmod(k, 7)
        codes[t, g] = quarter + 64 * q
        exps[t, g] = e
    codes[(codes & 0x7F) == 0x7F] = 0
    gen = torch.Generator().manual_seed(0)
    rope = torch.randn(slots, harness.ROPE_DIM, generator=gen).to(torch.bfloat16)
    data = torch.cat([codes.reshape(slots, -1), rope.view(torch.uint8)], -1)
    scales = torch.cat([exps, torch.full((slots, 1), 0xFF, dtype=torch.uint8)], -1)
    # A padded page stride, 16-byte aligned like SGLang's.
    stride = PAGE_SIZE * harness.TOKEN_BYTES + 576
    buf = torch.full((pages, stride), 0xFF, dtype=torch.uint8)
    buf[:, : PAGE_SIZE * 576] = data.reshape(pages, -1)
    buf[:, PAGE_SIZE * 576 : PAGE_SIZE * harness.TOKEN_BYTES] = scales.reshape(
        pages, -1
    )
    return buf.to(device), tokens


def check(module, harness, buf, want, device):
    """Run module over the cache, one token a row; compare with want, the
    tokens' bf16 vectors [tokens, 1, 512]."""
    tokens, heads, topk = want.shape[0], 64, 64
    q = torch.zeros(
        tokens, 1, heads, harness.HEAD_DIM, dtype=torch.bfloat16, device=device
    )
    idx = torch.full((tokens, topk), -1, dtype=torch.int32, device=device)
    idx[:, 0] = torch.arange(tokens, dtype=torch.int32, device=device)
    length = torch.ones(tokens, dtype=torch.int32, device=device)
    out, _ = module.sparse_decode(
        q, harness.as_k_cache(buf, PAGE_SIZE), idx, length, harness.HEAD_DIM**-0.5
    )
    got = out[:, 0]
    same = (got.view(torch.int16) == want.view(torch.int16)) | (
        (got == 0) & (want == 0)
    )
    bad = (~same).nonzero().tolist()
    examples = [
        dict(token=t, head=h, dim=d, got=float(got[t, h, d]), want=float(want[t, 0, d]))
        for t, h, d in bad[:5]
    ]
    return dict(values=same.numel(), mismatches=len(bad), examples=examples)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "modules", nargs="+", help="kernel module files (kernels/sm90/ws_*.py, ...)"
    )
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args(argv)
    device = torch.device("cuda")
    harness = load(os.path.join(ROOT, "kernels", "sm90", "harness.py"), "dq_harness")
    buf, tokens = build_cache(harness, device)
    # The reference, once for every module.
    want = harness.dequantize(buf, PAGE_SIZE)[:tokens].to(torch.bfloat16)[:, None]
    rows = []
    for path in args.modules:
        row = dict(
            module=os.path.relpath(path, ROOT),
            **check(harness.load_module(path), harness, buf, want, device),
        )
        rows.append(row)
        print(
            f"{row['module']}: {row['mismatches']} of {row['values']} output values differ "
            f"from float64 dequantisation rounded to bf16",
            row["examples"][:2],
        )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(
                dict(
                    gpu=torch.cuda.get_device_name(),
                    torch=torch.__version__,
                    triton=__import__("triton").__version__,
                    command="python3 gpu/dequant_check.py " + " ".join(args.modules),
                    rows=rows,
                ),
                f,
                indent=1,
            )
    return 1 if any(r["mismatches"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
