"""How close fit_splits comes to the best split count, on the shipped
module of one target: at batches the tables never measured, every sibling
of the table's kernel (the same family, tile, warps and stages, another
split count) timed by name, beside what the table names and what the entry
points run (fit_splits on this GPU's multiprocessors).

CUDA-graph replay, do_bench median, L2 flushed between calls, the faster
of two passes, the harness's own inputs. The output of the best sibling is
not checked here (gpu/splits.py checks the fitted ones); this is a timing
sweep of the cost model.

    python3 lab/regret/probe.py sm90 OUT.json     # DISABLE_MMA_V3=1 for sm120
    python3 lab/regret/probe.py sm90 OUT.json 140,200   # other batches
"""

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
REPS_MS = 60
HEADS = (16, 64)
TOPKS = (512, 2048)
BATCHES = (3, 6, 12, 20, 28, 40, 48, 56, 72, 88, 100, 112)


def main():
    target, out_path = sys.argv[1], sys.argv[2]
    batches = [int(b) for b in sys.argv[3].split(",")] if len(sys.argv) > 3 else BATCHES
    sys.path.insert(0, os.path.join(ROOT, "kernels", target))
    import harness as h

    mod = h.load_module(os.path.join(ROOT, "kernels", target, "sparse_mla_mma.py"))
    device = torch.device("cuda")
    sms = mod.device_sms(device)
    gen = torch.Generator(device=device)
    gen.manual_seed(1)
    scale = h.HEAD_DIM**-0.5
    rows = []
    for heads in HEADS:
        for topk in TOPKS:
            for batch in batches:
                table = mod.select(batch, topk, heads)
                fitted = mod.select(batch, topk, heads, sms)
                siblings = mod._SPLIT_SIBLINGS.get(fitted)
                if not siblings:
                    continue
                sets = h.timing_sets(batch, topk, heads, gen, device)
                times = {}
                for k, name in sorted(siblings.items()):
                    calls = [
                        (
                            lambda s=s, n=name: mod.sparse_decode_with(
                                n, s[2], s[1], s[3], s[4], scale
                            )
                        )
                        for s in sets
                    ]
                    try:
                        times[name] = min(
                            h.time_graph(calls, REPS_MS) for _ in range(2)
                        )
                    except Exception as err:  # a split count the shape cannot take
                        times[name] = None
                        print(f"  {name}: {type(err).__name__}: {str(err)[:120]}")
                    mod._PLANS.clear()
                if table not in times:  # a cluster-merged table entry
                    calls = [
                        (
                            lambda s=s: mod.sparse_decode_with(
                                table, s[2], s[1], s[3], s[4], scale
                            )
                        )
                        for s in sets
                    ]
                    times[table] = min(h.time_graph(calls, REPS_MS) for _ in range(2))
                    mod._PLANS.clear()
                ok = {n: t for n, t in times.items() if t is not None}
                best = min(ok, key=ok.get)
                row = dict(
                    heads=heads,
                    topk=topk,
                    batch=batch,
                    table=table,
                    fitted=fitted,
                    best=best,
                    times=times,
                    fitted_over_best=ok[fitted] / ok[best],
                    table_over_best=ok[table] / ok[best],
                )
                rows.append(row)
                with open(
                    out_path, "w"
                ) as f:  # as it goes: a time limit keeps the rows so far
                    json.dump(dict(target=target, sms=sms, rows=rows), f, indent=1)
                print(
                    f"H {heads:3d} topk {topk:5d} B {batch:3d} best {best:24s} {ok[best]:7.1f} | "
                    f"fitted {fitted:24s} x{row['fitted_over_best']:5.2f} | "
                    f"table {table:24s} x{row['table_over_best']:5.2f}",
                    flush=True,
                )
    with open(out_path, "w") as f:
        json.dump(dict(target=target, sms=sms, rows=rows), f, indent=1)
    fo = [r["fitted_over_best"] for r in rows]
    to = [r["table_over_best"] for r in rows]
    print(
        f"{target}: {len(rows)} shapes; fitted within x{max(fo):.2f} of the best "
        f"(best itself at {sum(f == 1 for f in fo)}), the table's within x{max(to):.2f}"
    )


if __name__ == "__main__":
    main()
