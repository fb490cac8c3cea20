"""Cross-compile the lab kernels for sm_120 and sm_90 (no GPU) and read what the compiler did.

For every configuration that bench.py's plan times (or the names given,
which must be among them) this builds the kernel with an explicit GPUTarget, as calib/calibrate.py does, and
reports: the shared memory Triton allocates, ptxas's registers and spill
bytes (ptxas-blackwell for sm_120), whether ptxas accepted every instruction
for the target, and from the SASS (cuobjdump) the HMMA and HGMMA counts,
barriers and load widths. sm_90 is compiled with DISABLE_MMA_V3=1 set, as the
H200 proxy runs it (Gluon's mma_v2 is mma.sync either way).

    python3 lab/sm120/compile_check.py                      # bench.py's plan, table
    python3 lab/sm120/compile_check.py pp_h64_t16_k1_w8_b2_c2 --json out.json

Exit status 1 when a configuration spills, exceeds 101,376 B of shared
memory on sm_120, fails to compile, or shows HGMMA on sm_90.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

os.environ.setdefault("DISABLE_MMA_V3", "1")

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SM120_SMEM = 101_376
BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")


CONSTEXPRS = (
    "HAS_TOPK_LENGTH",
    "BLOCK_H",
    "BLOCK_T",
    "SPLIT_K",
    "WARPS_N",
    "NUM_BUFS",
    "CHAINS",
    "SUBTILES",
    "PV_WARPS_M",
    "COALESCE",
    "PIPE",
    "ABLATE",
)


def signature(fn):
    sig = {}
    for name in fn.arg_names:
        if name in CONSTEXPRS:
            sig[name] = "constexpr"
        elif name == "Q":
            sig[name] = "*bf16"
        elif name == "KV":
            sig[name] = "*fp8e4nv"
        elif name in ("Indices", "TopkLength"):
            sig[name] = "*i32"
        elif name == "Out":
            sig[name] = "*bf16"
        elif name == "Lse":
            sig[name] = "*fp32"
        elif name == "qk_scale":
            sig[name] = "fp32"
        else:
            sig[name] = "i32"
    return sig


def sass_stats(cubin_path):
    r = subprocess.run(
        [os.path.join(BIN, "cuobjdump"), "-sass", cubin_path],
        capture_output=True,
        text=True,
    )
    sass = r.stdout
    return {
        "hmma": len(re.findall(r"\bHMMA\.", sass)),
        "hgmma": len(re.findall(r"\bHGMMA\.", sass)),
        "bar": len(re.findall(r"\bBAR\.SYNC|\bBAR\.SYNC\.DEFER_BLOCKING", sass)),
        "ldsm": len(re.findall(r"\bLDSM\.", sass)),
        "ldg": {
            w: len(re.findall(rf"\bLDG\.E(?:\.[A-Z0-9_]+)*\.{w}\b", sass))
            for w in ("U8", "16", "32", "64", "128")
        }
        | {
            "plain32": len(
                re.findall(r"\bLDG\.E(?:\.EL|\.LTC\d+B|\.CONSTANT)*\s", sass)
            )
        },
        "sts": len(re.findall(r"\bSTS(\.\S+)?\b", sass)),
        "stl": len(re.findall(r"\bSTL", sass)),
        "lines": sass.count("\n"),
    }, sass


def compile_one(module, name, cap, keep_dir=None):
    fn = module._pipe_decode_kernel
    sig = signature(fn)
    attrs = {
        (i,): [["tt.divisibility", 16]]
        for i, n in enumerate(fn.arg_names)
        if sig[n] not in ("constexpr", "fp32")
    }
    constexprs = {"HAS_TOPK_LENGTH": True, **module.constexprs_of(name)}
    src = GluonASTSource(fn=fn, signature=sig, constexprs=constexprs, attrs=attrs)
    row = {"config": name, "cap": cap}
    try:
        ck = triton.compile(
            src,
            target=GPUTarget("cuda", cap, 32),
            options={"num_warps": module.num_warps_of(name)},
        )
    except Exception as e:  # noqa: BLE001 - report the compiler's own words
        row["error"] = " ".join(str(e).split())[:400]
        return row
    ptx = ck.asm["ptx"]
    arch = re.search(r"^\.target\s+(\S+)", ptx, re.M).group(1)
    ptxas = os.path.join(BIN, "ptxas-blackwell" if cap >= 100 else "ptxas")
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx")
        with open(p, "w") as f:
            f.write(ptx)
        cubin = os.path.join(d, "k.cubin")
        r = subprocess.run(
            [ptxas, "-v", f"--gpu-name={arch}", p, "-o", cubin],
            capture_output=True,
            text=True,
        )
        row["ptxas_ok"] = r.returncode == 0
        if r.returncode != 0:
            row["error"] = r.stderr.strip()[-400:]
            return row
        stats, sass = sass_stats(cubin)
        if keep_dir:
            with open(os.path.join(keep_dir, f"{name}.sm{cap}.sass"), "w") as f:
                f.write(sass)
            with open(os.path.join(keep_dir, f"{name}.sm{cap}.ptx"), "w") as f:
                f.write(ptx)
    regs = re.search(r"Used (\d+) registers", r.stderr)
    spill = re.search(r"(\d+) bytes spill stores", r.stderr)
    row.update(
        arch=arch,
        smem=ck.metadata.shared,
        regs=int(regs.group(1)) if regs else None,
        spill=int(spill.group(1)) if spill else 0,
        ptx_bar=len(re.findall(r"\bbar\.sync|\bbarrier\.sync", ptx)),
        **stats,
    )
    return row


def problems(row):
    out = []
    if "error" in row:
        return ["does not compile: " + row["error"][:160]]
    if row["spill"]:
        out.append(f"spills {row['spill']} B")
    if row["cap"] == 120 and row["smem"] > SM120_SMEM:
        out.append(f"smem {row['smem']} > {SM120_SMEM}")
    if row["hgmma"]:
        out.append("HGMMA in the SASS")
    if not row["hmma"]:
        out.append("no HMMA in the SASS")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "names",
        nargs="*",
        help="configurations of bench.py's plan (default: all of them)",
    )
    ap.add_argument("--caps", default="120,90")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--keep", help="write each SASS and PTX into this folder")
    args = ap.parse_args(argv)
    sys.path.insert(0, HERE)
    import bench  # noqa: E402 - beside this file

    module = bench.pd
    planned = sorted({row[3] for row in bench.plan()})  # registers them too
    names = args.names or planned
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    rows, bad = [], 0
    print(
        f"{'config':24s} {'cap':>4s} {'smem':>7s} {'regs':>4s} {'spill':>5s} "
        f"{'HMMA':>5s} {'HGMMA':>5s} {'BAR':>4s} {'LDSM':>5s} {'STS':>4s}  ldg widths  verdict"
    )
    for name in names:
        for cap in (int(c) for c in args.caps.split(",")):
            row = compile_one(module, name, cap, args.keep)
            row["problems"] = problems(row)
            bad += bool(row["problems"])
            rows.append(row)
            if "error" in row:
                print(f"{name:24s} {cap:4d} {row['problems'][0]}")
                continue
            ldg = " ".join(f"{w}:{n}" for w, n in row["ldg"].items() if n)
            print(
                f"{name:24s} {cap:4d} {row['smem']:7d} {row['regs']:4d} {row['spill']:5d} "
                f"{row['hmma']:5d} {row['hgmma']:5d} {row['bar']:4d} {row['ldsm']:5d} {row['sts']:4d}  {ldg}  "
                f"{'; '.join(row['problems']) or 'ok'}",
                flush=True,
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"triton": triton.__version__, "rows": rows}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
