"""lab/bounds: what issue 26's 1.5x leaves a 64-head sm_120 tile, from runs.

Reads the tile's MMA phase with its softmax (bench.py's `pp_tile+softmax`,
132 programs) and the two modules' per-cache times at 64 heads, B 64 and
128, topk 512 and 2048, and prints, per cell over the bar:

- what one tile adds to the sm_120 module's call at that batch (the time
  at topk 2048 less that at topk 512, over the tiles a program runs
  between: 48 at B 128 with the tables' 32-token tile and split 1, 24 at
  B 64 with split 2; read from the configuration each row names, which
  must be the same at both topk), and what stays outside the tile loop;
- what a tile may take for the call to be 1.5x the sm_90 module's, with
  that outside time held;
- how much of that is left beside the MMA phase and softmax (negative:
  they alone take more).

Module times come from either
  a harness's `--json` file pair (sm120 and sm90, `timing` rows, graph_us)
  or lab/today's pair (`rows`, `now` or `now_layer` with --layer).

Usage:
  python3 lab/bounds/allowance.py BOUNDS.json SM120.json SM90.json [--layer]
"""

import argparse
import json
import re

CELLS = ((64, 2048), (128, 512), (128, 2048))


def module_times(path, layer):
    """{(topk, batch): (µs, configuration)} of the 64-head per-cache rows
    of a results file."""
    with open(path) as f:
        d = json.load(f)
    out = {}
    if "timing" in d:
        if layer:
            raise SystemExit(f"{path}: a harness file has no layer times here")
        for r in d["timing"]:
            if r.get("heads") == 64 and "graph_us" in r and r.get("entry") is None:
                out[(r["topk"], r["batch"])] = (r["graph_us"], r["variant"])
    else:
        for r in d["rows"]:
            if r["heads"] == 64:
                us = r["now_layer" if layer else "now"]
                out[(r["topk"], r["batch"])] = (us, r["config_now"])
    return out


def tiles(config, topk):
    """Tiles one program of a configuration (`..._t<T>_k<SPLIT>_...`) runs
    over topk tokens."""
    m = re.search(r"_t(\d+)_k(\d+)_", config)
    if not m:
        raise SystemExit(f"{config}: no tile size and split count in its name")
    block_t, split = int(m.group(1)), int(m.group(2))
    return topk // split // block_t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bounds")
    ap.add_argument("sm120")
    ap.add_argument("sm90")
    ap.add_argument("--layer", action="store_true", help="lab/today's layer times")
    a = ap.parse_args()
    with open(a.bounds) as f:
        b = json.load(f)
    loops = {r["loop"]: r["us_per_iter"] for r in b["rows"] if r["programs"] > 1}
    chain = loops["pp_tile+softmax"]
    t120 = module_times(a.sm120, a.layer)
    t90 = {k: us for k, (us, _) in module_times(a.sm90, a.layer).items()}
    print(f"bounds: {b['meta']['gpu']}, {b['meta']['date']}")
    print(f"MMA phase {loops['pp_tile']:.3f} µs a tile, with the softmax {chain:.3f}")
    print(
        "| cell | sm_120 µs | sm_90 µs | ratio | tile now µs | outside the loop µs "
        "| 1.5x µs | a tile may take µs | left beside MMAs and softmax µs (now) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for batch, topk in CELLS:
        (short, c_short), (long, c_long) = t120[(512, batch)], t120[(2048, batch)]
        if c_short != c_long:
            raise SystemExit(f"B {batch}: {c_short} at topk 512, {c_long} at 2048")
        n = {k: tiles(c_long, k) for k in (512, 2048)}
        tile = (long - short) / (n[2048] - n[512])
        outside = short - n[512] * tile
        us = t120[(topk, batch)][0]
        bar = 1.5 * t90[(topk, batch)]
        may = (bar - outside) / n[topk]
        print(
            f"| B {batch}, topk {topk} | {us:.1f} | {t90[(topk, batch)]:.1f} "
            f"| {us / t90[(topk, batch)]:.2f} | {tile:.3f} | {outside:.1f} "
            f"| {bar:.1f} | {may:.3f} | {may - chain:+.3f} ({tile - chain:.3f}) |"
        )


if __name__ == "__main__":
    main()
