"""Compare mlagen's budget model with what the Triton compiler really allocates.

For every variant of a sweep (those mlagen accepts and those it refuses) this
compiles the emitted MMA kernel for the sweep's target with an explicit
GPUTarget -- no GPU needed -- and reads the shared memory Triton allocates
(CompiledKernel.metadata.shared) and the registers and spill bytes that
``ptxas -v`` reports (ptxas-blackwell for sm_100 and sm_120). Arguments are
specialised the way Triton's JIT specialises them at run time for H = 64 and
topk = 512/2048: 16-byte aligned pointers, strides divisible by 16.

It fails (exit 1) when the model is wrong in a way that matters:
  * an accepted variant spills or exceeds the shared-memory limit;
  * a refused variant in fact fits without spilling;
  * predicted shared memory is below the compiler's, or more than 5% above it.

    python3 calib/calibrate.py --budget <(mlagen budget --target sm_90 --json) \\
        --kernel kernels/sm90/sparse_mla_mma.py --json calib/sm90.json
"""

import argparse
import functools
import glob
import importlib.util
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import types

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.experimental.gluon._runtime import GluonASTSource

SMEM_SLACK = 0.05


@functools.lru_cache(maxsize=None)
def load_kernel(path):
    # Once per worker process: every job of a sweep compiles the same kernel.
    # The module's launcher needs torch; its @triton.jit kernels do not, and
    # compiling them is all this does, so a bare stand-in lets the
    # calibration run where only Triton is installed.
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.modules["torch"] = types.ModuleType("torch")
    spec = importlib.util.spec_from_file_location("calib_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def signature(fn, v, q_box_layout):
    sig = {}
    for name in fn.arg_names:
        if name in (
            "HAS_TOPK_LENGTH",
            "BLOCK_H",
            "BLOCK_T",
            "SPLIT_K",
            "NUM_BUFS",
            "CLUSTER_MERGE",
        ):
            sig[name] = "constexpr"
        elif name == "Q":
            sig[name] = "*bf16"
        elif name == "QDesc":
            # The warp-specialised kernel's TMA descriptor over Q's rows, as
            # the emitted _q_descriptor builds it.
            sig[name] = f"tensordesc<bf16[{v['block_h']}, 64],{q_box_layout!r}>"
        elif name == "KV":
            sig[name] = "*fp8e4nv"
        elif name in ("Indices", "TopkLength"):
            sig[name] = "*i32"
        elif name == "Out":
            # The output, and the split-K partials: fp32 for the MMA kernel,
            # bf16 for the warp-specialised one (as the launcher allocates).
            bf16 = v["split_k"] == 1 or v["warp_specialized"]
            sig[name] = "*bf16" if bf16 else "*fp32"
        elif name == "FinalOut":
            # The warp-specialised kernel's merged output (cluster merge).
            sig[name] = "*bf16"
        elif name in ("Lse", "FinalLse"):
            sig[name] = "*fp32"
        elif name == "qk_scale":
            sig[name] = "fp32"
        else:
            sig[name] = "i32"
    return sig


def compile_one(job):
    kernel_path, cap, v = job
    ws = v["warp_specialized"]
    module = load_kernel(kernel_path)
    fn = module._ws_decode_kernel if ws else module._mma_decode_kernel
    sig = signature(fn, v, getattr(module, "_Q_BOX_LAYOUT", None))
    # What the JIT does at run time: pointers and ints divisible by 16 are
    # marked so (every stride and page size is, for H = 64, topk 512/2048).
    attrs = {
        (i,): [["tt.divisibility", 16]]
        for i, n in enumerate(fn.arg_names)
        if sig[n] not in ("constexpr", "fp32") and not sig[n].startswith("tensordesc")
    }
    constexprs = {
        "HAS_TOPK_LENGTH": True,
        "BLOCK_H": v["block_h"],
        "BLOCK_T": v["block_t"],
        "SPLIT_K": v["split_k"],
    }
    options = {"num_warps": v["num_warps"], "num_stages": v["num_stages"]}
    if ws:
        # The Gluon kernel: stages are its K buffers, and it is launched at
        # a fixed register count that setmaxnreg divides between partitions.
        constexprs["NUM_BUFS"] = v["num_stages"]
        constexprs["CLUSTER_MERGE"] = v["cluster_merge"]
        options = {"num_warps": v["num_warps"], "maxnreg": module._WS_MAXNREG}
    source = GluonASTSource if ws else ASTSource
    src = source(fn=fn, signature=sig, constexprs=constexprs, attrs=attrs)
    try:
        ck = triton.compile(src, target=GPUTarget("cuda", cap, 32), options=options)
    except Exception as e:  # a variant the compiler rejects outright
        return {**v, "error": str(e).splitlines()[0][:200]}
    ptx = ck.asm["ptx"]
    arch = re.search(r"^\.target\s+(\S+)", ptx, re.M).group(1)
    bindir = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    ptxas = os.path.join(bindir, "ptxas-blackwell" if cap >= 100 else "ptxas")
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx")
        with open(p, "w") as f:
            f.write(ptx)
        r = subprocess.run(
            [ptxas, "-v", f"--gpu-name={arch}", p, "-o", os.path.join(d, "k.cubin")],
            capture_output=True,
            text=True,
        )
    regs = re.search(r"Used (\d+) registers", r.stderr)
    spill = re.search(r"(\d+) bytes spill stores", r.stderr)
    row = {
        **v,
        "smem": ck.metadata.shared,
        "regs": int(regs.group(1)) if regs else None,
        "spill": int(spill.group(1)) if spill else 0,
        "ptxas": os.path.basename(ptxas),
        "arch": arch,
    }
    if ws and module._merges_in_shared_memory(v["split_k"], v["cluster_merge"]):
        # The merge writes this much from the first byte of the kernel's
        # shared memory once the tile loop is over (the launcher refuses a
        # kernel with less): a template change that shrinks the buffers must
        # fail here, not on the GPU.
        row["xchg"] = module._dsmem_bytes(v["block_h"])
    if ws:
        # The producer stores the K ring from byte 0 of shared memory, which
        # the launcher checks in the compiled PTX before every first launch:
        # check it here too, so a template change that moves the ring fails
        # CI instead of every call on the GPU.
        error = module._k_ring_error(
            ptx, ck.metadata.shared, v["block_h"], v["block_t"], v["num_stages"]
        )
        if error:
            row["k_ring"] = error
        # And the check must be able to fail: the same PTX read for a ring
        # twice the size, and an empty PTX, are refused.
        for text, bufs in ((ptx, v["num_stages"] * 2), ("", v["num_stages"])):
            if not module._k_ring_error(
                text, ck.metadata.shared, v["block_h"], v["block_t"], bufs
            ):
                row["k_ring"] = f"_k_ring_error accepts a {bufs}-buffer ring" + (
                    " in an empty PTX" if not text else ""
                )
    return row


def parse_name(name):
    m = re.fullmatch(r"(mma|ws|wsc)_h(\d+)_t(\d+)_k(\d+)_w(\d+)_s(\d+)", name)
    h, t, k, w, s = map(int, m.groups()[1:])
    return {
        "block_h": h,
        "block_t": t,
        "split_k": k,
        "num_warps": w,
        "num_stages": s,
        "warp_specialized": m.group(1) != "mma",
        "cluster_merge": m.group(1) == "wsc",
    }


def kernel_file(bundle, variant, bundle_has_ws):
    """The module to compile a variant from: the bundle, or for a warp-specialised
    variant the bundle does not carry, its own emitted module beside it."""
    if not variant.startswith(("ws_", "wsc_")) or bundle_has_ws:
        return bundle
    own = os.path.join(os.path.dirname(bundle), variant + ".py")
    if os.path.exists(own):
        return own
    others = sorted(glob.glob(os.path.join(os.path.dirname(bundle), "ws_*.py")))
    if not others:
        sys.exit(f"{variant}: no module with _ws_decode_kernel beside {bundle}")
    return others[0]


def judge(row, limit):
    compiled_fits = "error" not in row and row["spill"] == 0 and row["smem"] <= limit
    problems = []
    if row["fits"] and not compiled_fits:
        problems.append(
            "accepted but the compiler "
            + (
                "fails"
                if "error" in row
                else f"needs {row['smem']} B smem / spills {row['spill']} B"
            )
        )
    if not row["fits"] and compiled_fits:
        problems.append("refused but compiles within limits without spills")
    if "k_ring" in row:
        problems.append(row["k_ring"])
    if "error" not in row and row.get("xchg", 0) > row["smem"]:
        problems.append(
            f"the merge through distributed shared memory writes {row['xchg']} B, "
            f"more than the kernel's {row['smem']} B"
        )
    if "error" not in row:
        if row["pred_smem"] < row["smem"]:
            problems.append(
                f"smem predicted {row['pred_smem']} < compiled {row['smem']}"
            )
        elif row["pred_smem"] > row["smem"] * (1 + SMEM_SLACK):
            problems.append(
                f"smem predicted {row['pred_smem']} > compiled {row['smem']} + 5%"
            )
    return compiled_fits, problems


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--budget", required=True, help="output of mlagen budget --json")
    ap.add_argument(
        "--kernel",
        required=True,
        help="the emitted sparse_mla_mma.py (warp-specialised variants it lacks "
        "are compiled from their own modules beside it)",
    )
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--markdown", help="write the calibration table here")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--known",
        help="file of known disagreements (variant per line, # comments): "
        "these are reported but do not fail; one that no longer occurs fails, "
        "so the list stays current",
    )
    args = ap.parse_args()
    with open(args.budget) as f:
        budget = json.load(f)
    cap = int(budget["target"].split("_")[1])
    limit = budget["variants"][0]["smem_limit"]
    bundle = os.path.abspath(args.kernel)
    with open(bundle) as f:
        bundle_has_ws = "def _ws_decode_kernel(" in f.read()
    jobs = [
        (
            kernel_file(bundle, b["variant"], bundle_has_ws),
            cap,
            parse_name(b["variant"]),
        )
        for b in budget["variants"]
    ]
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        compiled = pool.map(compile_one, jobs)
    known = set()
    if args.known:
        with open(args.known) as f:
            known = {line.split("#")[0].strip() for line in f} - {""}
    rows, bad = [], 0
    for b, c in zip(budget["variants"], compiled):
        row = {
            "variant": b["variant"],
            "fits": b["fits"],
            "pred_smem": b["smem_bytes"],
            "pred_regs": b["regs_per_thread_est"],
            **c,
        }
        row["compiled_fits"], row["problems"] = judge(row, limit)
        if row["problems"] and row["variant"] in known:
            row["problems"] = ["known: " + p for p in row["problems"]]
        elif row["variant"] in known:
            row["problems"] = [
                f"listed in {args.known} but the model now agrees: remove it"
            ]
            bad += 1
        else:
            bad += bool(row["problems"])
        rows.append(row)
    for name in sorted(known - {r["variant"] for r in rows}):
        print(f"{args.known} lists {name}, which is not in the sweep: remove it")
        bad += 1
    lines = [
        f"| variant | mlagen | predicted smem | compiled smem | predicted regs | ptxas regs | spill B | compiler verdict | agreement |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['variant']} | {'fits' if r['fits'] else 'refused'} | {r['pred_smem']:,} | {r.get('smem', 0):,} | {r['pred_regs']} | {r.get('regs')} | {r.get('spill')} | "
            f"{'fits' if r['compiled_fits'] else 'does not fit'} | {'; '.join(r['problems']) or 'ok'} |"
        )
    table = "\n".join(lines)
    print(table)
    print(
        f"\n{budget['target']}: {len(rows)} variants compiled with Triton {triton.__version__}, "
        f"{sum(1 for r in rows if r['problems'] and r['problems'][0].startswith('known: '))} known and {bad} new disagreement(s) with the budget model"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "target": budget["target"],
                    "triton": triton.__version__,
                    "rows": rows,
                },
                f,
                indent=1,
            )
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
