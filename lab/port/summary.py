"""Merge the device call's harness reports (lab/port/device.sh) into one JSON
and print the short table: per kernel module, how many configurations were
checked, per cache and whole call, through the module's own entry points,
supports(), the dequantisation probe, the worst errors; then the sm120
build's SASS (HMMA, no HGMMA). Exit 1 when anything failed or is missing.

    python3 lab/port/summary.py --work /tmp/k3a-work --out gpu-check.json
"""

import argparse
import glob
import importlib.util
import json
import os
import sys


def configs_of(d):
    spec = importlib.util.spec_from_file_location(
        "b_" + d, os.path.join("kernels", d, "sparse_mla_mma.py")
    )
    b = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(b)
    return list(b.CONFIGS)


def merge(work, d):
    reports = []
    for path in sorted(glob.glob(os.path.join(work, f"{d}-*.json"))):
        with open(path) as f:
            reports.append(json.load(f))
    m = {
        "module": d,
        "reports": len(reports),
        "correctness": [],
        "dispatch": {},
        "supports": {},
        "dequant": [],
    }
    for r in reports:
        m.setdefault("gpu", r.get("gpu"))
        m.setdefault("capability", r.get("capability"))
        m.setdefault("torch", r.get("torch"))
        m.setdefault("triton", r.get("triton"))
        m.setdefault("date", r.get("date"))
        m["correctness"] += r["correctness"]
        for row in r["dispatch"]:
            m["dispatch"][
                (row.get("entry", "per cache"), row["selected"], row["case"])
            ] = row
        for row in r["supports"]:
            m["supports"][(row["page_stride"], row["batch"], row["topk"])] = row
        if r.get("dequant"):
            m["dequant"].append(r["dequant"])
    m["dispatch"] = list(m["dispatch"].values())
    m["supports"] = list(m["supports"].values())
    return m


def row_of(m, wanted):
    c = m["correctness"]
    per = [r for r in c if r.get("entry", "per cache") == "per cache"]
    full = [r for r in c if r.get("entry") == "whole call"]
    seen = {r["variant"] for r in c}
    missing = [n for n in wanted if n not in seen]
    rel = max((r["rel_err"] for r in c), default=0.0)
    lse = max((r["lse_err"] for r in c), default=0.0)
    ok = lambda rows: f"{sum(r['passed'] for r in rows)}/{len(rows)}"  # noqa: E731
    dq = m["dequant"][0] if m["dequant"] else None
    return {
        "module": m["module"],
        "configs": f"{len(seen & set(wanted))}/{len(wanted)}",
        "per cache": ok(per),
        "whole call": ok(full),
        "entry points": ok(m["dispatch"]),
        "supports": ok(m["supports"]),
        "dequant": "-" if dq is None else f"{dq['path']}: {dq['wrong']} wrong",
        "worst rel": f"{rel:.1e}",
        "worst lse": f"{lse:.1e}",
        "missing": missing,
        "failed": sorted(
            {
                f"{r.get('variant', r.get('selected'))} {r.get('entry', 'per cache')} {r['case']}"
                for r in c + m["dispatch"] + []
                if not r["passed"]
            }
        ),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    wanted = {
        "sm90": configs_of("sm90") + ["simt_baseline"],
        "sm120": configs_of("sm120"),
        "sm80": [],
    }
    # device.sh picks the sm_80 configurations it runs.
    sm80 = os.path.join(args.work, "wanted-sm80.txt")
    if os.path.exists(sm80):
        with open(sm80) as f:
            wanted["sm80"] = f.read().split()
    merged = {d: merge(args.work, d) for d in wanted}
    rows = [row_of(merged[d], wanted[d]) for d in wanted]
    sass_path = os.path.join(args.work, "sass-sm120.json")
    sass = {"rows": []}
    if os.path.exists(sass_path) and os.path.getsize(sass_path):
        with open(sass_path) as f:
            sass = json.load(f)
    decode = [r for r in sass["rows"] if "decode" in r["kernel"]]
    sass_ok = bool(decode) and all(r["hmma"] > 0 and r["hgmma"] == 0 for r in decode)
    bad = sum(bool(r["missing"] or r["failed"]) for r in rows) + (not sass_ok)
    with open(args.out, "w") as f:
        json.dump({"summary": rows, "sass_sm120": sass, "modules": merged}, f, indent=1)
    cols = [
        "module",
        "configs",
        "per cache",
        "whole call",
        "entry points",
        "supports",
        "dequant",
        "worst rel",
        "worst lse",
    ]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r[c]) for c in cols))
        for what in ("missing", "failed"):
            if r[what]:
                print(
                    f"  {what}: {', '.join(r[what][:12])}{' ...' if len(r[what]) > 12 else ''}"
                )
    kinds = sorted({r["kernel"] for r in decode})
    print(
        f"sm120 build on the H200: {len(decode)} decode cubins ({', '.join(kinds)}), "
        f"HMMA in {sum(r['hmma'] > 0 for r in decode)}, HGMMA in {sum(r['hgmma'] > 0 for r in decode)}: "
        f"{'ok' if sass_ok else 'FAIL'}"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
