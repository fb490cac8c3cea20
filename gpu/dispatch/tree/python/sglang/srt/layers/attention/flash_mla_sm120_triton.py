"""Stand-in for SGLang's SIMT module: the old kernel is mlagen's per-head SIMT baseline."""

import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "simt", os.path.join(os.environ["MLAGEN_KERNELS"], "simt_baseline.py")
)
_simt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_simt)
CALLS = {"simt": 0}


def _run_triton_sparse_decode(q, k_cache, indices, topk_length, softmax_scale):
    CALLS["simt"] += 1
    return _simt.sparse_decode(q, k_cache, indices, topk_length, softmax_scale)


def flash_mla_sparse_decode_triton(q, k_cache, indices, topk_length, softmax_scale):
    out, lse = _run_triton_sparse_decode(
        q, k_cache, indices, topk_length, softmax_scale
    )
    return out, lse
