"""Compile every kernel of the shipped modules with the Triton this runs on.

The budget model is calibrated against Triton 3.6.0 (calib/calibrate.py), but
SGLang pins torch and torch pins Triton: SGLang 0.5.13 to 0.5.17 install
torch 2.11 and Triton 3.6.0, 0.5.18 to 0.5.21 torch 2.13 and Triton 3.7.1,
0.5.22 and 0.5.23 torch 2.14.1 and Triton 3.8.0, and torch 2.15 (no SGLang
pins it yet) requires Triton 3.9.0. A module that `mlagen patch` installs
must compile with each of them. Gluon, which the pipelined and
warp-specialised families are written in, is experimental and changes
between releases (Triton 3.7 renamed `thread_barrier` to `barrier`, 3.9
removed `tma.async_copy_global_to_shared`), and the same kernel can take
other registers under another release.

For each module folder this compiles, for the module's target and without a
GPU, as calibrate.py compiles (calib/sass.py's specialisation, ptxas -v from
the running Triton):
  * every kernel of CONFIGS (family, head and token tile, warps, stages,
    cluster merge) at its smallest split count, and at its smallest above
    one where that is one (a split call stores partials: another path), as
    the per-cache entry and as the whole call launch it;
  * the combine kernel of each family's smallest split count above one, in
    each shape its entry points launch;
and runs the module's own check of each warp-specialised decode kernel
before its first launch (_compile_error: its hand-written shared-memory
stores assume where Triton put the buffers, which the check reads from the
PTX, whose spelling changes between releases). A refusal fails as a
compile error would: on the GPU that launch would raise.
Every compile is Triton's own, ptxas included (compile_logged never takes
a kernel from Triton's cache), so that the registers are those of its
ptxas run: from 3.7 on Triton passes ptxas --regAllocOptLevel=2, which
changes the allocation, and a ptxas run of our own without it would report
another. The workers share an empty cache of their own, which keeps these
compiles out of the user's. It prints one line a compile (target,
configuration, kernel, shared memory, registers, spill bytes and, where
the PTX asks for L2 prefetches, how many of them ptxas kept; or the
error) and exits 1 when a compile fails or needs more shared memory than
the target has (calib/<dir>.budget.json's limit): a launch that would fail
on the GPU. Spills and dropped prefetches are reported, not refused: the
variants were chosen on 3.6.0 (where calibrate.py refuses both), and what
either costs under another release is for a GPU to say.
`make versions` holds the output to calib/triton-<version>.txt, so that a
template change that moves a kernel under another release shows as a
diff.

The compiler's answers are memoised as calibrate.py's are, in
calib/compiled/triton-<version>.json, by a key of everything the compile is
given (the kernel as Triton's cache key hashes it, signature, constexprs,
options, target, Triton's version): a run compiles only what the memo lacks
(a kernel changed), and --update-memo rewrites it with this run's rows.

    python3 calib/versions.py [--memo FILE [--update-memo]] kernels/sm80 ... > calib/triton-3.8.0.txt
"""

import argparse
import inspect
import json
import multiprocessing
import os
import shutil
import sys
import tempfile

import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from calibrate import (  # noqa: E402
    WS_HOST,
    compile_key,
    compile_logged,
    keyed_kernel,
    load_kernel,
    prefetch_counts,
    prefetch_lost,
    ptxas_usage,
    read_memo,
    write_memo,
)
from sass import combine_jobs, kernel_job, kernel_source  # noqa: E402


def jobs_of(folder):
    """(path, cap, config name, kernel label) for every compile of a module."""
    path = os.path.join(folder, "sparse_mla_mma.py")
    module = load_kernel(path)
    cap = int(module.TARGET.removeprefix("sm_"))
    by_split = sorted(module.CONFIGS.items(), key=lambda kv: kv[1].split_k)
    jobs, kernels, combines = [], set(), set()
    for name, config in by_split:
        # One kernel is every field but the split count; a split call
        # (partials) takes another path through it.
        key = (config._replace(split_k=0), config.split_k > 1)
        if key not in kernels:
            kernels.add(key)
            jobs += [(path, cap, name, "decode"), (path, cap, name, "decode/full")]
        tile = config._asdict()
        family = "bf16" if config.family in ("ws", "pp") else "fp32"
        if config.split_k > 1 and family not in combines:
            launches = combine_jobs(module, tile, cap) + combine_jobs(
                module, tile, cap, True
            )
            if launches:
                combines.add(family)
                jobs += [(path, cap, name, label) for label, *_ in launches]
    return jobs


# The code a memo row of a warp-specialised decode kernel depends on
# besides the kernel: the module's check of the compiled kernel before its
# first launch and what it calls (calibrate.py's WS_HOST).
LAUNCH_CHECKS = ("_compile_error",) + WS_HOST


def checked(module, name, which):
    """The module's check of this compile before its first launch, or None:
    the warp-specialised decode kernels' (their hand-written shared-memory
    stores assume where Triton put the buffers, which the check reads from
    the PTX, whose spelling changes between releases)."""
    if module.CONFIGS[name].family != "ws" or not which.startswith("decode"):
        return None
    return getattr(module, "_compile_error", None)


def job_key(job):
    """The memo key of one compile (calibrate.job_key's, for any kernel of a
    configuration, with the code of the module's check of it where it has
    one): equal keys compile to the same code, judged the same way."""
    path, cap, name, which = job
    load_kernel(path)  # torch, or its stand-in
    module = keyed_kernel(path)
    tile = module.CONFIGS[name]._asdict()
    fn, sig, constexprs, options, gluon = kernel_job(module, tile, cap, which)
    extra = {}
    if checked(module, name, which) is not None:
        extra["host"] = [inspect.getsource(getattr(module, n)) for n in LAUNCH_CHECKS]
    return compile_key(fn, sig, constexprs, options, cap, gluon, **extra)


def compile_one(job):
    """One compile: its shared memory (None for an error), its line and its
    L2 prefetch counts (calibrate.prefetch_counts; {} for an error)."""
    path, cap, name, which = job
    module = load_kernel(path)
    src, options = kernel_source(module, module.CONFIGS[name]._asdict(), cap, which)
    head = f"{module.TARGET} {name} {which}"
    try:
        ck, log = compile_logged(src, cap, options)
    except Exception as e:  # the line says what the compiler stopped at
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        return None, f"{head} error: {lines[-1] if lines else type(e).__name__}", {}
    if log is None:  # never: compile_logged always runs Triton's ptxas
        return None, f"{head} error: Triton printed no ptxas log", {}
    check = checked(module, name, which)
    if check is not None:
        config = module.CONFIGS[name]
        constexprs = kernel_job(module, config._asdict(), cap, which)[2]
        # As the launch passes them (_ws_launches: CLUSTER_MERGE always).
        error = check(ck, dict(constexprs, CLUSTER_MERGE=config.cluster_merge))
        if error:
            return None, f"{head} refused by the module's check: {error}", {}
    usage = ptxas_usage(ck.asm["ptx"], cap, log)
    smem = ck.metadata.shared
    line = f"{head} smem {smem} regs {usage['regs']} spill {usage['spill']}"
    # The L2 prefetches ptxas kept of those the PTX asks for (a hint it
    # may drop where registers are short): the kernels were timed with
    # them, so the file shows a release or a template change losing one.
    counts = prefetch_counts(ck.asm["ptx"], ck.asm["cubin"])
    for p, (asked, kept) in counts.items():
        line += f" {p} kept {kept}/{asked}"
    return smem, line, counts


def complete(row):
    """Whether a memo row is this script's: a compile error, or a compile
    with its L2 prefetch counts."""
    return row is not None and (row["smem"] is None or "prefetches" in row)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="+", help="kernel folders (kernels/sm90, ...)")
    ap.add_argument(
        "--memo", help="the memo of compiles (calib/compiled/triton-V.json)"
    )
    ap.add_argument("--update-memo", action="store_true", help="rewrite the memo")
    args = ap.parse_args(argv)
    folders = args.folders
    limits, jobs = {}, []
    for folder in folders:
        budget = os.path.join(
            os.path.dirname(os.path.abspath(__file__)),
            os.path.basename(os.path.normpath(folder)) + ".budget.json",
        )
        with open(budget) as f:
            b = json.load(f)
        limits[b["target"]] = b["smem_limit"]
        jobs += jobs_of(folder)
    memo = read_memo(args.memo)
    keys = [job_key(job) for job in jobs]
    # A row from before the lines counted prefetches counts as missing.
    todo = [i for i, k in enumerate(keys) if not complete(memo.get(k))]
    fresh = []
    if todo:
        # An empty cache for the workers (they inherit the environment).
        cache = tempfile.mkdtemp(prefix="mlagen-versions-")
        os.environ["TRITON_CACHE_DIR"] = cache
        try:
            with multiprocessing.get_context("spawn").Pool(os.cpu_count() or 1) as pool:
                fresh = pool.map(compile_one, [jobs[i] for i in todo], chunksize=1)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    for i, (smem, line, counts) in zip(todo, fresh):
        memo[keys[i]] = {"smem": smem, "line": line, "prefetches": counts}
    # (target, shared memory or None for an error, the line, the prefetch
    # counts), in job order.
    results = [
        (
            memo[k]["line"].split()[0],
            memo[k]["smem"],
            memo[k]["line"],
            memo[k].get("prefetches", {}),
        )
        for k in keys
    ]
    if args.update_memo:
        write_memo(args.memo, "all", {k: memo[k] for k in keys})
    elif todo and args.memo:
        print(
            f"{len(todo)} of {len(jobs)} compiles are not in {args.memo}: the kernels "
            "changed since it was written; 'make versions-golden' rewrites it",
            file=sys.stderr,
        )
    print(
        f"# Triton {triton.__version__}: calib/versions.py {' '.join(folders)}"
        " ('make versions-golden' rewrites this file)"
    )
    failed, dropped = 0, 0
    for target, smem, line, counts in results:
        if smem is None:
            failed += 1
        elif smem > limits[target]:
            failed += 1
            line += f" over the {limits[target]} B limit"
        dropped += bool(prefetch_lost(counts))
        print(line)
    if dropped:
        # Reported, not refused, as spills are: what the hint is worth
        # under another release is for a GPU to say.
        print(
            f"{dropped} compile(s) kept fewer L2 prefetches than their PTX asks for",
            file=sys.stderr,
        )
    if failed:
        print(
            f"{failed} compile(s) failed or exceed the target's shared memory",
            file=sys.stderr,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
