"""Compile the prototype bundles' kernels for sm_90 on a machine with no GPU.

The Gluon kernels (ws_*, wsc_*) have no interpreter, so this is what a
CPU can check of them: each configuration goes through the very path the
launch plan takes on the GPU (_Plan, _Kernel.first, Triton's JIT warmup),
with a stand-in CUDA driver that names sm_90 and launches nothing, and with
CPU tensors of the shapes, strides and alignments the GPU run will pass.
For each compiled kernel it reports shared memory, registers and spills
(ptxas -v on its PTX) and the module's own launch checks (_compile_error:
the K ring at byte 0, the cluster merge's shared memory), beside the
shipped kernel (base_sm90.py) compiled the same way. The compiled kernels
land in Triton's cache (TRITON_CACHE_DIR), keyed as the GPU's JIT keys them.

    .venv/bin/python3 lab/fused/compile_check.py [--configs a,b] [--json out]

Exit status 1 when a kernel fails to compile, spills, or fails a check.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import torch
import triton
from triton.backends.compiler import GPUTarget

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import base_harness as bh  # noqa: E402

B1_ONLY = ("mma_h16_t16_k40_w8_s1", "mma_h16_t16_k64_w8_s1")


class _StandInCuda:
    """What Triton's JIT asks of the active driver to compile (and nothing
    to launch with): device 0, stream 0, an sm_90 target."""

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)

    def get_active_torch_device(self):
        return torch.device("cpu")


def ptxas_report(ptx):
    arch = re.search(r"^\.target\s+(\S+)", ptx, re.M).group(1)
    ptxas = os.path.join(
        os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas"
    )
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        r = subprocess.run(
            [ptxas, "-v", f"--gpu-name={arch}", path, "-o", path + ".cubin"],
            capture_output=True,
            text=True,
        )
    regs = [int(x) for x in re.findall(r"Used (\d+) registers", r.stderr)]
    spills = [int(x) for x in re.findall(r"(\d+) bytes spill stores", r.stderr)]
    return dict(
        regs=max(regs) if regs else None,
        spill=max(spills) if spills else 0,
        ptxas_ok=r.returncode == 0,
    )


def compiled_row(compiled, constexprs, check):
    row = dict(
        kernel=compiled.name,
        smem=compiled.metadata.shared,
        **ptxas_report(compiled.asm["ptx"]),
    )
    if check is not None:
        row["check"] = check(compiled, constexprs) or "ok"
    return row


def fused_kernels(mod, name, q, caches, sink, rec):
    """Compile configuration `name` of the prototype for this call, through
    _Plan and _Kernel.first; rec receives (kernel, compiled)."""
    plan = mod._Plan(mod._WHOLE_CALL, name, q, caches, sink, True)
    extra = caches[1] if len(caches) == 2 else (None, None, None)
    plan.run(q, *caches[0], *extra, sink, 0.044)


def shipped_kernels(base, name, q, cache, rec):
    """Compile configuration `name` of the shipped module for one cache, as
    its launcher would (base._launch), rec receiving the compiled kernels."""
    base._launch(q, cache[0], cache[1], cache[2], 0.044, *base.CONFIGS[name])


def compile_only(mod, base, rows, current):
    """Make both modules compile instead of launch: the kernels are compiled
    by warmup, as on the GPU, their launch handles never loaded, and each
    compiled kernel is reported into rows, under current's (config, case)."""

    def keep(kernel, compiled):
        kernel.compiled = compiled
        kernel.run_ = lambda *a: None
        kernel.function = kernel.packed = None
        rows.append(
            dict(
                source="fused",
                config=current[0],
                case=current[1],
                **compiled_row(compiled, kernel.constexprs, kernel.check),
            )
        )

    mod._Kernel._keep = keep
    mod._Kernel.launch = lambda self, *a: None
    mod._pdl = lambda device: True  # as on the H200 (sm_90)
    base._pdl = lambda device: True

    class WarmOnly:
        def __init__(self, fn):
            self.fn = fn

        def __getitem__(self, grid):
            def run(*a, **k):
                compiled = self.fn.warmup(*a, grid=grid, **k)
                rows.append(
                    dict(
                        source="shipped",
                        config=current[0],
                        case=current[1],
                        **compiled_row(compiled, k, None),
                    )
                )

            return run

    base._mma_decode_kernel = WarmOnly(base._mma_decode_kernel)
    base._combine_kernel = WarmOnly(base._combine_kernel)
    base._combine_bf16_kernel = WarmOnly(base._combine_bf16_kernel)

    def ws_only(kernel, grid, *rest):
        args, constexprs, options = rest[-3:]
        compiled = base._compiled(kernel, grid, args, constexprs, options)
        rows.append(
            dict(
                source="shipped",
                config=current[0],
                case=current[1],
                **compiled_row(compiled, constexprs, base._compile_error),
            )
        )

    base._launch_ws = ws_only
    base._launch_in_clusters = lambda kernel, grid, cluster, *rest: ws_only(
        kernel, grid, *rest
    )


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--configs", default="all")
    ap.add_argument(
        "--json", default=os.path.join(HERE, "results", "compile_check.json")
    )
    ap.add_argument("--no-base", action="store_true", help="skip the shipped kernels")
    args = ap.parse_args()
    triton.runtime.driver.set_active(_StandInCuda())
    torch._C._cuda_getCurrentRawStream = lambda index: 0
    mod = bh.load_module(os.path.join(HERE, "sm90_fused.py"))
    base = bh.load_module(os.path.join(HERE, "base_sm90.py"))
    rows = []
    current = [None, None]
    compile_only(mod, base, rows, current)
    names = list(mod.CONFIGS) if args.configs == "all" else args.configs.split(",")
    gen = torch.Generator().manual_seed(0)
    cpu = torch.device("cpu")
    fr = __import__("fused_ref")

    def layout(batch):
        # A timing shape's layout (H 64, window 128 with lengths, extra 2048
        # with lengths, a sink): the specialisation the GPU run compiles.
        q = torch.randn(batch, 1, 64, 512, generator=gen).to(torch.bfloat16)
        _, k0, i0, l0 = fr.cache_inputs(64, 576, batch, 128, "full", gen, cpu, 1 << 12)
        _, k1, i1, l1 = fr.cache_inputs(64, 576, batch, 2048, "full", gen, cpu, 1 << 12)
        return (
            q,
            [(k0, i0, l0), (k1, i1.view(batch, 1, -1), l1)],
            torch.randn(64, generator=gen),
        )

    failed = 0
    for name in names:
        # The configurations only the B = 1 cells select are compiled at
        # B = 1 (their combine takes the 8-slice path there).
        batch = 1 if name in B1_ONLY else 16
        q, caches, sink = layout(batch)
        k1, i1, l1 = caches[1]
        current[:] = [name, f"h64_b{batch}_w128+e2048_len_sink"]
        try:
            fused_kernels(mod, name, q, caches, sink, rows)
        except (
            Exception
        ) as err:  # report and go on: one broken variant must not hide the rest
            rows.append(
                dict(
                    source="fused", config=name, case=current[1], error=repr(err)[:400]
                )
            )
        if not args.no_base and name in base.CONFIGS:
            current[1] = "shipped_topk2048_len"
            try:
                shipped_kernels(base, name, q, (k1, i1, l1), rows)
            except Exception as err:
                rows.append(
                    dict(
                        source="shipped",
                        config=name,
                        case=current[1],
                        error=repr(err)[:400],
                    )
                )
    for row in rows:
        bad = (
            "error" in row
            or row.get("spill")
            or row.get("check", "ok") != "ok"
            or not row.get("ptxas_ok", True)
        )
        failed += bool(bad)
        print(
            f"{row['source']:8s} {row['config']:24s} {row.get('kernel', ''):22s} "
            f"smem {row.get('smem', '-')!s:>7s} regs {row.get('regs', '-')!s:>4s} "
            f"spill {row.get('spill', '-')!s:>4s} {row.get('check', '')} {row.get('error', '')}"
            f"{'  FAIL' if bad else ''}",
            flush=True,
        )
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(
            {"triton": triton.__version__, "target": "sm_90", "rows": rows}, f, indent=1
        )
    print(f"{len(rows)} kernels, {failed} failed; wrote {args.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
