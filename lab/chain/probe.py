"""Where a small-batch call's time goes: lab/chain's stamped modules
(prepare.py) replayed as CUDA graphs with the L2 flushed before each
replay, as the harness times them.

For each shape: the base module's and the stamped module's call timed as
the harness times them (do_bench over graph replays; the stamps' own
cost), then REPLAYS replays of a graph [stamp kernel, the stamped call,
stamp kernel], each after an L2 flush, and their stamps read back. Each
interval is the median over replays of the median (or min, max) over a
kernel's programs, in ns of %globaltimer, relative to the first stamp
kernel's start. A graph of the two stamp kernels alone gives the interval
a launch costs with nothing between.

    python3 lab/chain/probe.py 90 OUT.json      # base90 / stamp90
    DISABLE_MMA_V3=1 python3 lab/chain/probe.py 120 OUT.json
    DISABLE_MMA_V3=1 SHAPES=64:512:16 python3 lab/chain/probe.py 120 OUT.json stamp120s

A third argument names the stamped copy (stamp<target> unless given);
SHAPES (H:topk:B, comma-separated) replaces the target's shapes. Each
shape's row also keeps one replay's stamps program by program (`raw`:
the decode programs' start, loop end, last store and SM; the combine
programs' start, wait, end and SM), the replay whose last stamp is the
median.
"""

import json
import os
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPS_MS = 100
REPLAYS = 40
SHAPES = {
    "90": [
        (16, 512, 16),
        (16, 512, 64),
        (16, 2048, 16),
        (16, 2048, 64),
        (16, 512, 128),
    ],
    "120": [(16, 512, 16), (16, 512, 64), (64, 512, 16), (64, 512, 64), (64, 2048, 64)],
}
# Consumer / pipelined-kernel slots (prepare.py); the producer's, sm_90 only.
DECODE = {
    "start": 0,
    "length": 2,
    "q_or_idx": 4,
    "first_tile": 6,
    "loop_end": 8,
    "stored": 10,
}
PRODUCER = {"p_start": 14, "p_idx": 16, "p_words": 18, "p_arrive": 20}


def load(name):
    sys.path.insert(0, os.path.join(HERE, name))
    import harness as h

    sys.path.pop(0)
    del sys.modules["harness"]
    mod = h.load_module(os.path.join(HERE, name, "sparse_mla_mma.py"))
    return h, mod


def med(xs):
    return statistics.median(xs) if xs else None


def one_replay(S, nprog, ncomb, pre, post, sm90):
    """The intervals of one replay (ns from the first stamp kernel's start)."""
    S = S.tolist() if hasattr(S, "tolist") else S
    t0 = S[pre]
    r = {"post": S[post] - t0}
    progs = []
    for p in range(nprog):
        b = 32 * p
        if S[b] == 0:
            return None  # the selected kernel writes no stamps
        row = {k: S[b + s] - t0 for k, s in DECODE.items()}
        row["cycles"] = S[b + 11] - S[b + 1]
        if sm90:
            row.update({k: S[b + s] - t0 for k, s in PRODUCER.items()})
        row["sm"] = S[b + 12]
        progs.append(row)
    r["raw_decode"] = [
        (pr["start"], pr["loop_end"], pr["stored"], pr["sm"]) for pr in progs
    ]
    for k in progs[0]:
        if k == "sm":
            continue
        vals = [pr[k] for pr in progs]
        r[k + "_min"], r[k + "_med"], r[k + "_max"] = min(vals), med(vals), max(vals)
    # Per program phases, then their median across programs.
    phases = [
        ("length", "start"),
        ("q_or_idx", "length"),
        ("first_tile", "q_or_idx"),
        ("loop_end", "first_tile"),
        ("stored", "loop_end"),
        ("stored", "start"),
    ]
    if sm90:
        phases += [
            ("p_start", "start"),
            ("p_idx", "p_start"),
            ("p_words", "p_idx"),
            ("p_arrive", "p_words"),
            ("first_tile", "p_arrive"),
        ]
    for a, b in phases:
        r[f"d:{b}->{a}"] = med([pr[a] - pr[b] for pr in progs])
    r["ns_per_cycle"] = med(
        [
            (pr["stored"] - pr["start"]) / pr["cycles"]
            for pr in progs
            if pr["cycles"] > 0
        ]
    )
    if ncomb:
        base = 1 << 19
        cs = [
            (
                S[base + 16 * q] - t0,
                S[base + 16 * q + 3] - t0,
                S[base + 16 * q + 6] - t0,
                S[base + 16 * q + 2],
            )
            for q in range(ncomb)
        ]
        r["raw_combine"] = cs
        for i, k in enumerate(("c_start", "c_waited", "c_end")):
            vals = [c[i] for c in cs]
            r[k + "_min"], r[k + "_med"], r[k + "_max"] = (
                min(vals),
                med(vals),
                max(vals),
            )
    return r


def main():
    target, out_path = sys.argv[1], sys.argv[2]
    stamped_copy = sys.argv[3] if len(sys.argv) > 3 else f"stamp{target}"
    shapes = SHAPES[target]
    if os.environ.get("SHAPES"):
        shapes = [
            tuple(map(int, s.split(":"))) for s in os.environ["SHAPES"].split(",")
        ]
    sm90 = target == "90"
    h, base = load(f"base{target}")
    _, mod = load(stamped_copy)
    device = torch.device("cuda")
    h.settle_graph_replay(device)
    gen = torch.Generator(device=device)
    gen.manual_seed(1)
    # The plans key the buffer by their tensors' device, cuda:0.
    stamps = mod._stamps(torch.device("cuda", 0))
    pre, post = mod.STAMP_SLOTS - 8, mod.STAMP_SLOTS - 4
    # Compiled before any capture.
    mod._stamp_kernel[(1,)](stamps, pre)
    mod._stamp_kernel[(1,)](stamps, post)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=device)
    x = torch.zeros(1, device=device)
    floor = min(h.time_graph([lambda: x.add_(1)], REPS_MS) for _ in range(2))

    def stamped(call, replays):
        g = torch.cuda.CUDAGraph()
        call()
        torch.cuda.synchronize()
        with torch.cuda.graph(g):
            mod._stamp_kernel[(1,)](stamps, pre)
            call()
            mod._stamp_kernel[(1,)](stamps, post)
        for _ in range(replays):
            stamps.zero_()
            flush.zero_()
            g.replay()
            torch.cuda.synchronize()
            yield stamps.cpu().numpy()

    # Two stamp kernels with nothing between.
    empty = [int(S[post] - S[pre]) for S in stamped(lambda: None, REPLAYS)]
    result = {"floor_us": floor, "empty_ns": med(empty), "shapes": []}
    print(
        f"sm_{target}: graph of one tiny kernel {floor:.1f} us; "
        f"stamp kernel to stamp kernel, nothing between: {med(empty):.0f} ns"
    )
    for heads, topk, batch in shapes:
        sets = h.timing_sets(batch, topk, heads, gen, device)
        scale = h.HEAD_DIM**-0.5
        config = mod.select(batch, topk, heads)

        def calls(m):
            return [
                (
                    lambda q=q, kc=kc, idx=idx, tl_=tl_: m.sparse_decode(
                        q, kc, idx, tl_, scale
                    )
                )
                for _, kc, q, idx, tl_ in sets
            ]

        t_base = min(h.time_graph(calls(base), REPS_MS) for _ in range(2))
        t_stamp = min(h.time_graph(calls(mod), REPS_MS) for _ in range(2))
        plan = next(p for p in mod._PLANS.values() if getattr(p, "kernels", None))
        nprog = 1
        for g in plan.kernels[0].xyz:
            nprog *= g
        ncomb = 0
        if len(plan.kernels) > 1:
            ncomb = plan.kernels[1].xyz[0] * plan.kernels[1].xyz[1]
        reps = []
        for S in stamped(calls(mod)[0], REPLAYS):
            r = one_replay(S, nprog, ncomb, pre, post, sm90)
            if r is None:
                break
            reps.append(r)
        row = dict(
            heads=heads,
            topk=topk,
            batch=batch,
            config=config,
            programs=nprog,
            combine_programs=ncomb,
            base_us=t_base,
            stamped_us=t_stamp,
        )
        if reps:
            raw = ("raw_decode", "raw_combine")
            row["intervals_ns"] = {
                k: med([r[k] for r in reps]) for k in reps[0] if k not in raw
            }
            row["replays"] = len(reps)
            middle = sorted(reps, key=lambda r: r["post"])[len(reps) // 2]
            row["raw"] = {k: middle.get(k) for k in raw}
        result["shapes"].append(row)
        iv = row.get("intervals_ns", {})
        print(
            f"H {heads} topk {topk} B {batch} {config}: base {t_base:.1f} us, "
            f"stamped {t_stamp:.1f} us, {nprog} programs, {ncomb} combine programs"
        )
        for k, v in iv.items():
            print(f"    {k:28s} {v:10.1f}")
        mod._PLANS.clear()
        base._PLANS.clear()
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
