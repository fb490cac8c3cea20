"""Compare mlagen's budget model with what the Triton compiler really allocates.

For every variant of a sweep (those mlagen accepts and those it refuses) this
compiles the decode kernel of the shipped module (sparse_mla_mma.py) for the
sweep's target with the variant's configuration, twice -- as the per-cache
entry launches it and as the whole call does (both caches, a sink): a
variant fits only if both do -- with an explicit GPUTarget --
no GPU needed -- and reads the shared memory Triton allocates
(CompiledKernel.metadata.shared) and the registers and spill bytes that
``ptxas -v`` reports (ptxas-blackwell for sm_100 and sm_120). Arguments are
specialised the way Triton's JIT specialises them at run time for H = 64 and
topk = 512/2048: 16-byte aligned pointers, strides divisible by 16 (calib/sass.py
builds the compile, for both tools). A refused variant is not in the module's
CONFIGS, but its family's kernel is, and it compiles with its configuration
all the same: that is how a refusal is checked.

The input (calib/<target>.budget.json, written by `go test ./gen -update`)
lists every variant with the model's prediction and its configuration as
the module's Config fields.

It fails (exit 1) when the model is wrong in a way that matters:
  * an accepted variant spills or exceeds the shared-memory limit;
  * a refused variant in fact fits without spilling;
  * predicted shared memory is below the compiler's, or more than 5% above it;
  * an accepted variant is not in the module's CONFIGS as its configuration;
  * with --code, a variant's machine code (a digest of its SASS, per cache
    and whole call) differs from the file's: the file names, variant by
    variant, what a template change did to the compiled code. The combine
    kernels the variants launch after their split-K partials are listed
    too, one line a kernel, shape and split count;
  * a combine kernel spills (or does not compile);
  * an entry's machine code has fewer L2 prefetches than its PTX asks for:
    ptxas may drop a prefetch (a hint) where registers are short, and did
    so for sm_120's whole call once (lab/wpf), which left the card running
    slower code than the sm_90 build a Hopper GPU times.

    python3 calib/calibrate.py --budget calib/sm90.budget.json \\
        --kernel kernels/sm90/sparse_mla_mma.py --json calib/sm90.json
"""

import argparse
import contextlib
import functools
import hashlib
import importlib.util
import inspect
import io
import json
import multiprocessing
import os
import re
import struct
import subprocess
import sys
import tempfile
import types

import triton
from triton.backends.compiler import GPUTarget
from triton.backends.nvidia.compiler import get_ptxas
from triton.compiler import ASTSource
from triton.experimental.gluon._runtime import GluonASTSource

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass import combine_jobs, decode_job, disassemble, specialised  # noqa: E402

SMEM_SLACK = 0.05


@functools.lru_cache(maxsize=None)
def load_kernel(path):
    # Once per worker process: every job of a sweep compiles the same module.
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


def ptxas_tool(cap):
    """The ptxas Triton itself runs for compute capability cap: which one
    changes between releases (3.9 moved sm_90 to ptxas-blackwell)."""
    return get_ptxas(cap).path


def ptxas_usage(ptx, cap, log=None):
    """Registers and spill bytes of the PTX as the target's ptxas reports them.

    log is the `ptxas -v` output of Triton's own compile of this PTX
    (compile_logged always has one: same ptxas, same flags). Without it
    ptxas is run here with `-v` alone, which is Triton 3.6's allocation:
    from 3.7 on Triton adds --regAllocOptLevel=2, which changes it
    (lab/ralloc compares the two)."""
    arch = re.search(r"^\.target\s+(\S+)", ptx, re.M).group(1)
    ptxas = ptxas_tool(cap)
    if log is None:
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "k.ptx")
            with open(p, "w") as f:
                f.write(ptx)
            log = subprocess.run(
                [
                    ptxas,
                    "-v",
                    f"--gpu-name={arch}",
                    p,
                    "-o",
                    os.path.join(d, "k.cubin"),
                ],
                capture_output=True,
                text=True,
            ).stderr
    regs = re.search(r"Used (\d+) registers", log)
    spill = re.search(r"(\d+) bytes spill stores", log)
    return {
        "regs": int(regs.group(1)) if regs else None,
        "spill": int(spill.group(1)) if spill else 0,
        "ptxas": os.path.basename(ptxas),
        "arch": arch,
    }


def compile_logged(src, cap, options):
    """triton.compile, and the `ptxas -v` log of Triton's own ptxas run.

    The compile never comes from Triton's cache, so Triton always runs
    ptxas -v on the PTX it makes, with the ptxas it chose (ptxas_tool) and
    the flags of this release: from 3.7 on those include
    --regAllocOptLevel=2, which a second ptxas run here would have to
    guess. A cached kernel once read as 36 B of spills what compiles to 80
    (lab/rs120 under 3.9.0). The log is None only where Triton printed
    none."""
    nvidia, compilation = triton.knobs.nvidia, triton.knobs.compilation
    saved = nvidia.dump_ptxas_log, compilation.always_compile
    nvidia.dump_ptxas_log, compilation.always_compile = True, True
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            ck = triton.compile(src, target=GPUTarget("cuda", cap, 32), options=options)
    finally:
        nvidia.dump_ptxas_log, compilation.always_compile = saved
    log = out.getvalue()
    return ck, (log if "Used " in log else None)


# Each L2 prefetch instruction a kernel's PTX may hold, and the SASS opcode
# ptxas makes of it on every target here.
PREFETCHES = (
    ("prefetch.global.L2", "CCTL.E.PF2"),
    ("cp.async.bulk.prefetch.L2", "UBLKPF.L2"),
)


def prefetch_counts(ptx, cubin):
    """{PTX instruction: [its count in the PTX, its SASS opcode's count]}
    for each of PREFETCHES the PTX holds ({} for none); the cubin is
    disassembled only where there is one."""
    lines = [x for x in ptx.splitlines() if not x.lstrip().startswith("//")]
    asked = {p: sum(p in x for x in lines) for p, _ in PREFETCHES}
    if not any(asked.values()):
        return {}
    code = disassemble(cubin)[0]
    return {
        p: [asked[p], sum(op in x for x in code)] for p, op in PREFETCHES if asked[p]
    }


def prefetch_lost(counts):
    """What an entry's machine code lost of its PTX's prefetches
    (prefetch_counts), or ""."""
    return "; ".join(
        f"ptxas kept {kept} of the {asked} `{p}` its PTX asks for"
        for p, (asked, kept) in counts.items()
        if kept < asked
    )


def compile_one(job):
    """What the compiler gives for one variant and entry: shared memory,
    registers, spills, ptxas (and the ws family's launch checks), or the
    error it stops with."""
    kernel_path, cap, name, fields, whole_call = job
    module = load_kernel(kernel_path)
    config = module.Config(**fields)
    tile = config._asdict()
    row = {}
    fn, sig, constexprs, options, gluon = decode_job(module, tile, cap, whole_call)
    source = GluonASTSource if gluon else ASTSource
    src = source(
        fn=fn, signature=sig, constexprs=constexprs, attrs=specialised(fn, sig)
    )
    try:
        ck, log = compile_logged(src, cap, options)
    except Exception as e:  # a variant the compiler rejects outright
        return {**row, "error": str(e).splitlines()[0][:200]}
    ptx = ck.asm["ptx"]
    row.update(smem=ck.metadata.shared, **ptxas_usage(ptx, cap, log))
    row["code"] = code_digest(ck.asm["cubin"])
    row["prefetches"] = prefetch_counts(ptx, ck.asm["cubin"])
    if config.family == "ws":
        row.update(ws_checks(module, config, ptx, ck.metadata.shared))
    return row


def combine_job_in(module, cap, fields, whole_call, label):
    """(kernel, signature, constexprs, options) of the launch labelled
    `label` among sass.combine_jobs' for a configuration's fields and entry,
    from `module` (load_kernel's, or keyed_kernel's for the memo key)."""
    tile = module.Config(**fields)._asdict()
    for lab, fn, sig, constexprs, options, _ in combine_jobs(
        module, tile, cap, whole_call
    ):
        if lab == label:
            return fn, sig, constexprs, options
    raise ValueError(f"no combine launch {label!r} for {fields}")


def compile_combine(job):
    """What the compiler gives for one combine launch job (bundle, cap,
    configuration fields, whole call?, label): registers, spills and the
    code digest, or the error it stops with."""
    bundle, cap = job[:2]
    fn, sig, constexprs, options = combine_job_in(load_kernel(bundle), *job[1:])
    src = ASTSource(
        fn=fn, signature=sig, constexprs=constexprs, attrs=specialised(fn, sig)
    )
    try:
        ck, log = compile_logged(src, cap, options)
    except Exception as e:
        return {"error": str(e).splitlines()[0][:200]}
    row = dict(smem=ck.metadata.shared, **ptxas_usage(ck.asm["ptx"], cap, log))
    row["code"] = code_digest(ck.asm["cubin"])
    row["prefetches"] = prefetch_counts(ck.asm["ptx"], ck.asm["cubin"])
    return row


def combine_launches(module, cap, fields):
    """The combine kernels a configuration launches: (line name, per-cache
    label, whole-call label) each. A name is the kernel, the fp32
    combine's shape (/8 for 8 one-warp slices a (head, batch), /1 for one
    4-warp program) and the split count, e.g. _combine_bf16_kernel:k4 or
    _combine_kernel/8:k2."""
    tile = module.Config(**fields)._asdict()
    per_cache, whole = (combine_jobs(module, tile, cap, w) for w in (False, True))
    return [
        (
            f"{fn.fn.__name__}{label.removeprefix('combine')}:k{cx['SPLIT_K']}",
            label,
            w[0],
        )
        for (label, fn, _, cx, _, _), w in zip(per_cache, whole)
    ]


def combine_plan(bundle, cap, budget):
    """The combine kernels the budget's variants launch, each one once:
    {name: (per-cache job, whole-call job)} in the budget's order. A job is
    (bundle, cap, the fields of the first variant that launches it, whole
    call?, label)."""
    module = load_kernel(bundle)
    plan = {}
    for b in budget["variants"]:
        for name, per_cache, whole in combine_launches(module, cap, b["config"]):
            plan.setdefault(
                name,
                (
                    (bundle, cap, b["config"], False, per_cache),
                    (bundle, cap, b["config"], True, whole),
                ),
            )
    return plan


def combine_names_of(module, cap, variants):
    """The combine lines the given variants' launches use."""
    return {
        name
        for v in variants
        if v in module.CONFIGS
        for name, _, _ in combine_launches(module, cap, module.CONFIGS[v]._asdict())
    }


def code_digest(cubin):
    """A digest of a compiled kernel's machine code: the bytes of the
    cubin's .text sections (the SASS), with their names (the kernel's).
    Debug locations live in other sections, and helpers are inlined, so a
    change that only moves source or shares, splits or renames helpers
    leaves it as it was, while any change to an instruction does not."""
    e_shoff, e_shentsize, e_shnum, e_shstrndx = (
        struct.unpack_from("<Q", cubin, 0x28)[0],
        *struct.unpack_from("<HHH", cubin, 0x3A),
    )
    headers = [
        struct.unpack_from("<IIQQQQIIQQ", cubin, e_shoff + i * e_shentsize)
        for i in range(e_shnum)
    ]
    names = headers[e_shstrndx]

    def name(h):
        start = names[4] + h[0]
        return cubin[start : cubin.index(b"\0", start)].decode()

    h = hashlib.sha256()
    texts = sorted((name(x), x) for x in headers if name(x).startswith(".text."))
    if not texts:
        raise ValueError("no .text section in the cubin")
    for n, x in texts:
        h.update(n.encode() + b"\0" + cubin[x[4] : x[4] + x[5]])
    return h.hexdigest()[:16]


# The host functions of the module whose answers compile_one records for the
# ws family (ws_checks): a change to them must invalidate memo rows too.
WS_HOST = ("_merges_in_shared_memory", "_dsmem_bytes", "_k_ring_error", "_ws_program")


@functools.lru_cache(maxsize=None)
def keyed_kernel(path):
    """The module as job_key reads it: a copy of its own whose @jit
    functions all start at line 0, so that Triton's cache key of a kernel
    (which adds the line each function starts at) does not change when
    lines above it move (a longer selection table) while no code does.
    Line numbers reach the compiled code only as debug locations."""
    spec = importlib.util.spec_from_file_location("calib_keyed", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for value in vars(module).values():
        if hasattr(value, "starting_line_number") and hasattr(value, "hash"):
            value.starting_line_number, value.hash = 0, None
    return module


def combine_key(job):
    """The memo key of one combine compile (as job_key's)."""
    bundle, cap, fields, whole_call, label = job
    load_kernel(bundle)
    fn, sig, constexprs, options = combine_job_in(
        keyed_kernel(bundle), cap, fields, whole_call, label
    )
    return compile_key(fn, sig, constexprs, options, cap, False, combine=label)


def job_key(job):
    """The memo key of one compile: everything triton.compile is given (the
    kernel as Triton's own cache key hashes it: its source, the sources of
    the functions it calls and the globals it reads; signature, constexprs,
    specialisation, options, target) and Triton's version, plus the source
    of the host checks the ws family's row records. Equal keys compile to
    the same code, so a memo row stands for a compile."""
    kernel_path, cap, name, fields, whole_call = job
    load_kernel(kernel_path)  # torch, or its stand-in
    module = keyed_kernel(kernel_path)
    tile = module.Config(**fields)._asdict()
    fn, sig, constexprs, options, gluon = decode_job(module, tile, cap, whole_call)
    extra = {}
    if tile["family"] == "ws":
        extra["host"] = [inspect.getsource(getattr(module, f)) for f in WS_HOST]
    return compile_key(fn, sig, constexprs, options, cap, gluon, **extra)


def compile_key(fn, sig, constexprs, options, cap, gluon, **extra):
    """The hash of one compile's inputs (fn as Triton's cache key hashes it,
    from keyed_kernel's copy) and Triton's version, plus extra."""
    parts = {
        "fn": fn.cache_key,
        "sig": sig,
        "constexprs": constexprs,
        "attrs": {str(k): v for k, v in specialised(fn, sig).items()},
        "options": options,
        "cap": cap,
        "gluon": gluon,
        "triton": triton.__version__,
        **extra,
    }
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def complete(row):
    """Whether a memo row has all compile_one (or compile_combine) records:
    a compile error, or the numbers, the code digest and the prefetch
    counts."""
    return row is not None and (
        "error" in row or ("code" in row and "prefetches" in row)
    )


def code_lines(budget, done, combines):
    """The --code file: a line a variant, its decode kernel's code digest
    as the per-cache entry and as the whole call compile it ("-" where the
    compiler refuses it); then a line a combine kernel the variants launch
    (combines: {name: (per-cache row, whole-call row)})."""
    lines = [
        f"# {budget['target']}: the machine code of every variant's decode kernel, "
        f"per cache and whole call, then of the combine kernels they launch "
        f"(calib/calibrate.py, Triton {triton.__version__}); "
        "'make calibrate-memo' rewrites this file"
    ]
    for i, b in enumerate(budget["variants"]):
        pair = [r.get("code", "-") for r in done[2 * i : 2 * i + 2]]
        lines.append(" ".join([b["variant"], *pair]))
    for name, pair in combines.items():
        lines.append(" ".join([name, *(r.get("code", "-") for r in pair)]))
    return "\n".join(lines) + "\n"


def tabled_variants(module):
    """The variants the module's entry points can run: those its selection
    tables choose and, where the entry points fit the split count to the
    GPU and the call, each one's split siblings (the module's own
    _SPLIT_SIBLINGS)."""
    names, stack = set(), [module.SELECTION, module.FULL_SELECTION]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            names.add(item)
        else:
            stack.extend(item)
    for name in list(names):
        names.update(module._SPLIT_SIBLINGS.get(name, {}).values())
    return names


def check_code(path, budget, done, combines, update, module=None):
    """Write the --code file (update), or compare it with this run's
    compiles: which variants' machine code differs, as a message ("" when
    none does, or without --code). A template change that alters a kernel
    shows here variant by variant; one that does not (a helper moved or
    shared) leaves the file as it was, so its timings still stand."""
    if not path:
        return ""
    text = code_lines(budget, done, combines)
    if update:
        with open(path, "w") as f:
            f.write(text)
        return ""
    try:
        with open(path) as f:
            old = f.read()
    except FileNotFoundError:
        return f"{path} does not exist; 'make calibrate-memo' writes it (commit it)"
    was = {l.split()[0]: l for l in old.splitlines()[1:] if l.strip()}
    now = {l.split()[0]: l for l in text.splitlines()[1:]}
    changed = sorted(v for v in was.keys() | now.keys() if was.get(v) != now.get(v))
    if not changed and old == text:
        return ""
    shown = ", ".join(changed[:8]) + (
        f" and {len(changed) - 8} more" if len(changed) > 8 else ""
    )
    message = (
        f"{path}: the machine code at {len(changed)} line(s) (a variant's "
        f"decode kernel, or a combine kernel) differs from the file's "
        f"({shown or 'its header'}). After a kernel template change, "
        "'make calibrate-memo' rewrites the file: commit it with the change"
    )
    if module is not None:
        run = tabled_variants(module)
        cap = int(budget["target"].split("_")[1])
        run |= combine_names_of(module, cap, run)
        tabled = sorted(set(changed) & run)
        if tabled:
            message += (
                f". The module's entry points run {len(tabled)} of them "
                f"({', '.join(tabled)}): their tables were timed on the old code, "
                "so time them again (gpu/selection_inputs.py) or say in NOTES.md "
                "why the change cannot move them"
            )
    return message


def code_check_fails(path, budget, done, combines):
    """Whether check_code can fail: the same compiles with one decode
    kernel's digest altered, or one combine kernel's, must be named ("" when
    they are, or without --code)."""
    at = [i for i, r in enumerate(done) if r and "code" in r]
    if not path or not at:
        return ""
    altered = list(done)
    altered[at[0]] = dict(done[at[0]], code="0" * 16)
    name = budget["variants"][at[0] // 2]["variant"]
    if name not in check_code(path, budget, altered, combines, False):
        return f"check_code did not notice {name}'s machine code changing"
    for name, (per_cache, whole) in combines.items():
        if "code" in whole:
            altered = dict(combines)
            altered[name] = (per_cache, dict(whole, code="0" * 16))
            if name not in check_code(path, budget, done, altered, False):
                return f"check_code did not notice {name}'s machine code changing"
            break
    return ""


def run_job(work):
    """One compile of the pool: (compile function, its job)."""
    fn, job = work
    return fn(job)


def combine_problems(combines):
    """The combine compiles that spill or fail, a line each: every split
    call runs one, so a spill there costs every such call."""
    problems = []
    for name, pair in combines.items():
        for entry, row in zip(ENTRIES, pair):
            if "error" in row:
                problems.append(f"{name} ({entry}): {row['error']}")
            elif row.get("spill"):
                problems.append(f"{name} ({entry}): {row['spill']} B spilled")
            elif lost := prefetch_lost(row.get("prefetches", {})):
                problems.append(f"{name} ({entry}): {lost}")
    return problems


def read_memo(path):
    """The memo's rows by key ({} when the file does not exist yet)."""
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        memo = json.load(f)
    return memo["rows"] if memo.get("triton") == triton.__version__ else {}


def write_memo(path, target, rows):
    with open(path, "w") as f:
        json.dump(
            {"target": target, "triton": triton.__version__, "rows": rows},
            f,
            indent=0,
            sort_keys=True,
        )
        f.write("\n")


# The two ways the module launches a decode kernel: the per-cache entry
# (sparse_decode) and the whole call (sparse_decode_full: both caches, their
# lengths and a sink), which selects between more code in the same kernel.
ENTRIES = ("per cache", "whole call")


def merge_entries(per_cache, whole_call):
    """One row from the compiles of a variant's two entries: the worst of
    their shared memory, registers and spills (each must fit for the
    variant to fit), each entry's own numbers under "entries"."""
    row = {k: v for k, v in per_cache.items() if k in ("in_configs",)}
    row["entries"] = {ENTRIES[0]: per_cache, ENTRIES[1]: whole_call}
    both = (per_cache, whole_call)
    errors = [r["error"] for r in both if "error" in r]
    if errors:
        row["error"] = errors[0]
        return row
    row["smem"] = max(r["smem"] for r in both)
    row["regs"] = max(r["regs"] or 0 for r in both)
    row["spill"] = max(r["spill"] for r in both)
    row["ptxas"], row["arch"] = per_cache["ptxas"], per_cache["arch"]
    for key in ("xchg", "k_ring"):
        found = [r[key] for r in both if key in r]
        if found:
            row[key] = found[0]
    return row


def ws_checks(module, config, ptx, shared):
    """The warp-specialised kernel's launch-time checks, run here on its
    compiled code so that a template change that breaks them fails CI
    instead of every call on the GPU."""
    row = {}
    if module._merges_in_shared_memory(config.split_k, config.cluster_merge):
        # The merge writes this much from the first byte of the kernel's
        # shared memory once the tile loop is over (the launcher refuses a
        # kernel with less): a template change that shrinks the buffers must
        # fail here, not on the GPU.
        row["xchg"] = module._dsmem_bytes(config.block_h)
    # The producer stores the K ring from byte 0 of shared memory, which the
    # launcher checks in the compiled PTX before every first launch.
    error = module._k_ring_error(
        ptx, shared, config.block_h, config.block_t, config.num_stages
    )
    if error:
        row["k_ring"] = error
    # And the check must be able to fail: the same PTX read for a ring twice
    # the size, and an empty PTX, are refused.
    for text, bufs in ((ptx, config.num_stages * 2), ("", config.num_stages)):
        if not module._k_ring_error(text, shared, config.block_h, config.block_t, bufs):
            row["k_ring"] = f"_k_ring_error accepts a {bufs}-buffer ring" + (
                " in an empty PTX" if not text else ""
            )
    return row


def judge(row, limit):
    compiled_fits = "error" not in row and row["spill"] == 0 and row["smem"] <= limit
    problems = []
    if row["fits"] and not row.get("in_configs"):
        problems.append(
            "accepted, but the module's CONFIGS does not hold it with this "
            "configuration: re-emit the module"
        )
    if not row["fits"] and "in_configs" in row:
        problems.append("refused, but the module's CONFIGS lists it")
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
    if row["fits"]:  # only what ships: a refused variant's kernel never runs
        for entry, r in row.get("entries", {}).items():
            lost = prefetch_lost(r.get("prefetches", {}))
            if lost:
                problems.append(f"{entry}: {lost}")
    if "error" not in row and row.get("xchg", 0) > row["smem"]:
        problems.append(
            f"the merge through distributed shared memory writes {row['xchg']} B, "
            f"more than the kernel's {row['smem']} B"
        )
    if "q_reg_groups" in row and row["q_reg_groups"] != row["pred_q_reg_groups"]:
        problems.append(
            f"the model counts {row['pred_q_reg_groups']} of Q's column groups in "
            f"registers, the module's _pp_q_reg_groups keeps {row['q_reg_groups']}"
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


def read_known(path):
    """The variants of a known-disagreements file (one per line, # comments)."""
    if not path:
        return set()
    with open(path) as f:
        return {line.split("#")[0].strip() for line in f} - {""}


def verdicts(budget, compiled, known, known_path, module=None):
    """The calibration rows, and how many disagreements fail the run. With
    the module, a pipelined variant's Q registers as the model counts them
    (q_reg_groups) are checked against what the module's kernel is given."""
    rows, bad = [], 0
    for b, c in zip(budget["variants"], compiled):
        row = {
            "variant": b["variant"],
            "fits": b["fits"],
            "pred_smem": b["smem_bytes"],
            "pred_regs": b["regs_per_thread_est"],
            **c,
        }
        if "q_reg_groups" in b and module is not None:
            row["pred_q_reg_groups"] = b["q_reg_groups"]
            row["q_reg_groups"] = module._pp_q_reg_groups(module.Config(**b["config"]))
        row["compiled_fits"], row["problems"] = judge(row, budget["smem_limit"])
        if row["problems"] and row["variant"] in known:
            row["problems"] = ["known: " + p for p in row["problems"]]
        elif row["variant"] in known:
            row["problems"] = [
                f"listed in {known_path}, but has no problem now: remove it"
            ]
            bad += 1
        else:
            bad += bool(row["problems"])
        rows.append(row)
    for name in sorted(known - {r["variant"] for r in rows}):
        print(f"{known_path} lists {name}, which is not in the sweep: remove it")
        bad += 1
    return rows, bad


def markdown(rows):
    lines = [
        f"| variant | mlagen | predicted smem | compiled smem | predicted regs | ptxas regs | spill B | compiler verdict | agreement |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['variant']} | {'fits' if r['fits'] else 'refused'} | {r['pred_smem']:,} | {r.get('smem', 0):,} | {r['pred_regs']} | {r.get('regs')} | {r.get('spill')} | "
            f"{'fits' if r['compiled_fits'] else 'does not fit'} | {'; '.join(r['problems']) or 'ok'} |"
        )
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--budget",
        required=True,
        help="the calibration input, calib/<target>.budget.json",
    )
    ap.add_argument(
        "--kernel",
        required=True,
        help="the emitted sparse_mla_mma.py whose kernels are compiled",
    )
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--markdown", help="write the calibration table here")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--memo",
        help="compiler results by compile key (calib/compiled/<target>.json): "
        "a compile whose key is there is not run again",
    )
    ap.add_argument(
        "--update-memo",
        action="store_true",
        help="rewrite --memo with this run's compiles (and only those)",
    )
    ap.add_argument(
        "--code",
        help="the file of every variant's code digests, per cache and whole "
        "call (calib/code-<target>.txt): checked against this run's compiles, "
        "rewritten with --update-memo",
    )
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
    bundle = os.path.abspath(args.kernel)
    jobs = [
        (bundle, cap, b["variant"], b["config"], whole_call)
        for b in budget["variants"]
        for whole_call in (False, True)
    ]
    # The combine kernels, each launch shape and split count once.
    plan = combine_plan(bundle, cap, budget)
    cjobs = [job for pair in plan.values() for job in pair]
    keys = [job_key(job) for job in jobs] + [combine_key(job) for job in cjobs]
    memo = read_memo(args.memo)
    # A row from before the memo kept code digests counts as missing.
    todo = [i for i, k in enumerate(keys) if not complete(memo.get(k))]
    done = [memo.get(k) for k in keys]
    if todo:
        work = [(compile_one, job) for job in jobs] + [
            (compile_combine, job) for job in cjobs
        ]
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            for i, row in zip(
                todo, pool.map(run_job, [work[i] for i in todo], chunksize=1)
            ):
                done[i] = row
    if args.memo and args.update_memo:
        write_memo(args.memo, budget["target"], dict(zip(keys, done)))
    done, cdone = done[: len(jobs)], done[len(jobs) :]
    combines = {name: tuple(cdone[2 * i : 2 * i + 2]) for i, name in enumerate(plan)}
    module = load_kernel(bundle)
    code_changed = check_code(
        args.code, budget, done, combines, args.update_memo, module
    )
    if not code_changed and not args.update_memo:
        code_changed = code_check_fails(args.code, budget, done, combines)
    combine_bad = combine_problems(combines)
    compiled = [merge_entries(*done[i : i + 2]) for i in range(0, len(done), 2)]
    for b, row in zip(budget["variants"], compiled):
        if b["variant"] in module.CONFIGS:
            row["in_configs"] = module.CONFIGS[b["variant"]] == module.Config(
                **b["config"]
            )
    rows, bad = verdicts(budget, compiled, read_known(args.known), args.known, module)
    table = markdown(rows)
    print(table)
    known = sum(
        1 for r in rows if r["problems"] and r["problems"][0].startswith("known: ")
    )
    reused = len(keys) - len(todo)
    # A problem is the budget model disagreeing with the compiler, or the
    # module with the sweep, or the compiled code with what it must keep:
    # the table's last column says which; the new ones are listed last.
    print(
        f"\n{budget['target']}: {len(rows)} variants compiled with Triton {triton.__version__} "
        f"({len(keys)} compiles: {len(todo)} run now, {reused} from {args.memo or 'no memo'}), "
        f"{bad} with a new problem, {known} with a known one ({args.known or 'no list'})"
    )
    print(
        f"{budget['target']}: {len(combines)} combine kernels (launch shape and split "
        f"count) compiled per cache and as the whole call, "
        f"{len(combine_bad)} spilling or failing"
    )
    for line in combine_bad:
        print("  " + line)
    for r in rows:
        if r["problems"] and not r["problems"][0].startswith("known: "):
            print(f"  {r['variant']}: {'; '.join(r['problems'])}")
    if code_changed:
        print(code_changed)
    if todo and args.memo and not args.update_memo:
        print(
            f"{len(todo)} compiles are not in {args.memo}: the kernels changed since it was "
            "written; 'make calibrate-memo' rewrites it (commit the result)"
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
    return 1 if bad or code_changed or combine_bad else 0


if __name__ == "__main__":
    sys.exit(main())
