"""The wiring end to end on the GPU, through the function SGLang calls.

Usage (from the repository root): patch a copy of the stand-in tree, then run
this on the device with the module the copy was patched with:

    cp -r gpu/dispatch/tree /tmp/tree && bin/mlagen patch --target sm_90 /tmp/tree
    python3 gpu/dispatch/check.py /tmp/tree kernels/sm90

It imports the patched flash_mla_sparse_decode_triton with the gate unset and
checks, on one whole-call case (window cache + extra cache + sink):
  * gate unset: SGLang's old path runs (the SIMT kernel, twice);
  * gate set after import: the MMA kernel's whole call runs (no SIMT call,
    the module's INFO line), and matches the float64 reference;
  * under CUDA-graph capture: replay equals the eager call bit for bit;
  * gate set to 0 again: the old path, bit for bit what it gave before.
Prints one line per check and exits 1 if any fails.
"""

import importlib.util
import logging
import os
import sys

import torch


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def _harness(kernels):
    spec = importlib.util.spec_from_file_location(
        "harness", os.path.join(kernels, "harness.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(tree, kernels):
    kernels = os.path.abspath(kernels)
    os.environ["MLAGEN_KERNELS"] = kernels
    os.environ.pop("SGLANG_SM120_MMA_FLASHMLA", None)
    sys.path.insert(0, os.path.join(tree, "python"))
    H = _harness(kernels)
    lines = _Lines()
    logging.getLogger().addHandler(lines)
    logging.getLogger().setLevel(logging.INFO)
    from sglang.srt.layers.attention import flash_mla_sm120_triton as m

    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(7)
    case = ("dispatch", 64, 8, (64, 576, 128, "mixed"), (256, 576, 512, "mixed"))
    kwargs, ref = H.whole_call_inputs(case + (True, "contiguous"), gen, dev)
    results = []

    def call():
        out, lse = m.flash_mla_sparse_decode_triton(**kwargs)
        torch.cuda.synchronize()
        return out, lse

    def record(name, ok, detail=""):
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")

    before = m.CALLS["simt"]
    o0, l0 = call()
    record("gate unset: the old path", m.CALLS["simt"] == before + 2)
    os.environ["SGLANG_SM120_MMA_FLASHMLA"] = "1"  # after import: must take effect
    before = m.CALLS["simt"]
    o1, l1 = call()
    ran = [l for l in lines.lines if "on the MMA kernel (whole call" in l]
    record(
        "gate set after import: the MMA whole call",
        m.CALLS["simt"] == before and bool(ran),
        ran[0] if ran else "no INFO line; log: " + "; ".join(lines.lines),
    )
    verdict = H.compare_full(o1, l1, ref)
    record(
        "MMA whole call against float64",
        verdict["passed"],
        f"rel {verdict['rel_err']:.2e}, lse {verdict['lse_err']:.2e}",
    )
    simt = H.compare_full(o0, l0, ref)
    record(
        "old path against float64",
        simt["passed"],
        f"rel {simt['rel_err']:.2e}, lse {simt['lse_err']:.2e}",
    )
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        og, lg = m.flash_mla_sparse_decode_triton(**kwargs)
    g.replay()
    torch.cuda.synchronize()
    record(
        "graph replay equals eager",
        torch.equal(og, o1) and torch.equal(lg, l1),
    )
    os.environ["SGLANG_SM120_MMA_FLASHMLA"] = "0"
    before = m.CALLS["simt"]
    o2, l2 = call()
    record(
        "gate 0 again: the old path, bit for bit",
        m.CALLS["simt"] == before + 2 and torch.equal(o2, o0) and torch.equal(l2, l0),
    )
    return 0 if all(results) else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
