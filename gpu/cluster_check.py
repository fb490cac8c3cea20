"""Usage (on the GPU, from the repository root): python3 gpu/cluster_check.py [sm90]

A wsc_* kernel merges its split-K partials after a cluster barrier, so it is
only correct when launched as clusters of SPLIT_K programs. This launches
wsc_h64_t64_k2_w8_s2 the plain way, without the cluster, and expects the
kernel's guard to stop it with a CUDA error rather than return results it
never merged. Run it last in a process: the error leaves the CUDA context
unusable. Exit status 1 when the launch does not fail."""

import sys

import torch

from bundle_check import load


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "sm90"
    harness = load("harness", f"kernels/{d}/harness.py")
    m = load("wsc", f"kernels/{d}/wsc_h64_t64_k2_w8_s2.py")

    def plain_launch(kernel, grid, cluster, args, constexprs, options):
        # Every program alone in a cluster of 1.
        kernel[(grid[0] * cluster, 1, grid[2])](*args, **constexprs, **options)

    m._launch_in_clusters = plain_launch
    dev = torch.device("cuda")
    case = harness.correctness_cases(False)[0]
    try:
        row = harness.check(m, case, torch.Generator(device=dev).manual_seed(1), dev)
        torch.cuda.synchronize()
    except Exception as e:  # the trap surfaces as a CUDA error
        print(
            f"launch without the cluster failed as it should: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
        )
        return 0
    print(f"launch without the cluster did not fail (passed={row['passed']})")
    return 1


if __name__ == "__main__":
    sys.exit(main())
