"""Usage (on the GPU, from the repository root): python3 gpu/bundle_check.py [sm90]

Runs the single-file bundle kernels/<dir>/sparse_mla_mma.py -- what `mlagen
patch` installs -- against the harness's float64 reference at one shape per
selection bucket, so every configuration its table names goes through the
bundle's own launcher, and checks that its `supports` refuses a cache whose
pages are not 8-byte aligned, and one whose pages are not 16-byte aligned
where a warp-specialised variant (its producer's L2 prefetch) is selected.
Exit status 1 when a check fails."""

import importlib.util
import sys

import torch


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "sm90"
    harness = load("harness", f"kernels/{d}/harness.py")
    bundle = load("bundle", f"kernels/{d}/sparse_mla_mma.py")
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(5)
    failed = 0
    # One shape per bucket of the bundle's own table, at the bucket's upper
    # bound; the unbounded last buckets run at batch 128 and topk 2048, the
    # largest shapes the harness times.
    batches = [b or 128 for b in bundle.BATCH_BOUNDS]
    topks = [k or 2048 for k in bundle.TOPK_BOUNDS]
    for topk in topks:
        for batch in batches:
            # With lengths the harness empties the last row; at batch 1 that
            # would leave nothing to compare, so batch 1 runs full rows.
            case = (f"bundle_b{batch}_topk{topk}", 64, batch, 64, topk, batch > 1)
            row = harness.check(bundle, case, gen, dev)
            failed += not row["passed"]
            print(
                f"{row['case']:22s} {bundle.select(batch, topk):24s} rel {row['rel_err']:.2e}"
                f" lse {row['lse_err']:.1e} {'ok' if row['passed'] else 'FAIL'}"
            )
    # The gathers load a token's 8 scale bytes as one word, so pages must be
    # 8-byte aligned: a cache that is not goes to the caller's fallback.
    q = torch.zeros(1, 1, 64, 512, dtype=torch.bfloat16, device=dev)
    idx = torch.zeros(1, 1, 64, dtype=torch.int32, device=dev)
    for pad, want in ((576, True), (4, False)):
        buf = torch.zeros(
            2, 64 * harness.TOKEN_BYTES + pad, dtype=torch.uint8, device=dev
        )
        got = bundle.supports(q, harness.as_k_cache(buf, 64), idx)
        failed += got != want
        print(
            f"supports, page stride {buf.shape[1]} B: {got} {'ok' if got == want else 'FAIL'}"
        )
    # The warp-specialised variants (ws_*, wsc_*) also prefetch whole token
    # rows into L2, which needs 16-byte aligned pages: an 8-byte aligned
    # stride is refused in their buckets only.
    buf = torch.zeros(2, 64 * harness.TOKEN_BYTES + 8, dtype=torch.uint8, device=dev)
    for topk in topks:
        for batch in batches:
            name = bundle.select(batch, topk)
            config = bundle.CONFIGS[name]
            want = not (len(config) > 5 and config[5])
            q = torch.zeros(batch, 1, 64, 512, dtype=torch.bfloat16, device=dev)
            idx = torch.zeros(batch, 1, topk, dtype=torch.int32, device=dev)
            got = bundle.supports(q, harness.as_k_cache(buf, 64), idx)
            failed += got != want
            print(
                f"supports, page stride {buf.shape[1]} B, batch {batch} topk {topk} ({name}):"
                f" {got} {'ok' if got == want else 'FAIL'}"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
