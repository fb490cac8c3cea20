"""Run an emitted harness under the Triton interpreter on the CPU (CI has no GPU).

Triton 3.6's interpreter multiplies bf16 dot operands as raw uint16 bits; this
wrapper upcasts them to fp32 first (exact for bf16).

It runs the configurations of the directory's sparse_mla_mma.py that take
distinct code paths, not all of them: the interpreter ignores num_warps and
num_stages, and the harness runs every configuration on the GPU. That is one
configuration per kernel family, head block (BLOCK_H < 64 loads a split's
indices early), split or not (SPLIT_K > 1 adds the partials and the combine
kernel) and cluster merge, among those the interpreter can run (Triton ones:
Gluon has none); plus the configuration the module's selection picks for
each case, and the SIMT baseline. The cases are the harness's tiny one
(topk_length given, 20 heads: a partial head block), one that takes the
other branches: no topk_length, and more than 128 (batch x heads) rows, the
combine kernel's one-slice launch, and 16 real heads padded to 64 with NaN
rows, as SGLang passes a rank's heads under tensor parallelism. --all runs every configuration.
Before the harness, it checks the whole call's plan hand-off on the host
(check_handoff: supports_full's plan goes to the sparse_decode_full made
right after it with the same objects, and to no other call), and that the
harness records a case a forced configuration refuses as declined, not as a
crash or a failure (check_declines), and where the roofline floor's peak
rates come from on GPUs listed, not listed, named with a qualifier their
row lacks and given by flags (check_peaks), that a write of the results
file stopped midway leaves the previous file whole and that no NaN reaches
it (check_results_file), that flag mistakes exit 2 before anything runs
(check_args), and that a whole-call shape out of GPU memory is declined
and the run goes on (check_out_of_memory); and, around the harness's own
run, that its file says "complete": false until the last section.

    TRITON_INTERPRET=1 python3 calib/interp.py kernels/sm90/harness.py [OUT.json] [--all]
"""

import argparse
import contextlib
import functools
import importlib.util
import io
import json
import math
import os
import sys
import tempfile
import types

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


def _patch_lang_once(patch_lang, executor):
    """Triton's interpreter patches the language modules a kernel's globals
    name (tl, tl.core: inspect.getmembers over each, its tensor and math)
    when a launch starts and restores them when it ends, and patches again
    on every call of a @triton.jit helper inside the launch, never restoring
    that: tl.sum, tl.max and the modules' own helpers, thousands of calls,
    more than half of an interpreter run here. Patching is idempotent (a
    patched member is no longer a builtin; the rest is set to equal
    functions), so within one launch a helper whose module was patched
    already (the same globals, so the same language modules) is skipped;
    the launch's own patch, and the first call of each other module in it,
    patch as Triton does."""
    patched = []  # the globals patched in the launch in progress

    def patch(fn):
        if any(g is fn.__globals__ for g in patched):
            return interpreter._LangPatchScope()  # a helper's: Triton drops it
        scope = patch_lang(fn)
        patched.append(fn.__globals__)
        return scope

    run = executor.__call__

    def launch(self, *args, **kwargs):
        patched.clear()
        try:
            return run(self, *args, **kwargs)
        finally:
            patched.clear()

    return patch, launch


# Where a release's interpreter is built otherwise, it runs as Triton ships it.
if all(
    hasattr(interpreter, name)
    for name in ("_patch_lang", "_LangPatchScope", "GridExecutor")
):
    interpreter._patch_lang, interpreter.GridExecutor.__call__ = _patch_lang_once(
        interpreter._patch_lang, interpreter.GridExecutor
    )

# The other branches: no topk_length, and 3 x 48 = 144 > 128 rows, where the
# combine kernel runs one program per (head, batch) instead of eight slices.
EXTRA_CASE = ("p64_h48_topk40", 64, 3, 48, 40, False)
# 16 real heads padded to 64 with NaN rows, as SGLang hands a rank's heads
# to the sm_120 path under tensor parallelism: no padded row may reach a
# real head (the harness checks the real ones).
PADDED_CASE = ("p64_h64_16real_topk40_len_tppadded", 64, 2, 64, 40, True, "tp_padded")


@contextlib.contextmanager
def stubbed(module, **names):
    """module's attributes replaced by names for the block, then restored."""
    saved = {k: getattr(module, k) for k in names}
    for k, v in names.items():
        setattr(module, k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(module, k, v)


def recorder(into, us):
    """A stand-in timer: runs the calls it is given once each, appends their
    results to into, and answers us."""

    def timer(calls, reps_ms):
        into.append([call() for call in calls])
        return us

    return timer


def check_handoff(harness, bundle):
    """supports_full() hands the plan it worked out to the sparse_decode_full()
    made right after it with the very same argument objects (SGLang's
    dispatcher), and to no other call: the number of failures. Host logic
    only: the launches are replaced by a recorder."""
    import torch

    gen = torch.Generator().manual_seed(1)
    cpu = torch.device("cpu")
    case = harness.whole_call_cases(True)[0]
    a, _ = harness.whole_call_inputs(case, gen, cpu)
    other = (case[0], case[1], case[2] + 1, *case[3:])
    b, _ = harness.whole_call_inputs(other, gen, cpu)
    built, ran = [], []
    full_plan, run_full = bundle._full_plan, bundle._run_full

    def counting_plan(*args):
        built.append(args[1])
        return full_plan(*args)

    bundle._full_plan = counting_plan
    bundle._run_full = lambda plan, q, *rest: ran.append((plan, q))
    failed = 0
    try:
        for name, asked, called, plans_built in (
            ("same objects", a, a, 1),
            ("another call", a, b, 2),
            ("equal copy of q", a, dict(a, q=a["q"].clone()), 2),
        ):
            built.clear()
            ran.clear()
            if not bundle.supports_full(**asked):
                failed += 1
                print(f"plan hand-off, {name}: supports_full refused FAIL")
                continue
            bundle.sparse_decode_full(**called)
            plan, q = ran[-1]
            right = (
                q is called["q"]
                and plan.batch == called["q"].shape[0]
                and len(built) == plans_built
                and not bundle._ASKED
            )
            failed += not right
            print(
                f"plan hand-off, {name}: {len(built)} plan lookups, batch {plan.batch} "
                f"{'ok' if right else 'FAIL'}"
            )
        built.clear()
        bundle.sparse_decode_full(**a)  # nothing asked: its own lookup
        right = len(built) == 1
        failed += not right
        print(
            f"plan hand-off, not asked: {len(built)} plan lookups "
            f"{'ok' if right else 'FAIL'}"
        )
    finally:
        bundle._full_plan, bundle._run_full = full_plan, run_full
    return failed


def check_declines(harness, bundle):
    """The harness's pass over forced configurations (run_runnables), given
    one that refuses every case (a selection name that is a peer's: the
    bundle's own refusal, raised as bundle.Refused, no kernel run), records
    each case in report["declined"] and counts no failure; any other
    exception still stops the pass; and the timing pass records the shape
    as declined, without a time. The number of failures."""

    import torch

    gen = torch.Generator().manual_seed(1)
    cpu = torch.device("cpu")
    cases = harness.correctness_cases(True)
    full = harness.whole_call_cases(True)
    report = {"correctness": [], "declined": []}
    refusing = {"peer:lab": harness.Configured(bundle, "peer:lab")}
    failed = harness.run_runnables(refusing, bundle, cases, full, gen, cpu, report)
    declined = report["declined"]
    right = (
        failed == 0
        and not report["correctness"]
        and len(declined) == len(cases) + len(full)
        and sorted({d["entry"] for d in declined}) == ["per cache", "whole call"]
        and all("gives this shape to lab" in d["declined"] for d in declined)
    )
    print(
        f"declined cases: {len(declined)} of {len(cases) + len(full)} recorded, "
        f"{failed} failures {'ok' if right else 'FAIL'}"
    )

    class Broken:
        def sparse_decode(self, *args):
            raise RuntimeError("a kernel that fails")

    try:
        harness.run_runnables(
            {"broken": Broken()}, bundle, cases[:1], [], gen, cpu, report
        )
        stopped = False
    except RuntimeError:
        stopped = True
    print(f"declined cases: another error stops the pass {'ok' if stopped else 'FAIL'}")

    # The timing pass: a declined row with no time, which `mlagen select`
    # skips (a time of 0 would win every bucket).
    timing = {"timing": [], "peaks": None}
    args = argparse.Namespace(
        heads="20", topks="40", batches="2", graph_max_batch=0, reps_ms=10, layers=0
    )
    # No GPU: no graphs to settle, and one call in place of do_bench's.
    with stubbed(
        harness,
        settle_graph_replay=lambda device: None,
        bench_us=lambda fn, reps_ms: fn() or 1.0,
    ):
        harness.run_timing(refusing, bundle, args, gen, cpu, timing, lambda: None)
    rows = timing["timing"]
    timed = (
        len(rows) == 1
        and "gives this shape to lab" in rows[0].get("declined", "")
        and "us" not in rows[0]
        and (rows[0]["heads"], rows[0]["batch"], rows[0]["topk"]) == (20, 2, 40)
    )
    print(
        f"declined cases: {len(rows)} timing row(s), "
        f"{'declined, no time' if timed else rows} {'ok' if timed else 'FAIL'}"
    )
    return (not right) + (not stopped) + (not timed)


def check_peaks(harness):
    """The number of failures of the roofline floor's rates, each printed:
    the KNOWN_GPUS row where there is one, the flags over it, the memory
    rate from the device's properties where there is none (the formula
    checked against a datasheet row, with the 10,501,000 kHz memory clock
    and 384-bit bus that CUDA's deviceQuery prints for an RTX 4090; not
    read from a card here), and the floor of one rate alone."""
    props = lambda name, khz, bits: types.SimpleNamespace(
        name=name, memory_clock_rate=khz, memory_bus_width=bits
    )
    flags = lambda gbps=None, tflops=None: argparse.Namespace(
        peak_gbps=gbps, peak_tflops=tflops
    )
    cuda = types.SimpleNamespace(type="cuda")
    peaks = lambda a, p: harness.gpu_peaks(a, cuda, p)
    rtx4090 = props("NVIDIA GeForce RTX 4090", 10501000, 384)
    unlisted = props("NVIDIA RTX PRO 4500 Blackwell", 14001000, 256)
    # One call: B 64, H 16, topk 2048.
    shape = (64, 16, 2048)
    _, flops, nbytes = harness.floor_us(*shape, None)
    floor = lambda p: harness.floor_us(*shape, p)[0]
    rates = lambda p: p and (p["gbps"], p["tflops"])
    failures = []

    def want(what, got, expected):
        if got != expected:
            failures.append(f"{what}: {got!r}, not {expected!r}")

    row = next(k for k in harness.KNOWN_GPUS if k[0] == "RTX 4090")
    derived = harness.peak_gbps_of(rtx4090)
    if abs(derived / row[1] - 1) > 1e-3:
        failures.append(f"RTX 4090 from its properties: {derived} GB/s, not {row[1]}")
    p = peaks(flags(), rtx4090)
    want("RTX 4090 rates", rates(p), (row[1], row[2]))
    want(
        "RTX 4090 floor (µs)",
        floor(p),
        max(flops / (row[2] * 1e12), nbytes / (row[1] * 1e9)) * 1e6,
    )
    p = peaks(flags(tflops=100.0), rtx4090)
    want("--peak-tflops over the row", rates(p), (row[1], 100.0))
    p = peaks(flags(), unlisted)
    want("unlisted GPU's rates", rates(p), (896.064, None))
    want("unlisted GPU's floor (µs)", floor(p), nbytes / 896.064e9 * 1e6)
    source = (p or {}).get("source", "")
    if "properties" not in source or "memory term alone" not in source:
        failures.append(f"unlisted GPU's source says {source!r}")
    p = peaks(flags(2000.0, 400.0), unlisted)
    want("both flags", rates(p), (2000.0, 400.0))
    p = peaks(flags(), props("NVIDIA GB10", 0, 0))
    want("GB10", rates(p), (273.0, None))
    # A qualifier the row lacks is another card: its own memory rate, no
    # compute term; the same qualifier-free names keep their row.
    pro = next(k for k in harness.KNOWN_GPUS if k[0] == "RTX PRO 6000")
    for name in (
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    ):
        want(name, rates(peaks(flags(), props(name, 0, 0))), (pro[1], pro[2]))
    for name in (
        "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
        "NVIDIA GeForce RTX 5090 Laptop GPU",
        "NVIDIA H100 NVL",
        "NVIDIA GH200 480GB",
    ):
        want(name, rates(peaks(flags(), props(name, 14001000, 256))), (896.064, None))
    want("no rate known", peaks(flags(), props("NVIDIA X", 0, 0)), None)
    want("floor without rates", floor(None), None)
    want(
        "a CPU run", harness.gpu_peaks(flags(), types.SimpleNamespace(type="cpu")), None
    )
    for f in failures:
        print(f"roofline floor: {f} FAIL")
    print(f"roofline floor rates: {'ok' if not failures else 'FAIL'}")
    return len(failures)


def check_results_file(harness):
    """The number of failures of the results file's writes, each printed: a
    write stopped midway (a KeyboardInterrupt inside json.dump, after part
    of the file is out) leaves the previous file as it was and nothing
    beside it; through a symbolic link the target is replaced, the link
    kept."""
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "results.json")
        harness.write_results(path, {"section": 1})

        def interrupted(obj, f, **kwargs):
            f.write('{"section": ')
            raise KeyboardInterrupt

        with stubbed(harness.json, dump=interrupted):
            try:
                harness.write_results(path, {"section": 2})
                failures.append("the interrupted write returned")
            except KeyboardInterrupt:
                pass
        with open(path) as f:
            kept = f.read()
        if kept != '{\n "section": 1\n}':
            failures.append(f"after an interrupted write the file holds {kept!r}")
        if os.listdir(folder) != ["results.json"]:
            failures.append(f"left beside it: {sorted(os.listdir(folder))}")
        # Its bytes reach the disk before the rename puts it in place.
        order = []
        sync, replace = os.fsync, os.replace

        def synced(fd):
            order.append("fsync")
            sync(fd)

        def replaced(src, dst):
            order.append("replace")
            replace(src, dst)

        with stubbed(harness.os, fsync=synced, replace=replaced):
            harness.write_results(path, {"section": 2})
        if order != ["fsync", "replace"]:
            failures.append(f"synced and renamed in the order {order}")
        # JSON has no NaN: a check of unwritten rows gives NaN or inf, and
        # mlagen select could not read a file that held one.
        harness.write_results(path, {"rel_err": math.nan, "lse": [1.5, -math.inf]})
        with open(path) as f:
            text = f.read()
        if json.loads(text) != {"rel_err": None, "lse": [1.5, None]}:
            failures.append(f"non-finite numbers written as {text!r}")
        link = os.path.join(folder, "link.json")
        os.symlink(path, link)
        harness.write_results(link, {"section": 3})
        with open(path) as f:
            through = json.load(f)
        if not os.path.islink(link) or through != {"section": 3}:
            failures.append(
                f"through a link: link kept {os.path.islink(link)}, target {through}"
            )
    for f in failures:
        print(f"results file: {f} FAIL")
    print(
        f"results file written whole or not at all: {'ok' if not failures else 'FAIL'}"
    )
    return len(failures)


def check_args(harness):
    """The number of failures of the harness's flag checks, each printed:
    every mistake below exits 2 from parse_args, before anything runs."""
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        for argv in (
            ["--batches", "0"],
            ["--heads", "abc"],
            ["--whole-batches", "16,0"],
            ["--extra-topks", "x"],
            ["--peak-gbps", "nan"],
            ["--peak-tflops", "-1"],
            ["--out", os.path.join(folder, "missing", "r.json")],
            ["--out", folder],
            ["--sglang", os.path.join(folder, "missing")],
            ["--peers", "flashmla,nope"],
            ["--device", "cuda:1"],
        ):
            try:
                with contextlib.redirect_stderr(io.StringIO()):
                    harness.parse_args(argv)
                failures.append(f"{argv} accepted")
            except SystemExit as e:
                if e.code != 2:
                    failures.append(f"{argv} exits {e.code}, not 2")
        # The control: good values pass.
        good = ["--out", os.path.join(folder, "r.json"), "--peers", "flashmla,file:x"]
        try:
            # An empty list times nothing of its kind: the device scripts'
            # warm-up runs pass one.
            harness.parse_args(good + ["--batches", "1,64", "--extra-topks", "0,512"])
            harness.parse_args(good + ["--batches", "", "--whole-batches", ""])
        except SystemExit as e:
            failures.append(f"{good} refused ({e.code})")
    for f in failures:
        print(f"harness flags: {f} FAIL")
    print(f"harness flag mistakes exit 2 up front: {'ok' if not failures else 'FAIL'}")
    return len(failures)


def check_out_of_memory(harness):
    """The number of failures of a whole-call shape that does not fit the
    GPU's memory, each printed: it is declined, saved, and the shapes after
    it still run (a prefill batch of 2048 with its float64 reference can
    exceed a card's memory)."""
    import torch

    made, timed, saves = [], [], []

    def whole_call_set(heads, batch, *rest):
        made.append(batch)
        if batch == 2048:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (stub)")
        return {"batch": batch}

    def time_shape(bundle, configs, peers, shape, sets, *rest):
        timed.append(shape["batch"])
        return [{"variant": "x", **shape, "us": 1.0}]

    args = argparse.Namespace(
        whole_heads="16",
        extra_topks="512",
        whole_batches="1,2048,16",
        window=128,
        layers=0,
        reps_ms=1,
    )
    report = {"peaks": None, "correctness": [], "timing": [], "declined": []}
    with stubbed(
        harness,
        whole_call_set=whole_call_set,
        time_whole_call_shape=time_shape,
        whole_call_table=lambda rows: "",
    ):
        harness.run_whole_call_timing(
            None, [], [], args, None, None, report, lambda: saves.append(1)
        )
    failures = []
    if timed != [1, 16]:
        failures.append(f"timed batches {timed}, not [1, 16]")
    declined = [(d["batch"], d["declined"][:20]) for d in report["declined"]]
    if declined != [(2048, "out of GPU memory at")]:
        failures.append(f"declined {declined}")
    if len(saves) != 3:
        failures.append(f"saved {len(saves)} times, not once a shape")
    for f in failures:
        print(f"out of memory: {f} FAIL")
    print(
        f"a shape out of GPU memory declined, the rest run: {'ok' if not failures else 'FAIL'}"
    )
    return len(failures)


def check_layers(harness):
    """The number of failures of the layer timing, each printed. With
    stand-ins for the CUDA graph and the timer, a graph of k calls replays
    in 5 + 3k µs (5 the graph's launch and the events): a call must add 3,
    the graphs must be of the first call and of all of them (each on its
    own inputs), and too few calls, --layers 1, and the sets a shape gets
    (one a layer at decode batches, the rotating ones beyond) are checked."""
    failures = []

    def want(what, got, expected):
        if got != expected:
            failures.append(f"{what}: {got!r}, not {expected!r}")

    captured = []

    def capture(calls):
        captured.append(list(calls))
        return len(calls)  # stands for the replay; bench reads its size

    with stubbed(
        harness,
        capture_graph=capture,
        bench_clean_us=lambda replay, reps_ms: 5.0 + 3.0 * replay,
    ):
        calls = [functools.partial(print, i) for i in range(8)]
        want("µs a call adds", harness.time_graph_layers(calls, 10), 3.0)
        want("graphs captured", captured, [calls[:1], calls])
        try:
            harness.time_graph_layers(calls[:1], 10)
            failures.append("one call was timed as layers")
        except ValueError:
            pass
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            harness.parse_args(["--layers", "1"])
            failures.append("--layers 1 was accepted")
        except SystemExit:
            pass
    args = harness.parse_args([])
    want("layers at B 128", harness.layers_of(args, 128), 8)
    want("layers past the decode batches", harness.layers_of(args, 4096), 0)
    want("sets for 8 layers", harness.input_sets(8), 8)
    want("sets without layers", harness.input_sets(0), harness.ROTATING_SETS)
    for f in failures:
        print(f"layer timing: {f} FAIL")
    print(f"layer timing: {'ok' if not failures else 'FAIL'}")
    return len(failures)


def check_layer_wiring(harness):
    """The number of failures of the layer timing's wiring, each printed: on
    stand-ins (a bundle, a configuration and peers that return their input
    set's number, timers that record what they run), the module's entry
    points and a peer are timed as layers on the first `layers` input sets,
    each once and in order, and the rotating timings on the first three;
    SGLang's slow Triton path, the one-kernel row and a configuration get
    no layer time, per cache and as the whole call."""
    import torch

    failures = []

    def want(what, got, expected):
        if got != expected:
            failures.append(f"{what}: {got!r}, not {expected!r}")

    class Bundle:
        Refused = RuntimeError

        def device_sms(self, device):
            return 132

        def select_full(self, heads, batch, tokens, sms):
            return "stand-in"

        def select(self, batch, tokens, heads, sms):
            return "stand-in"

        def supports_full(self, **kw):
            return True

        def sparse_decode_full(self, **kw):
            return kw["set"]

        def supports(self, *args):
            return False

        def sparse_decode(self, *args):
            raise AssertionError("the one kernel runs though supports refused")

    class Peer:
        def __init__(self, name):
            self.name = name

        def declines(self, kw):
            return None

        def prepare(self, kw):
            return lambda: kw["set"]

        def result(self, got, kw):
            return got

    class Entry(harness.EntryPoints):
        def __init__(self):
            pass

        def name(self, batch, topk, heads):
            return "stand-in"

        def sparse_decode(self, q, k_cache, indices, topk_length, scale):
            return q

    class Config:
        def sparse_decode(self, q, k_cache, indices, topk_length, scale):
            return q

    # The whole call: 8 input sets, layers of 4.
    q = torch.zeros(1, 1, 16, harness.HEAD_DIM)
    sets = [
        {"kw": {"set": i, "q": q}, "single": (q, None, None, None)} for i in range(8)
    ]
    shape = {"entry": "whole call", "heads": 16, "batch": 1, "topk": 640}
    rotated, layered = [], []
    with stubbed(
        harness,
        time_graph=recorder(rotated, 10.0),
        time_graph_layers=recorder(layered, 7.0),
        time_eager=lambda calls, reps_ms: 20.0,
        time_host=lambda calls: 5.0,
        whole_call_reference=lambda one: None,
        DEVICE=torch.device("cpu"),
    ):
        peers = [Peer("fast"), Peer("sglang-triton")]
        rows = harness.time_whole_call_shape(
            Bundle(), [], peers, shape, sets, None, 10, 4
        )
    by = {(r["impl"], r.get("entry")): r for r in rows}
    want(
        "whole call, rows",
        sorted(by),
        sorted(
            [
                ("mlagen", "whole call"),
                ("mlagen", "one kernel"),
                ("fast", "whole call"),
                ("sglang-triton", "whole call"),
            ]
        ),
    )
    want("whole call, sets as layers (mlagen, a peer)", layered, [[0, 1, 2, 3]] * 2)
    want("whole call, sets rotated (mlagen, both peers)", rotated, [[0, 1, 2]] * 3)
    for key, expected in (
        (("mlagen", "whole call"), 7.0),
        (("fast", "whole call"), 7.0),
        (("sglang-triton", "whole call"), None),
        (("mlagen", "one kernel"), None),
    ):
        want(
            f"whole call, {key[0]} {key[1]} layer_us", by[key].get("layer_us"), expected
        )

    # Per cache: the entry points as layers, a configuration not.
    per_cache = {"timing": [], "correctness": [], "peaks": None}
    args = harness.parse_args(
        ["--heads", "16", "--topks", "64", "--batches", "2", "--layers", "4"]
    )
    rotated, layered, counts = [], [], []

    def timing_sets(batch, topk, heads, gen, device, count):
        counts.append(count)
        return [(None, None, i, None, None) for i in range(count)]

    with stubbed(
        harness,
        time_graph=recorder(rotated, 10.0),
        time_eager=recorder(rotated, 20.0),
        time_graph_layers=recorder(layered, 7.0),
        timing_sets=timing_sets,
        settle_graph_replay=lambda device: None,
        timed_reference=lambda inputs, device: None,
        check_timed=lambda *a: {"passed": True, "rel_err": 0.0, "lse_err": 0.0},
    ), contextlib.redirect_stdout(io.StringIO()):
        modules = {"entry": Entry(), "config": Config()}
        harness.run_timing(modules, Bundle(), args, None, None, per_cache, lambda: None)
        # Configurations alone (--variants all): no layers, no sets for them.
        harness.run_timing(
            {"config": Config()},
            Bundle(),
            args,
            None,
            None,
            {"timing": [], "correctness": [], "peaks": None},
            lambda: None,
        )
    want(
        "per cache, sets made (entry points and a configuration; a configuration)",
        counts,
        [4, harness.ROTATING_SETS],
    )
    want("per cache, sets as layers (the entry points only)", layered, [[0, 1, 2, 3]])
    want("per cache, sets rotated (eager and graph, each)", rotated, [[0, 1, 2]] * 6)
    want(
        "per cache, layer_us",
        [r.get("layer_us") for r in per_cache["timing"]],
        [7.0, None],
    )
    for f in failures:
        print(f"layer wiring: {f} FAIL")
    print(f"layer wiring: {'ok' if not failures else 'FAIL'}")
    return len(failures)


def check_timed_shapes(harness):
    """The number of failures of the per-cache timing's own check, each
    printed: on a small shape timed with stand-in timers, a configuration
    that returns the float64 reference's result passes and one whose output
    is 1.5 times that fails, each row carrying its verdict, with a
    correctness row of its own ("timed h16 b2 topk64"), so that `mlagen
    select` never chooses a configuration wrong where it was timed, --no-check
    or not; where the float64 reference does not fit the GPU, the shape is
    timed unchecked (no verdict) and the run goes on."""
    import torch

    made = []
    timing_sets = harness.timing_sets

    def recording_sets(*a, **kw):
        sets = timing_sets(*a, **kw)
        made.extend(sets)
        return sets

    class Right:
        factor = 1.0

        def sparse_decode(self, q, k_cache, indices, topk_length, scale):
            buf = next(s[0] for s in made if s[1] is k_cache)
            out, lse = harness.reference(
                q, harness.dequantize(buf, 64), indices, topk_length, scale
            )
            return (out * self.factor).bfloat16(), lse.float()

    class Wrong(Right):
        factor = 1.5

    args = harness.parse_args(
        ["--heads", "16", "--topks", "64", "--batches", "2", "--layers", "0"]
    )

    def timed(modules, printed, **more):
        """run_timing's report of modules on the small shape, stand-in
        timers (and more stand-ins), on the CPU."""
        report = {"timing": [], "correctness": [], "peaks": None}
        with stubbed(
            harness,
            timing_sets=recording_sets,
            time_graph=lambda calls, reps_ms: 10.0,
            time_eager=lambda calls, reps_ms: 20.0,
            settle_graph_replay=lambda device: None,
            **more,
        ), contextlib.redirect_stdout(printed):
            harness.run_timing(
                modules,
                None,
                args,
                torch.Generator().manual_seed(3),
                torch.device("cpu"),
                report,
                lambda: None,
            )
        return report

    report = timed({"right": Right(), "wrong": Wrong()}, io.StringIO())

    # A reference that does not fit the GPU: timed unchecked, no verdict.
    def out_of_memory(*a):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory (stub)")

    printed = io.StringIO()
    unchecked = timed({"right": Right()}, printed, reference=out_of_memory)
    failures = []
    if (
        [("passed" in r, r.get("us")) for r in unchecked["timing"]] != [(False, 20.0)]
        or unchecked["correctness"]
        or "timed unchecked" not in printed.getvalue()
    ):
        failures.append(
            f"a reference out of memory: rows {unchecked['timing']}, correctness {unchecked['correctness']}"
        )
    got = [(r["variant"], r.get("passed")) for r in report["timing"]]
    if got != [("right", True), ("wrong", False)]:
        failures.append(f"timing rows' verdicts {got}")
    cases = [(r["variant"], r["case"], r["passed"]) for r in report["correctness"]]
    want = [
        ("right", "timed h16 b2 topk64", True),
        ("wrong", "timed h16 b2 topk64", False),
    ]
    if cases != want:
        failures.append(f"correctness rows {cases}, not {want}")
    for f in failures:
        print(f"timed shapes checked: {f} FAIL")
    print(f"timed shapes checked: {'ok' if not failures else 'FAIL'}")
    return len(failures)


def representatives(harness, bundle, cases):
    """The configurations that take distinct code paths under the
    interpreter, and those the selection picks for the cases, in CONFIGS
    order."""
    chosen = {bundle.select(case[2], case[4], case[3]) for case in cases}
    keys, names = set(), []
    for name, c in bundle.CONFIGS.items():
        if c.family in harness.GLUON_FAMILIES:
            continue
        key = (c.family, c.block_h, c.split_k > 1, c.cluster_merge)
        if key not in keys or name in chosen:
            keys.add(key)
            names.append(name)
    return names


if __name__ == "__main__":
    assert os.environ.get("TRITON_INTERPRET") == "1", "set TRITON_INTERPRET=1"
    args = [a for a in sys.argv[1:] if a != "--all"]
    path = args[0]
    spec = importlib.util.spec_from_file_location("harness", path)
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    out = args[1] if len(args) > 1 else os.devnull
    tiny_cases = harness.correctness_cases(True) + [EXTRA_CASE, PADDED_CASE]
    full_cases = harness.correctness_cases
    harness.correctness_cases = lambda tiny: tiny_cases if tiny else full_cases(tiny)
    # The peers have their own check (calib/peers_check.py).
    argv = ["--device", "cpu", "--tiny", "--peers", "none", "--out", out]
    bundle = harness.load_module(os.path.join(harness.HERE, harness.BUNDLE))
    if "--all" not in sys.argv:
        names = representatives(harness, bundle, tiny_cases)
        print(
            f"{len(names)} of {len(bundle.CONFIGS)} configurations: {', '.join(names)}"
        )
        argv += ["--variants", ",".join(names + [harness.SIMT])]
    failed = (
        check_handoff(harness, bundle)
        + check_declines(harness, bundle)
        + check_peaks(harness)
        + check_results_file(harness)
        + check_layers(harness)
        + check_layer_wiring(harness)
        + check_args(harness)
        + check_out_of_memory(harness)
        + check_timed_shapes(harness)
    )
    # The file says "complete": false until the last section is written.
    written = []
    write = harness.write_results

    def recording(path, report):
        written.append(report["complete"])
        write(path, report)

    harness.write_results = recording
    code = harness.main(argv)
    if not written or written[-1] is not True or False not in written:
        print(f'results file: "complete" written as {written} FAIL')
        failed += 1
    sys.exit(code or failed)
