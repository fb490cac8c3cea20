"""Proves, by running it, whether an SGLang release's DeepSeek-V4 attention
hands its kernel a tensor-parallel rank's own query heads or pads them to 64.

    python3 .ci/sglang_heads.py ROOT --expect native|padded [--json]

mlagen patch inserts a block into ROOT/sglang/srt/models/deepseek_v4.py so
that with SGLANG_SM120_MMA_FLASHMLA on, on a GPU of compute capability 12.x,
a rank passes its n_local_heads (16 of 64 over 4 ranks) where SGLang pads to
64. A grep only shows that the block is there; this shows that it takes
effect, and only there, on each release .ci/sglang-releases.sh unpacks:
patched (--expect native) and pristine (--expect padded).

The code that picks the width is cut out with ast and run alone: the method
_kernel_num_heads (newer releases), or the `if` in forward that sets
padded_num_heads and builds the rank's padded attention sink once (older
ones). Where the release has SGLang's DSpark draft model (0.5.16 on), its
padding `if` and the sink helper it calls with no width run too: mlagen
leaves that place padded, so it pads under either --expect. CI has neither torch nor a GPU, so all it touches is a stub (torch,
SGLang's platform and envs, the modules an inserted import names, the layer,
tensors that are only a shape), which also lets each scenario pick the gate
and the GPU. Prints a table and a verdict line, or one JSON object with
--json. Exits 0 when every scenario gives the expected width, 1 when one
does not, 2 when the file or the code's shape is not found.
"""

import __future__
import argparse
import ast
import json
import os
import symtable
import sys
import types

GATE = "SGLANG_SM120_MMA_FLASHMLA"
LOCAL, PADDED = 16, 64  # the stub layer's n_local_heads; FlashMLA's padded width
DECODE_MAX_TOKENS = 64  # SGLang's SM120_DECODE_MAX_TOKENS: above it is prefill


class FakeTensor:
    """A tensor that is only a shape: allocating and slicing work the new
    shape out, and an index past the end fails as torch's would, so a sink
    copied into too narrow a buffer shows up."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def new_empty(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return FakeTensor(shape)

    new_zeros = new_empty

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        if len(key) > len(self.shape):
            raise IndexError(f"{len(key)} indices into shape {self.shape}")
        shape = []
        for index, size in zip(key, self.shape):
            if isinstance(index, slice):
                # Python clamps a slice's ends; torch would too, but a sink
                # slice running past its buffer is the very bug to catch.
                if index.stop is not None and index.stop > size:
                    raise IndexError(f"{index} past size {size}")
                shape.append(len(range(*index.indices(size))))
            elif not -size <= index < size:
                raise IndexError(f"index {index} past size {size}")
        return FakeTensor(shape + list(self.shape[len(key) :]))

    def __setitem__(self, key, value):
        target = self[key]
        if target.shape != value.shape:
            raise ValueError(f"cannot copy shape {value.shape} into {target.shape}")


def flag(value):
    """One of SGLang's envs fields: `.get()` gives its value."""
    return types.SimpleNamespace(get=lambda: value)


def layer():
    """A fresh attention layer of a 64-head model on rank 1 of 4, its sink
    not yet built (as before its first forward)."""
    return types.SimpleNamespace(
        tp_size=4,
        attn_tp_size=4,
        n_local_heads=LOCAL,
        n_heads=64,
        head_dim=512,
        tp_rank=1,
        attn_tp_rank=1,
        attn_sink=FakeTensor((64,)),
        _attn_sink_local=None,
    )


def module(**names):
    """A stub module holding names."""
    stub = types.ModuleType("stub")
    stub.__dict__.update(names)
    return stub


def execute(step, gate, major):
    """step(namespace) run with the stubs for one gate setting and one GPU in
    place, namespace being the module globals the code sees. The stubs go
    into sys.modules and os.environ too, so that an inserted import of envs
    or read of the variable meets them; both are put back afterwards."""
    # Any backend but "flashinfer" keeps SGLang's own rule padding decode.
    envs = types.SimpleNamespace(SGLANG_SM120_FLASHMLA_BACKEND=flag("triton"))
    setattr(envs, GATE, flag(gate))
    capability = types.SimpleNamespace(get_device_capability=lambda *_: (major, 0))
    torch = types.SimpleNamespace(cuda=capability)
    modules = {"torch": torch, "sglang.srt.environ": module(envs=envs)}
    modules["sglang.kernels.ops.attention.flash_mla_sm120"] = module(
        flashinfer_dsv4_decode_supports_num_heads=lambda *_: False
    )
    for name in list(modules):
        while "." in name:
            name = name.rpartition(".")[0]
            modules.setdefault(name, module())
    namespace = {
        "__builtins__": __builtins__,
        "torch": torch,
        "get_platform": lambda: types.SimpleNamespace(is_sm120=major == 12),
        "SM120_DECODE_MAX_TOKENS": DECODE_MAX_TOKENS,
        "_is_gfx942_supported": False,
        "envs": envs,
        "os": os,
    }
    saved_modules = {name: sys.modules.get(name) for name in modules}
    saved_gate = os.environ.pop(GATE, None)
    sys.modules.update(modules)
    if gate:
        os.environ[GATE] = "true"
    try:
        return step(namespace)
    except Exception as error:  # the code did not run: a mismatch, shown as such
        return f"{type(error).__name__}: {error}"
    finally:
        for name, saved in saved_modules.items():
            if saved is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = saved
        os.environ.pop(GATE, None)
        if saved_gate is not None:
            os.environ[GATE] = saved_gate


def sets_padded_heads(stmt):
    """`padded_num_heads = <something of self.n_local_heads>`."""
    return (
        isinstance(stmt, ast.Assign)
        and [ast.unparse(target) for target in stmt.targets] == ["padded_num_heads"]
        and "self.n_local_heads" in ast.unparse(stmt.value)
    )


def class_methods(tree, name=None):
    """The methods of the module's classes (those called name, if given)."""
    return [
        item
        for cls in ast.walk(tree)
        if isinstance(cls, ast.ClassDef)
        for item in cls.body
        if isinstance(item, ast.FunctionDef) and name in (None, item.name)
    ]


def find_shape(tree):
    """("method", the _kernel_num_heads def, it) or ("padding", the outermost
    `if` whose body sets padded_num_heads, its method), looking only inside
    classes' methods; None when the release has neither."""
    methods = class_methods(tree)
    for method in methods:
        if method.name == "_kernel_num_heads":
            return "method", method, method
    ifs = [
        (node, method)
        for method in methods
        for node in ast.walk(method)
        if isinstance(node, ast.If) and any(map(sets_padded_heads, node.body))
    ]
    # A block nested in the one that pads (the patch's own) starts later.
    return ("padding", *min(ifs, key=lambda p: p[0].lineno)) if ifs else None


def local_reads(source, path, method):
    """The module-level names the width code reads (envs, torch, os) that
    method binds itself. Running the cut-out code alone cannot show this: an
    import of envs inside forward, which reads envs before the padding, makes
    every read of it there raise UnboundLocalError."""
    tables = [symtable.symtable(source, path, "exec")]
    while tables:
        table = tables.pop()
        if table.get_type() == "function" and table.get_lineno() == method.lineno:
            return [
                n
                for n in ("envs", "torch", "os")
                if n in table.get_identifiers() and table.lookup(n).is_local()
            ]
        tables.extend(table.get_children())
    return []


def row(label, gate, major, got, want):
    scenario = f"{label} gate={'on' if gate else 'off'} sm{major}0"
    return {"scenario": scenario, "got": got, "expected": want, "ok": got == want}


def method_rows(code, name, native):
    rows = []
    decode = [(1, gate, major) for major in (12, 9) for gate in (True, False)]
    for tokens, gate, major in decode + [(100, True, 12), (100, False, 12)]:
        # Prefill already takes the rank's own heads in SGLang, patched or not.
        own = tokens > DECODE_MAX_TOKENS or (native and gate and major == 12)

        def step(namespace):
            exec(code, namespace)
            return namespace[name](layer(), tokens)

        got = execute(step, gate, major)
        rows.append(row(f"tokens={tokens}", gate, major, got, LOCAL if own else PADDED))
    return rows


def padding_rows(code, native):
    rows = []
    # Forward calls on one layer in turn; its first call builds the sink, and
    # later calls must keep that width whatever the gate says by then.
    for calls in [[(True, 12), (False, 12)], [(False, 12), (True, 12)], [(True, 9)]]:
        width = LOCAL if native and calls[0] == (True, 12) else PADDED
        one = layer()
        for turn, (gate, major) in enumerate(calls):

            def step(namespace):
                namespace.update(self=one, x=FakeTensor((1, 7168)))
                exec(code, namespace)
                heads, out = namespace["q_padded"], namespace["q_out"]
                got = f"{heads.shape[1]}/{one._attn_sink_local.shape[0]}"
                # The rank's own heads are what it writes, padded or not.
                return got if out.shape[1] == LOCAL else f"{got} q_out={out.shape[1]}"

            got = execute(step, gate, major)
            label = "same layer" if turn else "fresh layer"
            rows.append(row(label, gate, major, got, f"{width}/{width}"))
    return rows


def assigns(node, name):
    """Whether node assigns the local name somewhere inside."""
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
        for n in ast.walk(node)
    )


def draft_rows(root):
    """SGLang's DSpark draft model (0.5.16 on), patched or not: its forward's
    `if` that builds the padded query (q_padded) and the sink helper it calls
    with no width, run with the stubs on a fresh layer. mlagen leaves this
    place padded (docs/sglang.md), so every gate and GPU gives 64 heads and a
    64-wide sink. [] when the release has no draft model; one failing row
    when its shape is not found."""
    models = os.path.join(root, "sglang", "srt", "models")
    path = os.path.join(models, "deepseek_v4_dspark.py")
    if not os.path.exists(path):
        return []
    # Both modules postpone annotations; compiled alone, a def would not.
    flags = __future__.annotations.compiler_flag
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        pads = [
            stmt
            for method in class_methods(tree, "forward")
            for stmt in method.body
            if isinstance(stmt, ast.If) and assigns(stmt, "q_padded")
        ]
        constants = [
            stmt
            for stmt in tree.body
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)
        ]
        # The draft's own helper (0.5.16) or the one it inherits (0.5.23).
        helper, where = class_methods(tree, "_local_attn_sink"), path
        if not helper:
            where = os.path.join(models, "deepseek_v4.py")
            with open(where, encoding="utf-8") as f:
                helper = class_methods(ast.parse(f.read(), where), "_local_attn_sink")
    except (OSError, SyntaxError) as error:
        pads, helper, where = [], [], f"{type(error).__name__}: {error}"
    if len(pads) != 1 or len(helper) != 1:
        why = f"{len(pads)} padding `if`s in forward, {len(helper)} sink helpers ({where})"
        return [
            {"scenario": "DSpark draft", "got": why, "expected": "1, 1", "ok": False}
        ]
    pad = compile(ast.Module(body=[pads[0]], type_ignores=[]), path, "exec", flags)
    sink = compile(ast.Module(body=[helper[0]], type_ignores=[]), where, "exec", flags)
    consts = compile(ast.Module(body=constants, type_ignores=[]), path, "exec", flags)
    rows = []
    for gate, major in [(True, 12), (False, 12), (True, 9)]:

        def step(namespace):
            one = layer()
            one.q_head_norm = False
            namespace.update(
                self=one,
                hidden_states=FakeTensor((1, 4096)),
                pool=types.SimpleNamespace(uniform_fp8=False),
                q_padded=None,
                q_out=None,
            )
            exec(consts, namespace)
            exec(pad, namespace)
            exec(sink, namespace)
            heads = namespace["q_padded"]
            width = namespace["_local_attn_sink"](one).shape[0]
            return f"{heads.shape[1] if heads is not None else None}/{width}"

        got = execute(step, gate, major)
        rows.append(row("DSpark draft", gate, major, got, f"{PADDED}/{PADDED}"))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", help="directory holding sglang/ (an unpacked wheel)")
    parser.add_argument("--expect", required=True, choices=["native", "padded"])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()

    path = os.path.join(args.root, "sglang", "srt", "models", "deepseek_v4.py")
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        found = find_shape(ast.parse(source, path))
    except (OSError, SyntaxError) as error:
        found = error
    if not isinstance(found, tuple):
        why = found or "no _kernel_num_heads, no `if` setting padded_num_heads"
        print(f"heads: {path}: {why}", file=sys.stderr)
        return 2
    shape, node, method = found
    # Compiled from the node itself, so a traceback names the release's lines.
    code = compile(ast.Module(body=[node], type_ignores=[]), path, "exec")
    native = args.expect == "native"
    if shape == "method":
        rows = method_rows(code, node.name, native)
    else:
        rows = padding_rows(code, native)
    bound = local_reads(source, path, method)
    scenario = f"{method.name} binds none of envs, torch, os"
    rows.append({"scenario": scenario, "got": bound, "expected": [], "ok": not bound})
    rows += draft_rows(args.root)
    ok = all(r["ok"] for r in rows)
    if args.json:
        report = {"release": path, "shape": shape, "expect": args.expect, "ok": ok}
        print(json.dumps(dict(report, scenarios=rows)))
    else:
        width = max(len(r["scenario"]) for r in rows)
        print(f"{'scenario':{width}}  {'got':>8}  {'expected':>8}  ok")
        for r in rows:
            got, want, ok_ = r["got"], r["expected"], "yes" if r["ok"] else "NO"
            print(f"{r['scenario']:{width}}  {got!s:>8}  {want!s:>8}  {ok_}")
        verdict = "as expected" if ok else "NOT as expected"
        print(f"heads: {path} {shape}: {args.expect} {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
