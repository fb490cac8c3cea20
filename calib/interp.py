"""Run an emitted harness under the Triton interpreter on the CPU (CI has no GPU).

Triton 3.6's interpreter multiplies bf16 dot operands as raw uint16 bits; this
wrapper upcasts them to fp32 first (exact for bf16), then runs the harness's
tiny case for every configuration of the directory's sparse_mla_mma.py that
the interpreter can run (the Triton ones: Gluon has no interpreter), the
SIMT baseline, and the module's own selection.

    TRITON_INTERPRET=1 python3 calib/interp.py kernels/sm90/harness.py
"""

import importlib.util
import os
import sys

import numpy as np
import triton.language as tl
from triton.runtime import interpreter

_dot = interpreter.InterpreterBuilder.create_dot


def _bf16_safe_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
    def up(x):
        if x.dtype == tl.bfloat16:
            bits = x.data.astype(np.uint32) << 16
            return interpreter.TensorHandle(bits.view(np.float32), tl.float32)
        return x

    return _dot(self, up(a), up(b), d, input_precision, max_num_imprecise_acc)


interpreter.InterpreterBuilder.create_dot = _bf16_safe_dot

if __name__ == "__main__":
    assert os.environ.get("TRITON_INTERPRET") == "1", "set TRITON_INTERPRET=1"
    path = sys.argv[1]
    spec = importlib.util.spec_from_file_location("harness", path)
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    out = sys.argv[2] if len(sys.argv) > 2 else os.devnull
    sys.exit(harness.main(["--device", "cpu", "--tiny", "--out", out]))
