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
the harness's results format (each timing row cut to the fields `mlagen
select` reads, one row a line: every other field stays in its run's file):

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
  own;
* lab/heads (2026-12-02, after the day's last kernel change): every
  candidate configuration of both modules per cache at H 64, 32 and 16,
  batches 1, 16, 64 and 128, with its checks; its rows replace the older
  ones of the same configuration and shape;
* lab/e4m3 (2026-12-02, fourth session): lab/heads's second call (the
  sm_86 and sm_80 modules) run again after their e4m3 conversion became
  cheaper; the byte-reading targets' tables come from it;
* lab/onesm (2026-12-02, fifth session): the sm_120 module after its
  pipelined family took every register (maxnreg 255, so one program an SM
  on the H200 as on the card), every candidate per cache at H 64, 32 and
  16 and as the whole call at H 64 and 16, with their checks; its rows
  replace the older ones of the same configuration, entry and shape, and
  sm_89's tables come from them;
* lab/wsa's sweep (2026-12-02, seventh session): the sm_90 module once its
  ws_* configurations run the role-split consumers, those configurations,
  the wsc_* ones and the batch-1 tl.dot picks per cache at H 64, 32 and 16
  and as the whole call at H 16, 64 and 128 beside FlashMLA, batches 1 to
  128, with the ws_* checks; its rows replace the older ones of the same
  configuration, entry and shape, and every older ws_* row;
* lab/qreg16's sweep (2026-12-02, eighth session): the sm_120 module once
  its 16-head pipelined tile keeps six of Q's column groups in registers,
  each configuration of that tile per cache at 16 and 32 heads and as the
  whole call at 16 heads, with their checks; its rows replace every older
  row of that tile (its kernel changed), on sm_120 and sm_89;
* lab/wst's sweep (2026-12-02, ninth session): the sm_90 module once it has
  the narrow warp-specialised configurations (ws_h16_*, the heads on the
  MMAs' N side), those and the configurations its tables chose for up to
  32 heads before, per cache at H 16 and 32 and as the whole call at H 16,
  batches 1 to 128, with the ws_h16_* checks; its rows replace the older
  ones of the same configuration, entry and shape;
* lab/dqp's sweep (2026-12-03, sixteenth session): lab/wsa's sweep again
  once every warp-specialised producer of the sm_90 module dequantises
  with _dequant_store's PTX and finds pages by a shift; its rows replace
  the older ones of the same configuration, entry and shape (its per-cache
  pass ran out of time before H 16 at topk 2048 from B 16);
* lab/vpf's sweep (2026-12-03, eighteenth session): lab/wsa's sweep again
  once the 64-head role split's value group prefetches the tile after next
  into L2 in place of its producer; its rows replace the older ones of the
  same configuration, entry and shape, and every older ws_h64_* row (its
  per-cache pass ran out of time before H 16 at topk 2048 from B 8);
* lab/sweep16 (2026-12-04, twenty-second session): the sm_90 module's
  16-head candidates again (every ws_h16_* and mma_h16_* configuration per
  cache and as the whole call at H 16, batches 1 to 128, with the ws_h16_*
  checks), after the narrow kernel began signalling its combine
  (nineteenth session) and the bf16 combine took 128 registers
  (twenty-first); its rows replace the older ones of the same
  configuration, entry and shape (at topk 2048 per cache those were still
  lab/wst's, from before either change);
* lab/sweep120 (2026-12-04, twenty-second session): the sm_120 module's
  pipelined configurations per cache at H 16, 32 and 64 and as the whole
  call at H 16 and 64, batches 1 to 128, with their checks, after those
  tiles began signalling their combine and the bf16 combine took 128
  registers; its rows replace the older ones of the same configuration,
  entry and shape;
* lab/sweep64 (2026-12-04, twenty-third session): lab/wsa's set of sm_90
  configurations per cache at H 32 and 64 and as the whole call at H 64
  and 128 beside FlashMLA, batches 1 to 32 (where split calls, which the
  bf16 combine at 128 registers moved, are picked), with the ws_* checks;
  its rows replace the older ones of the same configuration, entry and
  shape (lab/vpf's there);
* lab/qreg16's sweep of the byte-reading module (2026-12-02, ninth
  session): the sm_86 module (sm_80's kernel code) once its 16-head
  pipelined tile keeps six of Q's column groups in registers, each
  configuration of that tile per cache at 16, 32 and 64 heads, with their
  checks; its rows replace every older row of that tile on sm_86 and sm_80;
* lab/sweepbytes (2026-12-04, twenty-third session): the sm_86 and sm_89
  modules' pipelined configurations and the tl.dot ones their tables pick
  at batch 1, and sm_80's two-buffer-set pipelined ones, per cache at H
  16, 32 and 64 and as the whole call at H 16 and 64, batches 1 to 128,
  with the pipelined checks, run without programmatic dependent launch as
  on those GPUs (gpu/nopdl.py), and in a second call every
  other tl.dot configuration at batch 1; its rows replace the older ones of
  the same configuration, entry and shape on sm_89, sm_86 and sm_80, and
  give sm_86 and sm_80 whole-call rows, so tables of their own;
* lab/relfit (2026-12-05, thirtieth session): the sm_120 module's batch-1
  candidates per cache at H 16 and 64 and as the whole call at H 16 and
  64, under Triton 3.6.0 (its rows replace the older ones of the same
  configuration, entry and shape) and under 3.7.1 and 3.8.0 (added, each
  row marked with its "triton": `mlagen select` breaks 3.6.0's near ties
  by them); the checks of every release count (a configuration failing
  under any of them is never chosen).

The targets no lent GPU has (sm_89, sm_86, sm_80) get selections from H200
runs of a module whose kernel code is theirs, with DISABLE_MMA_V3=1 (so the
MMAs are the mma.sync their GPUs run): a proxy for which configuration wins
where, not a measurement of their time (their SMs, clocks and memory
differ; each file's note says so). sm_100 keeps the static rule: its
tl.dot kernels use tcgen05 there, which nothing on the H200 stands for.

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
HEADS = "lab/heads/results"
# The byte-reading modules (sm_86, sm_80) re-timed after their e4m3
# conversion changed (lab/heads's second call, run again by lab/e4m3).
BYTES = "lab/e4m3/results"
# The sm_120 module with its pipelined family launched at maxnreg 255 (one
# program an SM, as on an sm_120 or sm_89 card): every candidate per cache
# and as the whole call (fifth session).
ONESM = "lab/onesm/results"
# The sm_90 module once its ws_* configurations run the role-split
# consumers (seventh session): those configurations, the wsc_* ones and the
# batch-1 tl.dot picks, per cache and as the whole call beside FlashMLA.
WSA = "lab/wsa/results/sweep"
# The sm_120 module once its 16-head pipelined tile keeps six of Q's column
# groups in registers (eighth session): each configuration of that tile per
# cache at 16 and 32 heads and as the whole call at 16 heads.
QREG16 = "lab/qreg16/results/sweep"
# The sm_90 module once it has the narrow warp-specialised configurations
# (ninth session): those and the ones its tables chose for up to 32 heads
# before, per cache at 16 and 32 heads and as the whole call at 16.
WST = "lab/wst/results/sweep"
# The sm_90 module once every warp-specialised producer dequantises with
# _dequant_store's PTX and finds pages by a shift (sixteenth session): the
# configurations lab/wsa's sweep times, re-timed by it. Its per-cache pass
# stopped at its time limit before H 16 at topk 2048 from B 16, where the
# older rows stay.
DQP = "lab/dqp/results/sweep"
# The sm_90 module once the 64-head role split's value group prefetches the
# tile after next and its producer no longer does (eighteenth session):
# lab/wsa's sweep again, stopped like lab/dqp's before H 16 at topk 2048
# from B 8.
VPF = "lab/vpf/results/sweep"
# The sm_90 module's 16-head candidates timed again after the narrow
# kernel's combine signal and the bf16 combine's register bound (twenty-
# second session): every ws_h16_* and mma_h16_* configuration at H 16.
SWEEP16 = "lab/sweep16/results"
# The sm_120 module's pipelined configurations timed again after their
# combine signal and the bf16 combine's register bound (twenty-second
# session): per cache at H 16, 32 and 64 and as the whole call at H 16 and
# 64, DISABLE_MMA_V3=1. sm_89 does not take these rows: without
# griddepcontrol its tiles run unsignalled (lab/sweepbytes timed them so).
SWEEP120 = "lab/sweep120/results"
# The sm_90 module's candidates above 16 heads timed again at batches 1 to
# 32 after the bf16 combine's register bound (twenty-third session): lab/wsa's
# set per cache at H 32 and 64 and as the whole call at H 64 and 128.
SWEEP64 = "lab/sweep64/results"
# The sm_86, sm_89 and sm_80 modules' pipelined configurations (and the
# batch-1 tl.dot picks) timed again without dependent launch, as those GPUs
# run them (twenty-third session).
SWEEPBYTES = "lab/sweepbytes/results"
SWEEPBYTES_B1 = "lab/sweepbytes/results/batch1"
# The sm_120 module's batch-1 candidates (the tl.dot tiles and the
# split-heavy pipelined ones) beside each other under the GPU's Triton
# 3.6.0, two passes (thirtieth session, lab/relfit): per cache at H 16 and
# 64 and as the whole call at H 16 and 64, B 1.
RELFIT = "lab/relfit/results"
# The sm_86 module (sm_80's kernel code) once its 16-head pipelined tile
# keeps six of Q's column groups in registers (ninth session): each
# configuration of that tile per cache at 16, 32 and 64 heads.
QREG16_BYTES = "lab/qreg16/results/sweep86"
# gpu/shipped.sh on that module (eighth session).
EIGHTH = "gpu/results/2026-12-02-h200-eighth"
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


def timing_key(row):
    """A timing row's cell: entry (per cache unless named), configuration,
    heads, batch, topk."""
    entry = row.get("entry", "per cache")
    return (entry, row["variant"], row.get("heads"), row["batch"], row["topk"])


def add_heads(out, target):
    """lab/heads's rows (the shipped module's candidates per cache at H 64,
    32 and 16, 2026-12-02, after every kernel change of the day) with their
    checks; they replace the older per-cache rows of the same configuration
    and shape."""
    new = load(f"{HEADS}/time-{target}.json")["timing"]
    keys = {timing_key(r) for r in new}
    out["timing"] = [r for r in out["timing"] if timing_key(r) not in keys]
    out["timing"] += new
    out["correctness"] += checks(load(f"{HEADS}/check-{target}.json")["correctness"])
    out["note"] += (
        f"; per cache at H 64, 32 and 16, {HEADS}/time-{target}.json replaces the "
        "older rows of the configurations and shapes it timed"
    )
    return out


def add_onesm(out):
    """lab/onesm's rows of the sm_120 module (per cache and whole call,
    every candidate, its pipelined family at maxnreg 255) with their
    checks; they replace the older rows of the same configuration, entry
    and shape, and every older row of the pipelined family or at a batch it
    did not time."""
    new = []
    for name in ("time", "whole"):
        run = load(f"{ONESM}/{name}-sm120.json")
        new += [r for r in run["timing"] if r.get("entry") != "one kernel"]
        out["correctness"] += checks(run["correctness"])
    keys = {timing_key(r) for r in new}
    batches = {r["batch"] for r in new}
    # The pipelined family's kernels were built differently before (ptxas's
    # own register bound): none of their older rows stands. Nor do the
    # other configurations' rows at batches lab/onesm did not time (8 and
    # 32), where they would be the only candidates.
    out["timing"] = [
        r
        for r in out["timing"]
        if timing_key(r) not in keys
        and not r["variant"].startswith("pp_")
        and r["batch"] in batches
    ]
    out["timing"] += new
    out["correctness"] += checks(load(f"{ONESM}/check-sm120.json")["correctness"])
    out["note"] += (
        f"; {ONESM} (the pipelined family at maxnreg 255, one program an SM) "
        "replaces the older rows of the configurations, entries and shapes it "
        "timed, and every older row of the pipelined family or at another batch"
    )
    return out


def sweep_rows(folder, target, names=("time", "whole"), keep=lambda row: True):
    """The timing rows of a sweep's harness files (folder/NAME-TARGET.json)
    that `keep` accepts, without the one-kernel rows the whole call is
    compared with."""
    rows = []
    for name in names:
        run = load(f"{folder}/{name}-{target}.json")
        rows += [r for r in run["timing"] if r.get("entry") != "one kernel" and keep(r)]
    return rows


def take(out, new, checked, note, drop=lambda row: False):
    """out with the timing rows `new` in place of the older rows of the same
    configuration, entry and shape, and of every row `drop` names, whose
    checks give way to `checked` as well."""
    keys = {timing_key(r) for r in new}
    out["timing"] = [
        r for r in out["timing"] if timing_key(r) not in keys and not drop(r)
    ] + new
    out["correctness"] = [r for r in out["correctness"] if not drop(r)]
    out["correctness"] += checks(checked)
    out["note"] += note
    return out


def take_sweep(
    out,
    folder,
    what,
    also="",
    drop=lambda row: False,
    target="sm90",
    keep=lambda row: True,
):
    """take() of a sweep's rows (folder/time-TARGET.json and
    whole-TARGET.json, those `keep` accepts) and of its checks, noted as
    `what` it timed (plus `also` where `drop` takes older rows too)."""
    return take(
        out,
        sweep_rows(folder, target, keep=keep),
        load(f"{folder}/check-{target}.json")["correctness"],
        f"; {folder} ({what}) replaces the older rows of the configurations, "
        f"entries and shapes it timed{also}",
        drop=drop,
    )


def add_wsa(out):
    """lab/wsa's sweep of the sm_90 module (per cache at H 64, 32 and 16,
    the whole call at H 16, 64 and 128 beside FlashMLA, batches 1 to 128)
    with the checks of its ws_* configurations; its rows replace the older
    ones of the same configuration, entry and shape, and every older ws_*
    row (the kernel those configurations run changed)."""
    return take_sweep(
        out,
        WSA,
        "the ws_* configurations with role-split consumers",
        also=", and every older row of a ws_* configuration",
        drop=lambda r: r["variant"].startswith("ws_"),
    )


def add_wst(out):
    """lab/wst's sweep of the sm_90 module (per cache at H 16 and 32, the
    whole call at H 16, batches 1 to 128) with the checks of its narrow
    ws_h16_* configurations; its rows replace the older ones of the same
    configuration, entry and shape."""
    return take_sweep(out, WST, "with the narrow ws_h16_* configurations")


def add_dqp(out):
    """lab/wsa's sweep run again on the sm_90 module with lab/dqp's producer
    (sixteenth session), with the checks of its ws_* configurations; its
    rows replace the older ones of the same configuration, entry and shape
    (per cache at H 16 and topk 2048 from B 16 it timed nothing: those keep
    lab/wst's rows)."""
    out["date"] = "2026-11-30 to 2026-12-03"
    return take_sweep(
        out,
        DQP,
        "every warp-specialised producer on _dequant_store's PTX, pages by a shift",
    )


def add_vpf(out):
    """lab/wsa's sweep run again on the sm_90 module with lab/vpf's value
    group prefetch (eighteenth session), with the checks of its ws_*
    configurations; its rows replace the older ones of the same
    configuration, entry and shape, and every older ws_h64_* row (the
    kernel those configurations run changed; where the sweep stopped, at
    H 16 and topk 2048, the narrow kernels keep lab/dqp's rows)."""
    return take_sweep(
        out,
        VPF,
        "the 64-head role split's value group prefetching the tile after next",
        also=", and every older row of a ws_h64_* configuration",
        drop=lambda r: r["variant"].startswith("ws_h64_"),
    )


def add_sweep16(out):
    """lab/sweep16: the sm_90 module's ws_h16_* and mma_h16_* configurations
    at H 16, per cache and as the whole call, batches 1 to 128, with the
    ws_h16_* checks (twenty-second session); its rows replace the older
    ones of the same configuration, entry and shape."""
    out["date"] = "2026-11-30 to 2026-12-04"
    return take_sweep(
        out,
        SWEEP16,
        "every 16-head candidate at H 16 after the narrow kernel's combine signal "
        "and the bf16 combine at 128 registers",
    )


def add_sweep120(out):
    """lab/sweep120: the sm_120 module's pp_* configurations per cache at H
    16, 32 and 64 and as the whole call at H 16 and 64, batches 1 to 128,
    with their checks (twenty-second session); its rows replace the older
    ones of the same configuration, entry and shape."""
    out["date"] = "2026-11-30 to 2026-12-04"
    return take_sweep(
        out,
        SWEEP120,
        "the pipelined configurations after their combine signal and the bf16 "
        "combine at 128 registers",
        target="sm120",
    )


def relfit_rows(triton):
    """lab/relfit's batch-1 timing rows under one Triton ("base": the GPU's
    3.6.0), the faster of its two passes a cell, and the checks of the
    whole calls it timed (passed in both)."""
    best, passed = {}, {}
    for rep in (1, 2):
        run = load(f"{RELFIT}/b1-{triton}-{rep}.json")
        for r in run["correctness"]:
            k = (r["variant"], r["case"])
            passed[k] = passed.get(k, True) and r["passed"]
        for r in run["timing"]:
            if r.get("entry") == "one kernel" or r.get("impl", "mlagen") != "mlagen":
                continue
            k = timing_key(r)
            if k not in best or r.get("graph_us", 1e9) < best[k].get("graph_us", 1e9):
                best[k] = r
    checked = [{"variant": v, "case": c, "passed": ok} for (v, c), ok in passed.items()]
    return list(best.values()), checked


def add_relfit(out):
    """lab/relfit's batch-1 rows of the sm_120 module (thirtieth session):
    under Triton 3.6.0 they replace the older rows of the same
    configuration, entry and shape; under 3.7.1 and 3.8.0 (SGLang
    0.5.18-0.5.23's) they are added marked with their release, so that
    `mlagen select` breaks 3.6.0's near ties by them."""
    rows, checked = relfit_rows("base")
    out = take(
        out,
        rows,
        checked,
        f"; {RELFIT} (the batch-1 candidates under Triton 3.6.0, the faster of "
        "two passes) replaces the older rows of the configurations, entries "
        "and shapes it timed, and adds the same candidates' rows under 3.7.1 "
        "and 3.8.0, marked with their release (they break near ties only)",
    )
    for triton in ("3.7.1", "3.8.0"):
        rows, checked = relfit_rows(triton)
        out["timing"] += [dict(r, triton=triton) for r in rows]
        out["correctness"] += checked
    return out


def add_sweep64(out):
    """lab/sweep64: lab/wsa's set of sm_90 configurations per cache at H 32
    and 64 and as the whole call at H 64 and 128 beside FlashMLA, batches 1
    to 32, with the ws_* checks (twenty-third session); its rows replace the
    older ones of the same configuration, entry and shape. The per-cache
    rows its whole-call pass times on the way (H 16, B 1, topk 512) are
    left out: lab/sweep16 timed every 16-head candidate there."""
    return take_sweep(
        out,
        SWEEP64,
        "the candidates above 16 heads at batches 1 to 32 after the bf16 "
        "combine at 128 registers",
        keep=lambda r: r.get("entry") is not None or r.get("heads") != 16,
    )


def add_sweepbytes(out, modules):
    """lab/sweepbytes's rows of `modules` (sm86, sm89, sm80: its harness
    files of those modules), from both its calls, with the first call's
    checks, into a proxy's selection input; they replace the older rows of
    the same configuration, entry and shape. The second call re-timed the
    other tl.dot configurations at batch 1 (unchanged kernels, whose older
    checks stand)."""
    out["date"] = "2026-12-02 to 2026-12-04"
    for module in modules:
        out = take(
            out,
            sweep_rows(SWEEPBYTES, module) + sweep_rows(SWEEPBYTES_B1, module),
            load(f"{SWEEPBYTES}/check-{module}.json")["correctness"],
            f"; {SWEEPBYTES} (the {module} module's pipelined configurations per "
            "cache and as the whole call, and its tl.dot ones at batch 1, "
            "without dependent launch as on that GPU) replaces the older rows "
            "of the configurations, entries and shapes it timed",
        )
    return out


def pp_h16(row):
    """Whether a row is of the 16-head pipelined tile."""
    return row["variant"].startswith("pp_h16_")


def add_qreg16(out):
    """lab/qreg16's sweep of the sm_120 module's 16-head pipelined
    configurations (per cache at H 16 and 32, the whole call at H 16) and
    the shipped run's rows of them (the whole call at H 64 too), with their
    checks; these replace every older row of those configurations, whose
    kernel changed (per cache at 64 heads, where they were timed before and
    never the fastest, they are no longer candidates). The sweep's whole-call
    rows of a batch-1 tl.dot configuration are added beside the older ones."""
    shipped = load(f"{EIGHTH}/sm120-time.json")
    new = [r for r in shipped["timing"] if pp_h16(r) and r.get("heads") == 64]
    new += sweep_rows(QREG16, "sm120")
    out["timing"] = [r for r in out["timing"] if not pp_h16(r)] + new
    out["correctness"] = [r for r in out["correctness"] if not pp_h16(r)]
    out["correctness"] += checks(load(f"{QREG16}/check-sm120.json")["correctness"])
    out["correctness"] += checks(r for r in shipped["correctness"] if pp_h16(r))
    out["note"] += (
        f"; {QREG16} and {EIGHTH} (the 16-head pipelined tile with Q's first six "
        "column groups in registers) replace every older row of that tile"
    )
    return out


def add_qreg16_bytes(out):
    """lab/qreg16's sweep of the sm_86 module's 16-head pipelined
    configurations (per cache at H 16, 32 and 64) with their checks; these
    replace every older row of that tile (from lab/e4m3, before its kernel
    changed)."""
    return take(
        out,
        sweep_rows(QREG16_BYTES, "sm86", names=("time",)),
        load(f"{QREG16_BYTES}/check-sm86.json")["correctness"],
        f"; {QREG16_BYTES} (the 16-head pipelined tile with Q's first six column "
        "groups in registers) replaces every older row of that tile",
        drop=pp_h16,
    )


def proxy(target, timings, check_files, note):
    """A target no lent GPU has, from H200 runs (DISABLE_MMA_V3=1) of
    modules whose kernel code is the target's: every timing and check row of
    those files (mlagen select keeps the configurations the target has)."""
    runs = [load(path) for path in timings]
    first = runs[0]
    out = {
        "target": target,
        # What every selection's source names: say it is a stand-in.
        "gpu": f"{first['gpu']} standing in for {target}, DISABLE_MMA_V3=1",
        "capability": first["capability"],
        "torch": first["torch"],
        "triton": first["triton"],
        "date": first["date"],
        "note": note,
        "correctness": [],
        "timing": [],
    }
    for run in runs:
        out["timing"] += run["timing"]
    for path in check_files:
        out["correctness"] += checks(load(path)["correctness"])
    return out


def proxies():
    """sm_89's selection from the sm_120 module's lab/onesm rows (the two
    modules' kernel code is the same, Triton having e4m3 on both, and so is
    the one program an SM their shared memory allows); sm_86's
    and sm_80's from lab/heads's second call as lab/e4m3 re-ran it (one
    kernel code, reading the cache as bytes): sm_86's module's rows, and for
    sm_80 the same beside its own candidates (two-stage batch-1 ones, and
    the 64-head pipelined tile with two buffer sets, which only its shared
    memory holds). On all three, lab/qreg16's rows of the 16-head pipelined
    tile, then lab/sweepbytes's, timed without the dependent launch those
    GPUs lack, replace the older ones they cover."""
    sm86 = [f"{BYTES}/time-sm86-pp.json", f"{BYTES}/time-sm86-mma.json"]
    sm86_check = [f"{BYTES}/check-sm86.json"]
    sm89 = proxy(
        "sm_89",
        [f"{ONESM}/time-sm120.json", f"{ONESM}/whole-sm120.json"],
        [f"{ONESM}/check-sm120.json"],
        f"{ONESM}: the sm_120 module on the H200 (DISABLE_MMA_V3=1), whose kernel "
        "code the sm_89 module shares; not measured on an sm_89 GPU",
    )
    sm86_proxy = proxy(
        "sm_86",
        sm86,
        sm86_check,
        f"{BYTES}: the sm_86 module on the H200 (DISABLE_MMA_V3=1); not measured "
        "on an sm_86 GPU",
    )
    sm80_proxy = proxy(
        "sm_80",
        sm86 + [f"{BYTES}/time-sm80-mma.json", f"{BYTES}/time-sm80-pp.json"],
        sm86_check + [f"{BYTES}/check-sm80.json"],
        f"{BYTES}: the sm_80 module on the H200 (DISABLE_MMA_V3=1) for its "
        "two-stage batch-1 candidates and its two-buffer-set 64-head pipelined "
        "ones, and the sm_86 module's rows (the same kernel code; select keeps "
        "the configurations sm_80 has); not measured on an sm_80 GPU",
    )
    return (
        ("sm89", add_sweepbytes(add_qreg16(sm89), ("sm89",))),
        ("sm86", add_sweepbytes(add_qreg16_bytes(sm86_proxy), ("sm86",))),
        (
            "sm80",
            add_sweepbytes(add_qreg16_bytes(sm80_proxy), ("sm86", "sm80")),
        ),
    )


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, results in (
        (
            "sm90",
            add_sweep64(
                add_sweep16(
                    add_vpf(
                        add_dqp(
                            add_wst(add_wsa(add_heads(add_run(sm90(), "sm90"), "sm90")))
                        )
                    )
                )
            ),
        ),
        (
            "sm120",
            add_relfit(
                add_sweep120(
                    add_qreg16(
                        add_onesm(
                            add_heads(
                                add_words(add_run(sm120(), "sm120", before_words)),
                                "sm120",
                            )
                        )
                    )
                )
            ),
        ),
        *proxies(),
    ):
        path = os.path.join(OUT, f"selection-input-{name}.json")
        with open(path, "w") as f:
            f.write(as_input(results))
        print(f"{path}: {len(results['timing'])} timing rows")
    return 0


# The timing fields `mlagen select` reads (gen.Timing); a row's other fields
# (errors, FLOP/s, floors, host times) stay in the run it came from.
SELECT_FIELDS = (
    "variant",
    "entry",
    "heads",
    "batch",
    "topk",
    "us",
    "graph_us",
    "passed",
    "declined",
    "error",
    "triton",
)


def as_input(results):
    """results as the file `mlagen select` reads: each timing row cut to
    the fields it uses, one row (and one correctness row) a line, so the
    file stays small and a re-made input's diff reads row by row."""
    lines = ["{"]
    for key, value in results.items():
        if key in ("correctness", "timing"):
            if key == "timing":
                value = [{k: r[k] for k in SELECT_FIELDS if k in r} for r in value]
            rows = [f"  {json.dumps(r)}" for r in value]
            lines.append(f" {json.dumps(key)}: [\n" + ",\n".join(rows) + "\n ],")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)},")
    lines[-1] = lines[-1].rstrip(",")
    return "\n".join(lines) + "\n}\n"


if __name__ == "__main__":
    sys.exit(main())
