"""Usage: mlagen patch --target sm_90 COPY_OF_gpu/dispatch/tree, then on the GPU
python3 gpu/dispatch/check.py COPY (from the repository root).

On the GPU: the patched dispatcher reads the gate at call time, runs the
installed kernel module (kernels/sm90/sparse_mla_mma.py) when set, matching
the SIMT path, falls back when unset, and survives CUDA-graph capture."""

import importlib.util, os, sys, torch

os.environ["MLAGEN_KERNELS"] = os.path.abspath("kernels/sm90")
if len(sys.argv) != 2:
    sys.exit(__doc__)
TREE = sys.argv[1]
sys.path.insert(0, os.path.join(TREE, "python"))
spec = importlib.util.spec_from_file_location("harness", "kernels/sm90/harness.py")
H = importlib.util.module_from_spec(spec)
spec.loader.exec_module(H)
os.environ.pop("SGLANG_SM120_MMA_FLASHMLA", None)
from sglang.srt.layers.attention import (
    flash_mla_sm120_triton as m,
)  # imported with the gate unset

dev = torch.device("cuda")
gen = torch.Generator(device=dev).manual_seed(3)
buf, q, idx, tl_ = H.make_inputs(64, 64, 64, 512, True, gen, dev)
kc = H.as_k_cache(buf, 64)
sc = 512**-0.5
o0, l0 = m.flash_mla_sparse_decode_triton(q, kc, idx, tl_, sc)
torch.cuda.synchronize()
print("gate unset: SIMT calls", m.CALLS["simt"])
os.environ["SGLANG_SM120_MMA_FLASHMLA"] = "1"  # set after import: must take effect
o1, l1 = m.flash_mla_sparse_decode_triton(q, kc, idx, tl_, sc)
torch.cuda.synchronize()
print("gate set after import: SIMT calls", m.CALLS["simt"])
ref, rl = H.reference(q, H.dequantize(buf, 64), idx, tl_, sc)
fin = ~torch.isinf(rl)
for name, o, l in (("simt", o0, l0), ("mma", o1, l1)):
    print(
        name,
        "rel err",
        float((o.double() - ref).norm() / ref.norm()),
        "lse err",
        float((l.double() - rl)[fin].abs().max()),
    )
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    og, lg = m.flash_mla_sparse_decode_triton(q, kc, idx, tl_, sc)
g.replay()
torch.cuda.synchronize()
print(
    "graph replay equals eager:",
    bool(torch.equal(og, o1)),
    bool(torch.equal(lg, l1)),
    "SIMT calls",
    m.CALLS["simt"],
)
os.environ["SGLANG_SM120_MMA_FLASHMLA"] = "0"
m.flash_mla_sparse_decode_triton(q, kc, idx, tl_, sc)
torch.cuda.synchronize()
print("gate 0 again: SIMT calls", m.CALLS["simt"])
