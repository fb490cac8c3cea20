"""Check and time the lab kernels on a GPU, beside the shipped sm_120 and sm_90 modules.

Inputs, the float64 reference, the correctness check and the CUDA-graph
timing are the shipped harness's (a snapshot, base_harness.py, of
kernels/sm90/harness.py at 4f90655); this script only chooses what to run.

    # correctness of some lab configurations (and compile the timed shapes)
    python3 bench.py check --configs pp_h64_t16_k1_w8_b2_c2,... --json c.json
    # timing: every shape of the plan, the named modules and lab families
    python3 bench.py time --modules pp,base_sm120 --json t.json
    python3 bench.py time --modules base_sm90 --json t90.json
    python3 bench.py plan      # the configurations the timing plan uses

The sm_90 module must run in a process without DISABLE_MMA_V3 and the lab
kernels and the sm_120 module in one with DISABLE_MMA_V3=1 (Triton reads it at
compile time): device.sh starts them separately.
"""

import argparse
import datetime
import re
import json
import os
import sys
import time

import torch
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import base_harness as H  # noqa: E402
import pipe_decode as pd  # noqa: E402

HEADS = (64, 16)
TOPKS = (512, 2048)
BATCHES = (1, 16, 64, 128)
SMS = 132  # the H200's multiprocessors: the split-K rule fills them

# Lab families timed at each head count, as pipe_decode.add_config
# arguments less the split. Every one has 8 warps and at most 101,376 B of
# shared memory, so the H200 runs one program per multiprocessor, as an
# sm_120 card would.
FAMILIES = {
    64: [
        dict(block_h=64, block_t=16, warps_n=2, bufs=2, chains=2),
        dict(block_h=64, block_t=32, warps_n=2, bufs=1, chains=2, subtiles=2),
    ],
    16: [dict(block_h=16, block_t=64, warps_n=8, bufs=1, chains=2)],
}

# Extra correctness cases beside the harness's: H = 32 (TP 2), and a topk
# whose tile count is odd at BLOCK_T 64.
EXTRA_CASES = [
    ("p64_h32_topk512_len", 64, 4, 32, 512, True),
    ("p256_h32_topk960_qpadded", 256, 3, 32, 960, False, "padded"),
]


def splits_for(batch, heads, block_h):
    """Split-K values to try: the largest that fits the GPU in one wave, and
    half of it at small batches (fewer, longer splits; a cheaper combine)."""
    blocks = batch * triton.cdiv(heads, block_h)
    fill = 1
    while blocks * fill * 2 <= SMS and fill < 32:
        fill *= 2
    return [fill // 2, fill] if batch <= 16 and fill >= 2 else [fill]


# Timing experiments at one shape (pipe_decode.py says what each ablate
# value leaves out); their results are wrong and they are never checked.
ABLATIONS = [((64, 2048, 128), FAMILIES[64][1], (1, 2, 4, 5))]


def plan():
    """(heads, topk, batch, config name) for every lab timing."""
    rows = []
    for shape, fam, ablates in ABLATIONS:
        for ablate in ablates:
            rows.append((*shape, pd.add_config(split_k=1, ablate=ablate, **fam)))
    for heads in HEADS:
        for topk in TOPKS:
            for batch in BATCHES:
                for fam in FAMILIES[heads]:
                    splits = {
                        min(k, topk // fam["block_t"])
                        for k in splits_for(batch, heads, fam["block_h"])
                    }
                    for k in sorted(splits):
                        rows.append(
                            (heads, topk, batch, pd.add_config(split_k=k, **fam))
                        )
    return rows


class LabModule:
    """One configuration of pipe_decode behind the bundle's sparse_decode contract."""

    def __init__(self, name):
        self.name = name

    def sparse_decode(self, q, k_cache, indices, topk_length, softmax_scale):
        return pd.launch(self.name, q, k_cache, indices, topk_length, softmax_scale)


_LOADED = {}


def load(name):
    """The module (or lab configuration) `name`, loaded once per process:
    pipe_decode is the prototype with its own selection."""
    if name not in _LOADED:
        if name.startswith("pp_"):
            _LOADED[name] = LabModule(name)
        elif name == "pipe_decode":
            _LOADED[name] = pd
        else:
            _LOADED[name] = H.load_module(os.path.join(HERE, name + ".py"))
    return _LOADED[name]


def meta(argv):
    return {
        "gpu": torch.cuda.get_device_name(),
        "capability": "sm_%d%d" % torch.cuda.get_device_capability(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "disable_mma_v3": os.environ.get("DISABLE_MMA_V3", ""),
        "command": "python3 lab/sm120/bench.py " + " ".join(argv),
    }


def cmd_check(args, argv):
    device = torch.device("cuda")
    gen = torch.Generator(device=device).manual_seed(args.seed)
    report = {**meta(argv), "correctness": [], "warmed": []}
    cases = H.correctness_cases(False) + EXTRA_CASES
    plan()  # registers the lab configurations
    failed = 0
    for name in args.configs.split(","):
        if re.search(r"_a\d$", name):
            continue  # timing experiments: wrong by design
        module = load(name)
        for case in cases:
            try:
                row = {"variant": name, **H.check(module, case, gen, device)}
            except Exception as e:  # noqa: BLE001 - a compile error is a result
                row = {
                    "variant": name,
                    "case": case[0],
                    "passed": False,
                    "error": " ".join(str(e).split())[:600],
                }
            failed += not row["passed"]
            report["correctness"].append(row)
            print(
                f"{name:30s} {row['case']:28s} "
                + (
                    f"rel {row['rel_err']:.2e} lse {row['lse_err']:.1e} "
                    if "rel_err" in row
                    else row.get("error", "")[:200] + " "
                )
                + ("ok" if row["passed"] else "FAIL"),
                flush=True,
            )
        with open(
            args.json, "w"
        ) as f:  # after each configuration: a cut-short run keeps its rows
            json.dump(report, f, indent=1)
    # Compile the timed specialisations too, so the timing process finds them
    # cached: a lab configuration at the shapes the plan times it, a shipped
    # module at every shape.
    wanted = set(args.configs.split(","))
    shapes = [(h, t, b, n) for h, t, b, n in plan() if n in wanted]
    shapes += [
        (h, t, b, n)
        for n in wanted
        if not n.startswith("pp_")
        for h in HEADS
        for t in TOPKS
        for b in BATCHES
    ]
    for heads, topk, batch, name in shapes:
        buf, q, idx, tl_ = H.make_inputs(
            64,
            batch,
            heads,
            topk,
            True,
            gen,
            device,
            pool_tokens=max(batch * topk, 1 << 16),
        )
        try:
            load(name).sparse_decode(
                q, H.as_k_cache(buf, 64), idx, tl_, H.HEAD_DIM**-0.5
            )
            report["warmed"].append([heads, topk, batch, name])
        except Exception as e:  # noqa: BLE001
            report["warmed"].append([heads, topk, batch, name, str(e)[:300]])
    torch.cuda.synchronize()
    with open(args.json, "w") as f:
        json.dump(report, f, indent=1)
    return 1 if failed else 0


def cmd_time(args, argv):
    device = torch.device("cuda")
    gen = torch.Generator(device=device).manual_seed(args.seed)
    report = {**meta(argv), "timing": []}
    mods = args.modules.split(",")
    plan_rows = plan()
    H.settle_graph_replay(device)
    for heads in HEADS:
        for topk in TOPKS:
            for batch in BATCHES:
                if args.deadline and time.time() > args.deadline:
                    print(
                        f"deadline reached: H{heads} k{topk} B{batch} and later not timed"
                    )
                    report["cut_short"] = True
                    break
                sets = H.timing_sets(batch, topk, heads, gen, device)
                floor, _, _ = H.floor_us(batch, heads, topk)
                names = [m for m in mods if m != "pp"]
                if "pp" in mods:
                    names += [
                        n
                        for h, t, b, n in plan_rows
                        if (h, t, b) == (heads, topk, batch)
                    ]
                for name in names:
                    try:
                        us = H.time_shape(
                            load(name), batch, topk, heads, sets, graph=True
                        )
                        err = None
                    except Exception as e:  # noqa: BLE001
                        us, err = None, " ".join(str(e).split())[:300]
                    report["timing"].append(
                        {
                            "variant": name,
                            "heads": heads,
                            "topk": topk,
                            "batch": batch,
                            "graph_us": us,
                            "floor_us": floor,
                            "error": err,
                        }
                    )
                    print(
                        f"H{heads:<3d} k{topk:<5d} B{batch:<4d} {name:30s} "
                        + (f"{us:8.2f} us" if us is not None else "ERROR " + err[:150]),
                        flush=True,
                    )
                del sets
                torch.cuda.empty_cache()
                with open(args.json, "w") as f:
                    json.dump(report, f, indent=1)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("--configs", required=True)
    c.add_argument("--json", required=True)
    c.add_argument("--seed", type=int, default=0)
    t = sub.add_parser("time")
    t.add_argument(
        "--modules",
        required=True,
        help="comma list: pp (the lab plan), base_sm120, base_sm90",
    )
    t.add_argument("--json", required=True)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument(
        "--deadline",
        type=float,
        default=0,
        help="Unix time after which no further shape is started",
    )
    sub.add_parser("plan")
    args = ap.parse_args(argv)
    if args.cmd == "plan":
        for row in plan():
            print(*row)
        names = sorted({r[3] for r in plan()})
        # the ablations go with the configurations they are made from
        names = [n for n in names if not re.search(r"_a\d$", n)] + [
            n for n in names if re.search(r"_a\d$", n)
        ]
        print(len(names), "configurations:", ",".join(names))
        return 0
    return cmd_check(args, argv) if args.cmd == "check" else cmd_time(args, argv)


if __name__ == "__main__":
    sys.exit(main())
