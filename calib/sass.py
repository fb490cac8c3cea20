"""Fingerprint the machine code of a kernel module's configurations (no GPU needed).

For every configuration of a module -- each entry of a bundle's CONFIGS, or
the one configuration of a standalone per-variant module (its BLOCK_H, ...
constants) -- this compiles the decode kernel, and the combine kernel where
the configuration launches one, for an explicit target with
``triton.compile(..., target=GPUTarget("cuda", cap, 32))`` and the arguments
specialised as Triton's JIT specialises them at run time (as
calib/calibrate.py compiles them), disassembles the cubin with the
``cuobjdump -sass`` that Triton ships, keeps the instruction text only (no
addresses, encodings or line information) and prints its line count and a
hash, beside the registers and shared memory.

Two modules whose configurations print the same hashes run the same
instructions: a template change that should not change the kernels (a
comment, a refactor of how they are generated) is proved that way.

    python3 calib/sass.py --cap 90 kernels/sm90/sparse_mla_mma.py
    python3 calib/sass.py --cap 120 --json now.json kernels/sm120/sparse_mla_mma.py
    python3 calib/sass.py --cap 90 --compare before.json after.json
    python3 calib/sass.py --cap 120 --whole-call kernels/sm120/sparse_mla_mma.py

Each configuration's kernels are compiled as its per-cache entry
(sparse_decode) runs them; --whole-call adds them as the whole-call entry
(sparse_decode_full) runs them, both caches and a sink (rows "decode/full",
"combine/.../full").
"""

import argparse
import hashlib
import importlib.util
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile

BIN = None  # Triton's nvidia/bin: tools() finds it unless a caller set it


def tools():
    """Triton's nvidia/bin (cuobjdump, ptxas), where BIN points if a caller
    set it, else where the installed Triton keeps it."""
    if BIN is not None:
        return BIN
    import triton

    return os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")


def load(path):
    spec = importlib.util.spec_from_file_location(
        "sass_" + os.path.basename(path)[:-3].replace(".", "_"), path
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def configs(module, path):
    """(name, tile) for every configuration the module can run.

    A bundle names them in CONFIGS; a standalone module (a per-variant one,
    or the SIMT baseline) is one configuration, named after its file, whose
    tile is in its module constants."""
    table = getattr(module, "CONFIGS", None)
    if table is not None:
        return [(name, tile_of(entry)) for name, entry in table.items()]
    name = os.path.basename(path)[:-3]
    if hasattr(module, "_simt_decode_kernel"):
        tile = {
            "family": "simt",
            "block_t": module.BLOCK_T,
            "num_warps": module.NUM_WARPS,
        }
        return [(name, tile)]
    ws = hasattr(module, "_ws_decode_kernel")
    pp = hasattr(module, "_pp_decode_kernel")
    tile = {
        "family": "ws" if ws else "pp" if pp else "mma",
        "block_h": module.BLOCK_H,
        "block_t": module.BLOCK_T,
        "split_k": module.SPLIT_K,
        "num_warps": module.NUM_WARPS,
        "num_stages": module.NUM_STAGES,
        "cluster_merge": ws and "CLUSTER_MERGE" in module._ws_decode_kernel.arg_names,
    }
    return [(name, tile)]


def tile_of(entry):
    """A CONFIGS entry as a dict: a named tuple (its fields), or the plain
    tuples (BLOCK_H, BLOCK_T, SPLIT_K, num_warps, num_stages[,
    warp-specialised, cluster merge]) that bundles held before."""
    if hasattr(entry, "_asdict"):
        return dict(entry._asdict())
    h, t, k, w, s, *rest = entry
    ws, cluster = (list(rest) + [False, False])[:2]
    return {
        "family": "ws" if ws else "mma",
        "block_h": h,
        "block_t": t,
        "split_k": k,
        "num_warps": w,
        "num_stages": s,
        "cluster_merge": cluster,
    }


def specialised(fn, sig):
    """What the JIT does at run time: pointers and ints divisible by 16 are
    marked so (every stride and page size is, for H = 64, topk 512/2048);
    parameters the kernel does not specialise are left alone."""
    skip = set(getattr(fn, "do_not_specialize", ()) or ())
    return {
        (i,): [["tt.divisibility", 16]]
        for i, n in enumerate(fn.arg_names)
        if sig[n] not in ("constexpr", "fp32")
        and not sig[n].startswith("tensordesc")
        and n not in skip
        and i not in skip
    }


def launch_options(module):
    """The options every launch of the module pins (its _LAUNCH_OPTIONS:
    FP fusion), none for a module from before it pinned any."""
    return dict(getattr(module, "_LAUNCH_OPTIONS", {}))


def decode_job(module, tile, cap, whole_call=False):
    """(kernel, signature, constexprs, options, Gluon?) of the decode kernel,
    as the per-cache entry launches it on a GPU of compute capability cap
    (90 for sm_90) or (whole_call) the whole-call one with both caches, both
    lengths and a sink.

    A new kernel family adds its kernel, constexprs and launch options here."""
    family = tile["family"]
    if family == "simt":
        fn = module._simt_decode_kernel
        constexprs = {"HAS_TOPK_LENGTH": True, "BLOCK_T": tile["block_t"]}
        options = {"num_warps": tile["num_warps"]}
    else:
        fn = {
            "ws": getattr(module, "_ws_decode_kernel", None),
            "pp": getattr(module, "_pp_decode_kernel", None),
        }.get(family) or module._mma_decode_kernel
        # The module says which kernel a pipelined configuration runs, and
        # with which launch options (_pp_program: the role-split tile's own).
        pp_program = getattr(module, "_pp_program", None)
        if family == "pp" and pp_program is not None:
            fn, pp_options = pp_program(module.Config(**tile))
        constexprs = {
            "HAS_TOPK_LENGTH": True,
            "BLOCK_H": tile["block_h"],
            "BLOCK_T": tile["block_t"],
            "SPLIT_K": tile["split_k"],
        }
        for flag in ("HAS_EXTRA", "HAS_TOPK_LENGTH1", "HAS_SINK"):
            if flag in fn.arg_names:
                constexprs[flag] = whole_call
        options = {"num_warps": tile["num_warps"], "num_stages": tile["num_stages"]}
    if family == "pp":
        # The pipelined kernel: 16 heads a warp down the heads, the other
        # warps across the token columns; stages are its K buffer sets.
        if pp_program is not None:
            options = dict(pp_options)
        else:
            # Modules from before _pp_program (lab copies of old commits).
            options = {"num_warps": tile["num_warps"]}
            if hasattr(module, "_PP_MAXNREG"):
                options["maxnreg"] = module._PP_MAXNREG
        constexprs["WARPS_N"] = options["num_warps"] // (tile["block_h"] // 16)
        constexprs["NUM_BUFS"] = tile["num_stages"]
        halves = tile["block_t"] == module._PP_HALVES_BLOCK_T
        constexprs["SUBTILES"] = 2 if halves else 1
        if hasattr(module, "_pp_q_reg_groups"):
            constexprs["Q_REG_GROUPS"] = module._pp_q_reg_groups(module.Config(**tile))
        if "PDL" in fn.arg_names:
            # As _pdl(device) says on that GPU: griddepcontrol from sm_90 on.
            constexprs["PDL"] = cap >= 90
    if family == "ws":
        # The Gluon kernel: stages are its K buffers, and it is launched at a
        # fixed register count that setmaxnreg divides between partitions.
        # The module says which kernel a configuration runs and with how many
        # warps in its default partition (_ws_program).
        warps = tile["num_warps"]
        program = getattr(module, "_ws_program", None)
        if program is not None:
            fn, warps = program(module.Config(**tile))
        constexprs["NUM_BUFS"] = tile["num_stages"]
        if "CLUSTER_MERGE" in fn.arg_names:
            constexprs["CLUSTER_MERGE"] = tile["cluster_merge"]
        options = {"num_warps": warps, "maxnreg": module._WS_MAXNREG}
    options.update(launch_options(module))
    sig = {}
    for name in fn.arg_names:
        if name in constexprs:
            sig[name] = "constexpr"
        elif name == "Q":
            sig[name] = "*bf16"
        elif name == "QDesc":
            # The TMA descriptor over Q's rows, as _q_descriptor builds it.
            box = f"bf16[{tile['block_h']}, 64]"
            sig[name] = f"tensordesc<{box},{module._Q_BOX_LAYOUT!r}>"
        elif name in ("KV", "KV1"):
            # Bytes where Triton has no fp8 e4m3 on the target (the module's _FP8).
            sig[name] = "*fp8e4nv" if getattr(module, "_FP8", True) else "*u8"
        elif name in ("Indices", "TopkLength", "Indices1", "TopkLength1"):
            sig[name] = "*i32"
        elif name == "Out":
            # The output, or the split-K partials: fp32 for the MMA kernel,
            # bf16 for the Gluon ones (as the launcher allocates).
            bf16 = family != "mma" or tile["split_k"] == 1
            sig[name] = "*bf16" if bf16 else "*fp32"
        elif name == "FinalOut":
            sig[name] = "*bf16"
        elif name in ("Lse", "FinalLse", "Sink"):
            sig[name] = "*fp32"
        elif name == "qk_scale":
            sig[name] = "fp32"
        else:
            sig[name] = "i32"
    return fn, sig, constexprs, options, family in ("ws", "pp")


def combine_jobs(module, tile, cap, whole_call=False):
    """The combine kernel launches of a configuration: none without split-K
    partials; the fp32 combine in both of its shapes (8 one-warp slices a
    (head, batch), or one 4-warp program); the bf16 one. whole_call: as the
    whole-call entry launches them, with a sink (labels end in /full)."""
    if tile["family"] == "simt":
        return []
    k = tile["split_k"]
    if k == 1 or tile["cluster_merge"]:
        return []
    bf16 = tile["family"] in ("ws", "pp")
    fn = module._combine_bf16_kernel if bf16 else module._combine_kernel
    base = {"SPLIT_K": k, "SPLIT_P2": 1 << (k - 1).bit_length(), "PDL": cap >= 90}
    if "HAS_SINK" in fn.arg_names:
        base["HAS_SINK"] = whole_call
    if bf16:
        # As _combine_bf16_launch launches it.
        shapes = [("combine", base, 2)]
        extra = {"maxnreg": module._COMBINE_BF16_MAXNREG}
    else:
        shapes = [
            ("combine/8", {**base, "DIM_BLOCK": 64}, 1),
            ("combine/1", {**base, "DIM_BLOCK": 512}, 4),
        ]
        extra = {}
    jobs = []
    for label, constexprs, warps in shapes:
        if whole_call:
            label += "/full"
        sig = {}
        for name in fn.arg_names:
            if name in constexprs:
                sig[name] = "constexpr"
            elif name == "Part":
                sig[name] = "*bf16" if bf16 else "*fp32"
            elif name == "Out":
                sig[name] = "*bf16"
            elif name in ("PartLse", "Lse", "Sink"):
                sig[name] = "*fp32"
            else:
                sig[name] = "i32"
        options = {"num_warps": warps, **extra, **launch_options(module)}
        jobs.append((label, fn, sig, constexprs, options, False))
    return jobs


def disassemble(cubin):
    """The SASS of a cubin as instruction text, one per line, and its
    resource usage (registers, local memory bytes) as cuobjdump reports it."""
    code, regs, local = disassemble_at(cubin)
    return [ins for _, ins in code], regs, local


def disassemble_at(cubin):
    """disassemble, each instruction with its address: (address, text)."""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.cubin")
        with open(p, "wb") as f:
            f.write(cubin)
        tool = os.path.join(tools(), "cuobjdump")
        sass = subprocess.run(
            [tool, "-sass", p], capture_output=True, text=True, check=True
        )
        res = subprocess.run(
            [tool, "-res-usage", p], capture_output=True, text=True, check=True
        )
    code = []
    for line in sass.stdout.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s*(.*?;)", line)
        if m:
            code.append((int(m.group(1), 16), " ".join(m.group(2).split())))
    regs = re.search(r"REG:(\d+)", res.stdout)
    local = re.search(r"LOCAL:(\d+)", res.stdout)
    return code, int(regs.group(1)), int(local.group(1))


def kernel_job(module, tile, cap, which):
    """(kernel, signature, constexprs, options, Gluon?) of one kernel of a
    configuration: the decode kernel ("decode"; "decode/full" as the whole
    call launches it) or one of combine_jobs' launches (by its label)."""
    full = which.endswith("/full")
    if which in ("decode", "decode/full"):
        return decode_job(module, tile, cap, full)
    found = [j for j in combine_jobs(module, tile, cap, full) if j[0] == which]
    return found[0][1:]


def kernel_source(module, tile, cap, which):
    """The source Triton compiles for one kernel of a configuration
    (kernel_job), and its options."""
    from triton.compiler import ASTSource
    from triton.experimental.gluon._runtime import GluonASTSource

    fn, sig, constexprs, options, gluon = kernel_job(module, tile, cap, which)
    source = GluonASTSource if gluon else ASTSource
    src = source(
        fn=fn, signature=sig, constexprs=constexprs, attrs=specialised(fn, sig)
    )
    return src, options


def fingerprint(job):
    """Compile one kernel of one configuration; its SASS line count and hash."""
    path, cap, name, tile, which = job
    import triton
    from triton.backends.compiler import GPUTarget

    module = load(path)
    src, options = kernel_source(module, tile, cap, which)
    row = {"config": name, "kernel": which}
    try:
        ck = triton.compile(src, target=GPUTarget("cuda", cap, 32), options=options)
    except Exception as e:  # report it; the comparison treats it as a difference
        return {**row, "error": str(e).splitlines()[0][:200]}
    lines, regs, local = disassemble(ck.asm["cubin"])
    text = "\n".join(lines) + "\n"
    return {
        **row,
        "lines": len(lines),
        "sha256": hashlib.sha256(text.encode()).hexdigest()[:16],
        "regs": regs,
        "local": local,
        "smem": ck.metadata.shared,
    }


def jobs_of(paths, cap, whole_call=False):
    jobs = []
    for path in paths:
        module = load(path)
        for name, tile in configs(module, path):
            jobs.append((path, cap, name, tile, "decode"))
            for which, *_ in combine_jobs(module, tile, cap):
                jobs.append((path, cap, name, tile, which))
            if not whole_call or tile["family"] == "simt":
                continue
            jobs.append((path, cap, name, tile, "decode/full"))
            for which, *_ in combine_jobs(module, tile, cap, True):
                jobs.append((path, cap, name, tile, which))
    return jobs


def compare(before, after):
    """Rows of after against before, by (config, kernel); 1 if any differs."""
    old = {(r["config"], r["kernel"]): r for r in before["rows"]}
    bad = 0
    for r in after["rows"]:
        o = old.get((r["config"], r["kernel"]))
        if o is None:
            verdict = "new (not in the first file)"
        elif "error" in r or "error" in o:
            verdict = "compile error"
        elif (o["sha256"], o["regs"], o["smem"]) == (r["sha256"], r["regs"], r["smem"]):
            verdict = "same"
        else:
            verdict = f"DIFFERS (was {o['lines']} lines {o['sha256']})"
        bad += verdict != "same"
        print(
            f"{r['config']:24s} {r['kernel']:10s} {r.get('sha256', '-'):16s} {verdict}"
        )
    missing = sorted(set(old) - {(r["config"], r["kernel"]) for r in after["rows"]})
    for config, kernel in missing:
        print(f"{config:24s} {kernel:10s} {'-':16s} only in the first file")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "modules", nargs="+", help="kernel modules (or two JSON files with --compare)"
    )
    ap.add_argument(
        "--cap", type=int, help="compute capability to compile for: 90, 120, ..."
    )
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--compare", action="store_true", help="compare two --json files")
    ap.add_argument(
        "--whole-call",
        action="store_true",
        help="also compile each configuration as the whole-call entry runs it",
    )
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    if args.compare:
        if len(args.modules) != 2:
            ap.error("--compare takes two JSON files")
        with open(args.modules[0]) as f, open(args.modules[1]) as g:
            return compare(json.load(f), json.load(g))
    if args.cap is None:
        ap.error("--cap is required")
    jobs = jobs_of(
        [os.path.abspath(p) for p in args.modules], args.cap, args.whole_call
    )
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        rows = pool.map(fingerprint, jobs, chunksize=1)
    for r in rows:
        if "error" in r:
            print(f"{r['config']:24s} {r['kernel']:10s} error: {r['error']}")
        else:
            print(
                f"{r['config']:24s} {r['kernel']:10s} {r['lines']:5d} lines "
                f"{r['sha256']}  {r['regs']:3d} regs {r['local']} B local {r['smem']:7d} B smem"
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"cap": args.cap, "modules": args.modules, "rows": rows}, f, indent=1
            )
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
