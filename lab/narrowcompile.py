"""Cross-compile a lab copy's narrow 16-head configurations for sm_90a (no
GPU), as lab/p16, lab/c2n, lab/ppl and lab/two did:
shared memory, spills, setmaxnreg counts and the module's launch check,
per cache and as the whole call, at a launch bound. probe() compiles a
lab probe kernel for sm_90 and sm_120 (lab/f16, lab/sk).

    .venv/bin/python lab/narrowcompile.py [COPY] [MAXNREG] [CONFIG...]
    # COPY under lab/ (p16/p16 unless told), MAXNREG 96 unless told; for
    # lab/c2n: c2n/c2n 128 ws_h16_t64_k1_w4_s2 ... (two-buffer ones only)
"""

import collections
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "calib"))

import calibrate  # noqa: E402
from sass import decode_job, disassemble_at  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

NAMES = ("ws_h16_t64_k1_w4_s2", "ws_h16_t64_k2_w4_s3")


def compiled(module, name, whole=False, maxnreg=None, cap=90, kernel=None):
    """(compiled kernel, ptxas log, constexprs, options) of a configuration's
    decode kernel for sm_90a (or compute capability cap), as its entry
    launches it (at maxnreg if given). kernel: another of the module's
    kernels with the same arguments, for a copy whose launcher sends the
    configuration there (lab/rs120)."""
    c = module.CONFIGS[name]
    fn, sig, constexprs, options, _ = decode_job(module, c._asdict(), cap, whole)
    if kernel is not None:
        fn = kernel
    if maxnreg is not None:
        options["maxnreg"] = maxnreg
    src = GluonASTSource(
        fn=fn,
        signature=sig,
        constexprs=constexprs,
        attrs=calibrate.specialised(fn, sig),
    )
    ck, log = calibrate.compile_logged(src, cap, options)
    return ck, log, constexprs, options


def pp_loop_mix(module, name, whole, cap):
    """A pipelined configuration compiled as its entry launches it for
    compute capability cap (lab/lazy120, lab/l2pp): (registers, spill
    bytes, shared memory, its longest loop's length, that loop's counts of
    each opcode's first part, predicates left out)."""
    fn, opts = module._pp_program(module.CONFIGS[name])
    ck, log, _, _ = compiled(module, name, whole, opts.get("maxnreg"), cap, fn)
    use = calibrate.ptxas_usage(ck.asm["ptx"], cap, log)
    code = disassemble_at(ck.asm["cubin"])[0]
    loops = partition_loops(code)
    body = max(loops, key=len) if loops else []
    ops = collections.Counter(
        x.split()[1 if x.startswith("@") else 0].split(".")[0] for x in body
    )
    return use["regs"], use["spill"], ck.metadata.shared, len(body), ops


def print_pp_loop_mixes(copies, names, ops):
    """pp_loop_mix of each configuration in names, per cache and as the
    whole call, for sm_90 and sm_120, of each (label, module path) in
    copies: one line each, the counts of ops."""
    for label, path in copies:
        m = calibrate.load_kernel(path)
        for name in names:
            for whole in (False, True):
                for cap in (90, 120):
                    regs, spill, smem, n, c = pp_loop_mix(m, name, whole, cap)
                    print(
                        f"{label} {name}{' whole' if whole else ''} sm_{cap}: "
                        f"regs {regs} spill {spill} smem {smem}; "
                        f"loop {n}: " + " ".join(f"{o} {c[o]}" for o in ops),
                        flush=True,
                    )


def spans(code):
    """The instructions from each backward branch's target to the branch,
    for code as sass.disassemble_at gives it ((address, text) pairs); plain
    and uniform branches alike (`BRA 0x..`, `BRA.U UP0, 0x..`)."""
    for i, (addr, ins) in enumerate(code):
        m = re.search(r"\bBRA(?:\.U)? (?:!?U?P\d, )?(0x[0-9a-f]+)", ins)
        if m and int(m.group(1), 16) < addr:
            target = int(m.group(1), 16)
            yield [x for a, x in code[: i + 1] if a >= target]


def loop_body(code):
    """The instructions of the innermost backward branch's span that holds an
    MMA: a kernel's tile loop (lab/bounds, lab/rawcons)."""
    best = None
    for body in spans(code):
        if any(x.split()[0].startswith(("HMMA", "HGMMA")) for x in body):
            if best is None or len(body) < len(best):
                best = body
    return best or []


def partition_loops(code):
    """The tile loops of a warp-specialised kernel, one a partition: the
    spans of more than 50 instructions that hold no setmaxnreg (the
    mbarrier waits' retry stubs and the partitions' dispatch also branch
    back) (lab/rs120)."""
    return [
        body
        for body in spans(code)
        if len(body) > 50 and not any("USETMAXREG" in x for x in body)
    ]


def probe(fn, signature, counts, num_warps=8, constexprs=None):
    """Compile a probe kernel (at `constexprs`, none unless given) for sm_90
    and sm_120 and print, for each, the SASS counts of the opcodes in
    `counts` (LDS without LDSM), its registers, spills and shared memory,
    or why it did not compile."""
    import sass as S

    for cap in (90, 120):
        src = GluonASTSource(fn=fn, signature=signature, constexprs=constexprs or {})
        try:
            ck, log = calibrate.compile_logged(src, cap, dict(num_warps=num_warps))
        except Exception as e:
            cause = e.__cause__ or e.__context__
            print(f"sm_{cap}: {str(e)[-1500:]}\n  cause: {str(cause)[:1500]}")
            continue
        sass = "\n".join(S.disassemble(ck.asm["cubin"])[0])
        use = calibrate.ptxas_usage(ck.asm["ptx"], cap, log)
        found = {op: sass.count(op) for op in counts}
        if "LDS" in found:
            found["LDS"] -= sass.count("LDSM")
        print(
            f"sm_{cap}: "
            + " ".join(f"{op} {n}" for op, n in found.items())
            + f" regs {use['regs']} spill {use['spill']} smem {ck.metadata.shared}"
        )


def one(module, copy, name, whole, maxnreg):
    ck, log, constexprs, _ = compiled(module, name, whole, maxnreg)
    ptx = ck.asm["ptx"]
    use = calibrate.ptxas_usage(ptx, 90, log)
    counts = re.findall(r"setmaxnreg\.(?:inc|dec)\.sync\.aligned\.u32\s+(\d+)", ptx)
    err = module._compile_error(ck, constexprs)
    print(
        f"{copy} {name:22s} whole={int(whole)} smem={ck.metadata.shared} "
        f"regs={use['regs']} spill={use['spill']} "
        f"setmaxnreg={sorted(set(counts), key=int)} "
        f"check={'ok' if err is None else err[:120]}",
        flush=True,
    )


def main():
    copy = sys.argv[1] if len(sys.argv) > 1 else "p16/p16"
    maxnreg = int(sys.argv[2]) if len(sys.argv) > 2 else 96
    names = sys.argv[3:] or NAMES
    module = calibrate.load_kernel(os.path.join(HERE, copy, "sparse_mla_mma.py"))
    for name in names:
        for whole in (False, True):
            try:
                one(module, copy, name, whole, maxnreg)
            except Exception as e:  # report the configuration and go on
                print(f"{copy} {name} whole={int(whole)} ERROR {str(e)[-300:]}")


if __name__ == "__main__":
    main()
