"""lab/bounds: what issue 26's 1.5x leaves a 64-head sm_120 tile, from runs.

Reads the tile's MMA phase with its softmax (bench.py's `pp_tile+softmax`,
132 programs) and the two modules' per-cache times at 64 heads, B 64 and
128, topk 512 and 2048, and prints, per cell over the bar:

- what one 32-token tile adds to the sm_120 module's call at that batch
  (the time at topk 2048 less that at topk 512, over the tiles between:
  48 at B 128, split 1; 24 at B 64, split 2), and what stays outside the
  tile loop;
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

CELLS = ((64, 2048), (128, 512), (128, 2048))
# Tiles a program runs at topk 512 and 2048 with the tables' split counts.
SPLIT = {64: 2, 128: 1}
TILE = 32


def module_times(path, layer):
    """{(topk, batch): µs} of the 64-head per-cache rows of a results file."""
    with open(path) as f:
        d = json.load(f)
    out = {}
    if "timing" in d:
        if layer:
            raise SystemExit(f"{path}: a harness file has no layer times here")
        for r in d["timing"]:
            if r.get("heads") == 64 and "graph_us" in r and r.get("entry") is None:
                out[(r["topk"], r["batch"])] = r["graph_us"]
    else:
        for r in d["rows"]:
            if r["heads"] == 64:
                out[(r["topk"], r["batch"])] = r["now_layer" if layer else "now"]
    return out


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
    t90 = module_times(a.sm90, a.layer)
    print(f"bounds: {b['meta']['gpu']}, {b['meta']['date']}")
    print(f"MMA phase {loops['pp_tile']:.3f} µs a tile, with the softmax {chain:.3f}")
    print(
        "| cell | sm_120 µs | sm_90 µs | ratio | tile now µs | outside the loop µs "
        "| 1.5x µs | a tile may take µs | left beside MMAs and softmax µs (now) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for batch, topk in CELLS:
        tiles = {k: k // SPLIT[batch] // TILE for k in (512, 2048)}
        tile = (t120[(2048, batch)] - t120[(512, batch)]) / (tiles[2048] - tiles[512])
        outside = t120[(512, batch)] - tiles[512] * tile
        bar = 1.5 * t90[(topk, batch)]
        may = (bar - outside) / tiles[topk]
        print(
            f"| B {batch}, topk {topk} | {t120[(topk, batch)]:.1f} "
            f"| {t90[(topk, batch)]:.1f} | {t120[(topk, batch)] / t90[(topk, batch)]:.2f} "
            f"| {tile:.3f} | {outside:.1f} | {bar:.1f} | {may:.3f} "
            f"| {may - chain:+.3f} ({tile - chain:.3f}) |"
        )


if __name__ == "__main__":
    main()
