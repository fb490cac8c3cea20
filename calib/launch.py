"""Check on the CPU that every launch of a kernel module reaches the C
launcher of the Triton this runs with in the argument order and with the
arguments that launcher parses (no GPU needed).

After a kernel's first call the module launches it through Triton's C
launcher directly (_Kernel.launch, _raw_launcher), skipping Triton's Python
wrapper: a few microseconds of host time a launch. That launcher's
arguments are Triton's internals, and they changed: Triton 3.6 builds one
launcher a kernel, whose arguments start "grid, stream, function, flags,
scratch, packed metadata, hooks"; from 3.7 one launcher serves every kernel
and takes "grid, stream, function, flags, packed metadata, hooks, scratch,
annotations, signature, arguments". A module that passed 3.6's order to
3.7's launcher would fail on every call after the first, and nothing
without a GPU would run that code.

So this builds, for every configuration, both entries and 16 and 64 heads,
each plan from the harness's CPU inputs (as calib/plans.py does) and, for
each of its launches, Triton's own launcher object (the release's
CudaLauncher, built from the launch's signature as the JIT would) over a
stand-in for the compiled C function: a check of the argument tuple
against the format that function parses, taken from the release itself
(3.6: the launcher's C source Triton generates for the kernel; 3.7 on: its
driver.c). Each launch then runs four ways:

  * the first call's way: Triton's Python launcher, with tensors and the
    TMA descriptor object (_first_launch);
  * the later calls' way: the C function directly (launch(), _raw_launcher),
    which must be the way the module takes on every release it lists in
    _LAUNCHER_CHECKED;
  * the later calls' way where that is unavailable: Triton's Python
    launcher with addresses (launch() with no raw launcher);
  * the later calls' way under a release the module does not list, which
    must be that one too.

All four must parse, and reach the launcher with the same kernel
arguments (tensors as their addresses, TMA descriptors as what was filled
into them). A kernel with a TMA descriptor argument (the sm_90 module's
warp-specialised kernels) is compiled once for its target to take its
descriptor's metadata from the compiler, as the GPU would.

    python3 calib/launch.py kernels/sm90 [kernels/sm120 ...]
"""

import contextlib
import os
import re
import sys
import types

import torch
import triton
from plans import calls, differs  # calib/, the script's own folder, is on sys.path
from qdesc import load_harness
from sass import combine_jobs, decode_job, kernel_source

from triton.backends.compiler import GPUTarget
from triton.backends.nvidia import driver as nvdriver

# What the CPU's plans are built for (calib/plans.py): no griddepcontrol.
CPU_CAP = 80
# The format a C launcher parses its arguments with: in the source Triton
# 3.6 generates for each kernel, in driver.c's launch from 3.7 on.
LAUNCH_FORMAT = re.compile(r'PyArg_ParseTuple\(args,\s*\\?"(iii[^"\\]*)\\?"')


class Tma:
    """What the stand-in driver fills a TMA descriptor with: the fill's
    arguments, so that two launches can be compared."""

    def __init__(self, name, args):
        self.key = (name,) + tuple(_plain(a) for a in args)

    def __eq__(self, other):
        return isinstance(other, Tma) and self.key == other.key

    def __repr__(self):
        return f"Tma{self.key}"


class Signature(bytes):
    """build_signature_metadata's stand-in: bytes, as the launcher parses
    ("y*"), that also keep the kernel's parameter types."""

    def __new__(cls, types_):
        sig = super().__new__(cls, bytes(len(types_)))
        sig.types = list(types_)
        return sig


class KernelArg:
    """PyKernelArg's stand-in (3.7 on): an argument's annotation."""

    def __init__(self, nested_tuple=None, type=None):
        self.nested_tuple, self.type = nested_tuple, type


class CFunction:
    """A stand-in for a C function: callable, with no __code__ (which is
    how the module tells Triton's C launcher from its Python wrapper)."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, *args):
        return self._fn(*args)


class Launches:
    """The stand-in C launchers' record: each launch's kernel arguments."""

    def __init__(self):
        self.calls = []


def _plain(v):
    if isinstance(v, torch.Tensor):
        return v.data_ptr()  # what the launcher passes the kernel
    if isinstance(v, (list, tuple)):
        return tuple(_plain(x) for x in v)
    return v


def units(fmt):
    """A format's units, one an argument: a letter, "y*", or a group."""
    out, i = [], 0
    while i < len(fmt):
        k = i + (2 if fmt[i + 1 : i + 2] == "*" else 1)
        if fmt[i] == "(":
            depth, k = 1, i + 1
            while depth:
                depth += {"(": 1, ")": -1}.get(fmt[k], 0)
                k += 1
        out.append(fmt[i:k])
        i = k
    return out


def parse(fmt, args):
    """Check args against a PyArg_ParseTuple format (the subset Triton's
    launchers use); return the error, or "" when they parse."""
    want = units(fmt)
    if len(args) != len(want):
        return f"{len(args)} arguments where {fmt!r} parses {len(want)}"
    for j, (unit, v) in enumerate(zip(want, args)):
        if unit.startswith("("):
            if not isinstance(v, (tuple, list)):
                return f"argument {j}: {v!r} where {unit} wants a sequence"
            error = parse(unit[1:-1], v)
            if error:
                return f"argument {j} {unit}: {error}"
        elif unit in "iIlLkKbBhHn":
            if not isinstance(v, int):
                return f"argument {j}: {v!r} where {unit!r} wants an int"
            if unit in "KIkBH" and v < 0:
                return f"argument {j}: {v} where {unit!r} wants an unsigned int"
        elif unit in "fd":
            if not isinstance(v, (int, float)):
                return f"argument {j}: {v!r} where {unit!r} wants a float"
        elif unit == "y*":
            if not isinstance(v, (bytes, bytearray, memoryview)):
                return f"argument {j}: {v!r} where 'y*' wants bytes"
        elif unit not in "Op":
            return f"format {fmt!r}: {unit!r} is not checked here"
    return ""


def check_param(ty, v):
    """Whether the launcher's extractor for type ty takes v (3.7 on)."""
    if ty.startswith("*"):
        return v is None or isinstance(v, int) or hasattr(v, "data_ptr")
    if ty == "nvTmaDesc":
        return isinstance(v, Tma)
    if ty.startswith(("i", "u")):
        return isinstance(v, int)
    if ty.startswith(("fp", "bf")):
        return isinstance(v, (int, float))
    return True


def flatten(args, annotations):
    """extractArgs (3.7 on): the kernel's parameters, constexprs dropped;
    a length mismatch is an error there is no check for in C."""
    if len(args) != len(annotations):
        raise ValueError(
            f"{len(args)} kernel arguments for {len(annotations)} annotations"
        )
    out = []
    for a, v in zip(annotations, args):
        if a.type == "tuple":
            out += flatten(v, a.nested_tuple)
        elif a.type == "kernel":
            out.append(v)
    return out


def stand_in_driver(record):
    """A driver whose utils stand in for the compiled driver.c: launch
    checks its arguments (3.7 on), the TMA fills record what they were
    given, build_signature_metadata keeps the types."""
    here = os.path.dirname(nvdriver.__file__)
    c_source = os.path.join(here, "driver.c")
    base = None
    if os.path.exists(c_source):
        with open(c_source) as f:
            found = LAUNCH_FORMAT.search(f.read())
        base = found.group(1) if found else None

    class Utils:
        def __getattr__(self, name):
            if name.startswith("fill_tma_descriptor"):
                return lambda *args: Tma(name, args)
            raise AttributeError(name)

        @staticmethod
        def build_signature_metadata(types_):
            return Signature(types_)

        def __init__(self):
            self.launch = CFunction(self._launch)

        @staticmethod
        def _launch(*args):
            if base is None:
                raise RuntimeError("driver.c has no launch format this check knows")
            error = parse(base, args)
            if error:
                raise TypeError(f"launch: {error}")
            annotations, signature, kernel_args = args[-3], args[-2], args[-1]
            params = flatten(list(kernel_args), annotations)
            if len(params) != len(signature.types):
                raise TypeError(
                    f"launch: {len(params)} parameters for a signature of {len(signature.types)}"
                )
            for ty, v in zip(signature.types, params):
                if not check_param(ty, v):
                    raise TypeError(f"launch: {v!r} for a parameter of type {ty}")
            record.calls.append([_plain(p) for p in params])

    return types.SimpleNamespace(
        utils=Utils(),
        get_current_device=lambda: 0,
        get_current_stream=lambda device=None: 0,
    )


def per_kernel_module(record):
    """compile_module_from_src's stand-in (3.6): a module whose launch
    checks its arguments against the format of the C source Triton
    generated for the kernel."""

    def compile_module_from_src(src, name, **_):
        fmt = LAUNCH_FORMAT.search(src)
        if fmt is None:
            raise RuntimeError(f"{name}: no launch format in the launcher's source")
        fmt = fmt.group(1)

        def launch(*args):
            error = parse(fmt, args)
            if error:
                raise TypeError(f"launch: {error}")
            packed = args[9]
            if not (isinstance(packed, tuple) and len(packed) == 3):
                raise TypeError(f"launch: kernel metadata {packed!r} is not 3 ints")
            record.calls.append([_plain(a) for a in args[13:]])

        return types.SimpleNamespace(launch=CFunction(launch))

    return compile_module_from_src


@contextlib.contextmanager
def stand_ins(record):
    """Triton's driver and launcher build replaced for the check's span."""
    names = ("compile_module_from_src", "library_dirs", "PyKernelArg")
    names += ("ARG_CONSTEXPR", "ARG_KERNEL", "ARG_TUPLE")
    saved = {n: getattr(nvdriver, n) for n in names if hasattr(nvdriver, n)}
    nvdriver.compile_module_from_src = per_kernel_module(record)
    nvdriver.library_dirs = lambda: []
    nvdriver.PyKernelArg = KernelArg
    nvdriver.ARG_CONSTEXPR, nvdriver.ARG_KERNEL, nvdriver.ARG_TUPLE = (
        "constexpr",
        "kernel",
        "tuple",
    )
    triton.runtime.driver.set_active(stand_in_driver(record))
    try:
        yield
    finally:
        for n, v in saved.items():
            setattr(nvdriver, n, v)
        triton.runtime.driver._active = None


def job_of(module, name, whole_call, kernel):
    """(label, signature) of the compile calib/sass.py makes of a plan's
    launch (the decode kernel, or the combine that plans.differs finds no
    difference from)."""
    tile = module.CONFIGS[name]._asdict()
    label = "decode/full" if whole_call else "decode"
    jobs = [(label,) + decode_job(module, tile, CPU_CAP, whole_call)]
    jobs += combine_jobs(module, tile, CPU_CAP, whole_call)
    for label, fn, sig, constexprs, options, _gluon in jobs:
        if not differs((fn, sig, constexprs, options), kernel):
            return label, sig
    raise RuntimeError(
        f"{kernel.fn.__name__}: no compile of calib/sass.py launches it so"
    )


def tensordesc_meta(module, name, kernel, label, cap, cache):
    """The TMA descriptor metadata the compiler gives the launch (None for
    a kernel without a descriptor argument), from a compile for the
    module's target, once per kernel and descriptor box."""
    if "QDesc" not in kernel.fn.arg_names:
        return None
    tile = module.CONFIGS[name]._asdict()
    key = (kernel.fn, tile["block_h"], label.endswith("/full"))
    if key not in cache:
        src, options = kernel_source(module, tile, cap, label)
        ck = triton.compile(src, target=GPUTarget("cuda", cap, 32), options=options)
        cache[key] = getattr(ck.metadata, "tensordesc_meta", None)
    return cache[key]


def compiled_stand_in(kernel, sig, meta, record):
    """A CompiledKernel as _Kernel._keep reads it, with Triton's own
    launcher object over the stand-in C launcher."""
    src = types.SimpleNamespace(
        fn=kernel.fn,
        signature=dict(sig),
        constants={
            n: v for n, v in kernel.constexprs.items() if sig.get(n) == "constexpr"
        },
    )
    md = types.SimpleNamespace(
        tensordesc_meta=meta,
        num_ctas=1,
        global_scratch_size=0,
        global_scratch_align=1,
        profile_scratch_size=0,
        profile_scratch_align=1,
        launch_cooperative_grid=False,
        launch_pdl=bool(kernel.options.get("launch_pdl", False)),
        instrumentation_mode="",
    )
    return types.SimpleNamespace(
        run=nvdriver.CudaLauncher(src, md),
        function=0x5EED,
        packed_metadata=(kernel.options.get("num_warps", 4), 1, 0),
        metadata=md,
    )


def values_of(plan, q, caches, sink):
    """A call's values (_Plan.run's two dicts): tensors for the first call,
    addresses for the later ones."""
    # The per-cache entry has one cache: its kernels take it as both.
    (k0, i0, l0), (k1, i1, l1) = (list(caches) * 2)[:2]
    work = torch.zeros(max(plan.work_bytes, 16), dtype=torch.uint8)
    out = torch.zeros(plan.out_shape, dtype=torch.bfloat16)
    lse = torch.zeros(plan.lse_shape, dtype=torch.float32)
    tensors = dict(
        q=q, k0=k0, i0=i0, l0=i0 if l0 is None else l0, k1=k1, i1=i1,
        l1=i1 if l1 is None else l1, sink=lse if sink is None else sink,
        out=out, lse=lse, part=work, plse=work, scale=0.125,
    )  # fmt: skip
    ints = {
        k: v.data_ptr() if isinstance(v, torch.Tensor) else v
        for k, v in tensors.items()
    }
    return tensors, ints


def check_launch(module, kernel, compiled, tensors, ints, q, record):
    """The launch four ways (the module docstring); an error or ""."""
    kernel._keep(compiled)
    first = dict(tensors)
    if "qdesc" in kernel.bind.values():
        first["qdesc"] = module._q_descriptor(q, kernel.constexprs["BLOCK_H"])
    kernel._first_launch(first)
    if kernel.raw is None:
        return "later calls would not take the C launcher directly"
    kernel.launch(ints, q, 0)
    raw = kernel.raw
    kernel.raw = None
    try:
        kernel.launch(ints, q, 0)
    finally:
        kernel.raw = raw
    # A release the module does not list: Triton's Python launcher only.
    release = triton.__version__
    triton.__version__ = "0.0.0"
    try:
        kernel._keep(compiled)
        if kernel.raw is not None:
            return "under a release it does not list it still calls the C launcher directly"
        kernel.launch(ints, q, 0)
    finally:
        triton.__version__ = release
    if len(record.calls) != 4:
        return f"{len(record.calls)} launches recorded for 4"
    first, direct, wrapped, unlisted = record.calls
    for way, args in (("first call", first), ("direct launch", direct)):
        if args != wrapped:
            return f"the {way}'s arguments {args} differ from a later call's {wrapped}"
    if unlisted != wrapped:
        return (
            f"under an unlisted release the arguments {unlisted} differ from {wrapped}"
        )
    return ""


def check(d):
    """(launches, those with a TMA descriptor, failures as lines) of the
    module in directory d, under the running Triton."""
    harness = load_harness(d)
    module = harness.load_module(os.path.join(d, "sparse_mla_mma.py"))
    module._raw_stream = lambda device_index: 0  # no CUDA stream on the CPU
    cap = int(module.TARGET.removeprefix("sm_"))
    release = ".".join(triton.__version__.split(".")[:2])
    if release not in getattr(module, "_LAUNCHER_CHECKED", (release,)):
        return (
            0,
            0,
            [f"Triton {triton.__version__} is not in the module's _LAUNCHER_CHECKED"],
        )
    failures, launches, tma, metas = [], 0, 0, {}
    for heads, name, entry, q, caches, sink in calls(harness, module):
        whole_call = entry == module._WHOLE_CALL
        plan = module._Plan(entry, name, q, caches, sink)
        tensors, ints = values_of(plan, q, caches, sink)
        for kernel in plan.kernels:
            label, sig = job_of(module, name, whole_call, kernel)
            meta = tensordesc_meta(module, name, kernel, label, cap, metas)
            record = Launches()
            try:
                with stand_ins(record):
                    compiled = compiled_stand_in(kernel, sig, meta, record)
                    why = check_launch(
                        module, kernel, compiled, tensors, ints, q, record
                    )
            except Exception as e:  # what a launch on the GPU would raise
                why = f"{type(e).__name__}: {e}"
            launches += 1
            tma += meta is not None
            if why:
                failures.append(
                    f"{name} ({entry}, H {heads}) {kernel.fn.__name__}: {why}"
                )
    return launches, tma, failures


def main(dirs):
    bad = total = 0
    for d in dirs:
        launches, tma, failures = check(d)
        for line in failures:
            print(f"{d}: {line} FAIL")
        print(
            f"{d}: Triton {triton.__version__}: {launches - len(failures)} of {launches} "
            f"launches ({tma} with a TMA descriptor) reach its C launcher as it parses "
            "them (first call, later calls direct, through its Python launcher, and under "
            "an unlisted release)"
        )
        bad += bool(failures) or launches == 0
        total += launches
    verdict = f"{bad} modules with a launch that fails" if bad else "all parse"
    print(
        f"calib/launch.py: {total} launches of {len(dirs)} modules under Triton {triton.__version__}: {verdict}"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
