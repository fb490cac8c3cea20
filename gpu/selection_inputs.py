"""The committed H200 measurements the shipped selections come from, as one
harness results file per target, for `mlagen select`.

The selections take their cells from every run that timed the shipped
modules' configurations, and from the lab runs that timed configurations
at several head counts and through the whole call before the harness did:

* gpu/results/run31-sm90.json, run24-sm120.json: every configuration per
  cache at H 64 (2026-11-30);
* helper K1's lab/sm120 run 3 (the pipelined family at H 16 and 64, per
  cache, DISABLE_MMA_V3=1) and helper K2's lab/fused run 2 (the whole call
  of the sm_90 module at H 16, 64 and 128), 2026-12-01;
* gpu/results/2026-12-02-h200 (gpu/shipped.sh): each shipped module
  through its own entry points, per cache at H 16 and 64 and as the whole
  call, beside the peers timed on the same inputs (FlashMLA and SGLang's
  own Triton path on the sm_90 run); the timed shapes' checks too.

This script copies their timing and correctness rows, as measured, into
the harness's results format:

* lab configuration names become the module's where the kernel is the same
  (K1's pp_h64_t32_k8_w8_b1_c2_s2 is pp_h64_t32_k8_w8_s1: one K buffer set,
  two score chains, two 16-token halves at BLOCK_T 32); others (ablations,
  the lab-only epilogues and pipelines, tiles the sweep does not hold)
  keep their lab name, which no fitting variant has, so select ignores them;
* K1's rows of the shipped sm_120 module (base_sm120, its own selection by
  batch and topk) are that selection's configuration;
* K2's rows of the fused whole call are "entry": "whole call" rows whose
  topk is the call's tokens (window 128 + extra 512 or 2048);
* the lab rows were timed under CUDA-graph replay only: their "us" is the
  graph time too;
* the 2026-12-02 rows are the harness's own, unchanged (SGLang's Triton
  path, with the gate off, is a peer that never wins there), except the
  sm_120 module's whole-call rows: they timed only the configurations its
  per-cache tables pick at the call's tokens, at batches 1, 16, 64 and
  128, so the whole call keeps those tables (with their 8 and 32 buckets);
* the pipelined family changed later that day (its raw tile carried as
  32-bit words, lab/words): its rows from K1's run 3 and from the
  2026-12-02 run are dropped, and lab/words run 2's take their place
  (every pp configuration of the shipped sm_120 module per cache at H 16
  and 64, batches 1 to 128, DISABLE_MMA_V3=1), with run 1's correctness
  rows of the same kernels; and lab/words run 4's whole call of every
  pipelined configuration and of the Triton ones the tables pick at batch
  1 (H 16 and 64, batches 1 to 128, window 128 + extra 512 and 2048,
  each row checked), from which the sm_120 whole call gets tables of its
  own.

    python3 gpu/selection_inputs.py       # writes gpu/results/selection-input-sm*.json
    mlagen select gpu/results/selection-input-sm120.json
"""

import importlib.util
import json
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT = os.path.join(ROOT, "gpu", "results")
RUN = "gpu/results/2026-12-02-h200"
WORDS = "lab/words/results"
PP_LAB = re.compile(r"^pp_h(\d+)_t(\d+)_k(\d+)_w(\d+)_b(\d)_c2(_s2)?$")


def load(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return json.load(f)


def module_name(lab):
    """The emitted module's name of a K1 lab configuration, or the lab name
    where the module has no such kernel."""
    m = PP_LAB.match(lab)
    if not m:
        return lab
    h, t, k, w, bufs, halves = m.groups()
    if bool(halves) != (int(t) == 32):  # the module splits exactly 32-token tiles
        return lab
    return f"pp_h{h}_t{t}_k{k}_w{w}_s{bufs}"


def base_sm120_select():
    """The selection of the sm_120 module K1 ran beside the lab kernels."""
    path = os.path.join(ROOT, "lab", "sm120", "base_sm120.py")
    spec = importlib.util.spec_from_file_location("base_sm120", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.select


def header(base, note):
    return {
        "target": base["target"],
        "gpu": base["gpu"],
        "capability": base["capability"],
        "torch": base["torch"],
        "triton": base["triton"],
        "date": "2026-11-30 to 2026-12-02",
        "note": note,
        "correctness": list(base["correctness"]),
        "timing": [dict(r) for r in base["timing"]],
    }


def sm120():
    base = load("gpu/results/run24-sm120.json")
    run3 = load("lab/sm120/results/2026-12-01-run3-h200.json")
    out = header(
        base,
        "gpu/results/run24-sm120.json (every configuration, H 64, 2026-11-30) and "
        "lab/sm120/results/2026-12-01-run3-h200.json (the pipelined family and the "
        "module's own selection at H 16 and 64, DISABLE_MMA_V3=1; graph times), "
        "copied by gpu/selection_inputs.py; and the shipped module through its entry "
        f"points, {RUN}/sm120-time.json",
    )
    select = base_sm120_select()
    for r in run3["correctness"]:
        out["correctness"].append(
            {
                "variant": module_name(r["variant"]),
                "case": r["case"],
                "passed": r["passed"],
            }
        )
    for r in run3["timing"]:
        if r.get("error") or r["variant"] in ("base_sm90", "pipe_decode"):
            continue
        name = r["variant"]
        name = (
            select(r["batch"], r["topk"]) if name == "base_sm120" else module_name(name)
        )
        if name.startswith("pp_"):
            continue  # the kernel has changed since: lab/words's rows
        out["timing"].append(
            {
                "variant": name,
                "heads": r["heads"],
                "batch": r["batch"],
                "topk": r["topk"],
                "us": r["graph_us"],
                "graph_us": r["graph_us"],
            }
        )
    return out


def sm90():
    base = load("gpu/results/run31-sm90.json")
    run2 = load("lab/fused/results/run2/time.json")
    check = load("lab/fused/results/run2/check.json")
    out = header(
        base,
        "gpu/results/run31-sm90.json (every configuration per cache, H 64, 2026-11-30) and "
        "lab/fused/results/run2 (the whole call at H 16, 64 and 128, 2026-12-01; graph "
        "times), copied by gpu/selection_inputs.py; and the shipped module through its "
        f"entry points beside FlashMLA, {RUN}/sm90-time.json",
    )
    for r in check["check"]:
        if r["target"] == "sm90":
            out["correctness"].append(
                {"variant": r["config"], "case": r["case"], "passed": r["passed"]}
            )
    for r in run2["timing"]:
        if r["target"] != "sm90" or r["path"] != "fused":
            continue
        out["timing"].append(
            {
                "variant": r["config"],
                "entry": "whole call",
                "heads": r["heads"],
                "batch": r["batch"],
                "topk": r["tokens"],
                "us": r["graph_us"],
                "graph_us": r["graph_us"],
            }
        )
    return out


def checks(rows):
    """Correctness rows as the selection input keeps them."""
    return [
        {"variant": r["variant"], "case": r["case"], "passed": r["passed"]}
        for r in rows
    ]


def add_run(out, name, keep=lambda row: True):
    """The rows of the 2026-12-02 run of a shipped module (its check file's
    rows and its timing file's, timed shapes' checks included); of the
    timing rows, those `keep` accepts."""
    for kind in ("check", "time"):
        run = load(f"{RUN}/{name}-{kind}.json")
        out["correctness"] += checks(run["correctness"])
        if kind == "time":
            out["timing"] += [r for r in run["timing"] if keep(r)]
    return out


def before_words(row):
    """The sm_120 rows of the 2026-12-02 run that still stand: not the
    whole call (timed only on the configurations the per-cache tables pick
    at its tokens, and at fewer batches), not the pipelined family (whose
    kernels changed later that day: add_words)."""
    return row.get("entry") != "whole call" and not row["variant"].startswith("pp_")


def add_words(out):
    """lab/words's rows of the sm_120 module: run 2's pipelined family per
    cache, run 1's checks of the same kernels, run 4's whole call of every
    configuration with its checks."""
    out["correctness"] += checks(load(f"{WORDS}/run1/new-check.json")["correctness"])
    out["timing"] += load(f"{WORDS}/run2/tv2.json")["timing"]
    whole = load(f"{WORDS}/run4/whole.json")
    out["timing"] += whole["timing"]
    out["correctness"] += checks(whole["correctness"])
    out["note"] += (
        f"; the pipelined family's rows from {WORDS}/run2/tv2.json (its kernels "
        f"as shipped since, 2026-12-02), checked in {WORDS}/run1/new-check.json; "
        f"the whole call from {WORDS}/run4/whole.json"
    )
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, results in (
        ("sm90", add_run(sm90(), "sm90")),
        ("sm120", add_words(add_run(sm120(), "sm120", before_words))),
    ):
        path = os.path.join(OUT, f"selection-input-{name}.json")
        with open(path, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")
        print(f"{path}: {len(results['timing'])} timing rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
