"""Check on the CPU how each kernel module fits its tables' split counts to
a GPU (fit_splits, through select and select_full with `sms`).

The tables were measured on the H200 (132 multiprocessors) at each batch
bucket's largest batch. There the fitted choice must be the table's own,
or the rule would overrule a measurement. Between those batches, and on
GPUs of 8 to 188 multiprocessors, it must keep the table's kernel
(family, tile, warps, stages) and change only the split count, and only
to one the module's own cost model scores cheaper (waves of programs
times a program's tiles and fixed cost, plus a combine). And it must
give what the named cases below say: where the table leaves most of the
GPU idle (worked out by hand from the tables), where lab/regret timed
every split count (the fastest one), and where lab/splits36 timed 3 or 6
splits against the count the fit chose without them.

And how the entry points learn the count (device_sms): MLAGEN_SMS is
taken where it narrows the driver's count, taken as the driver's count
(with a warning) where it would widen it, and refused with a message when
it is not a count; the
plan keys carry the count of the call's stream, and a plan is fitted to
the count it is built for. What the driver reports for a green context's
stream is checked on a GPU (gpu/splits.py --sms).

    python3 calib/splits.py kernels/sm120 [kernels/sm90 ...]
"""

import contextlib
import importlib.util
import logging
import os
import sys

import torch
import triton
from qdesc import load_harness  # calib/, the script's own folder, is on sys.path

# The H200's multiprocessors: what every measured table was timed on.
MEASURED_SMS = 132
# GPUs the modules serve: RTX 4060 (24), RTX 5060 Ti (36), DGX Spark's GB10
# and RTX 5070 (48), L4 (58), A10 (72), RTX 3090 (82), A100 (108), RTX 4090
# (128), H100/H200 (132), L40S (142), RTX 5090 (170), RTX PRO 6000 (188);
# and 8, a green context's small share.
SMS = (8, 24, 36, 48, 58, 72, 82, 108, 128, 132, 142, 170, 188)
HEADS = (16, 32, 64, 128)
BATCHES = range(1, 257)
TOPKS = (128, 512, 1000, 2048)
# Whole call: SGLang's window of 128 plus the extra cache's topk.
TOKENS = (640, 1128, 2176)

# (target, entry, heads, batch, tokens, sms, the configuration fit_splits
# must give), each from the tables by hand: the table's split count leaves
# most of the GPU idle and a sibling fills it.
CASES = (
    # 64 heads B 65 gets B 128's one split: 65 programs of 64 tiles; two
    # splits are 130 programs of 32.
    ("sm_120", "per cache", 64, 65, 2048, 132, "pp_h64_t32_k2_w8_s1"),
    # B 17 gets B 64's two splits: 34 programs; six are 102 (lab/splits36
    # timed six against four at B 21: 1.30x).
    ("sm_120", "per cache", 64, 17, 2048, 132, "pp_h64_t32_k6_w8_s1"),
    # B 2 gets B 16's eight: 16 programs of 8 tiles; 32 splits are 64 of 2.
    ("sm_120", "per cache", 64, 2, 2048, 132, "pp_h64_t32_k32_w8_s1"),
    # An RTX PRO 6000 at B 16: 8 splits still (16 would be 256 programs).
    ("sm_120", "per cache", 64, 16, 2048, 188, "pp_h64_t32_k8_w8_s1"),
    # An A100-sized GPU (108) at B 16: 8 splits are 128 programs, two
    # waves of 8 tiles; 6 splits are 96 programs of 11 tiles, one wave.
    ("sm_120", "per cache", 64, 16, 2048, 108, "pp_h64_t32_k6_w8_s1"),
    ("sm_120", "whole call", 64, 65, 2176, 132, "pp_h64_t32_k2_w8_s1"),
    # sm_90, 64 heads: B 33-64 merge two splits in clusters (B 64: 128
    # programs); at B 33 four splits fill the GPU (132 programs).
    ("sm_90", "per cache", 64, 33, 2048, 132, "ws_h64_t64_k4_w8_s2"),
    ("sm_90", "per cache", 64, 64, 512, 132, "wsc_h64_t64_k2_w8_s2"),
    # sm_90, 16 heads (narrow kernel, one program a row and split).
    ("sm_90", "per cache", 16, 65, 2048, 132, "ws_h16_t64_k2_w4_s3"),
    ("sm_90", "per cache", 16, 33, 512, 132, "ws_h16_t64_k4_w4_s3"),
    ("sm_90", "whole call", 16, 65, 2176, 132, "ws_h16_t64_k2_w4_s2"),
    # B 40 at topk 2048: one wave of thirds (120 programs) beats both three
    # waves of eighths and one wave of halves (lab/splits36 at B 38-39:
    # 1.20x the pipelined kernel's eight, 1.26x the narrow ws kernel's
    # two, 1.27x the 64-head ws kernel's two).
    ("sm_120", "per cache", 16, 40, 2048, 132, "pp_h16_t64_k3_w8_s1"),
    ("sm_90", "per cache", 16, 40, 2048, 132, "ws_h16_t64_k3_w4_s3"),
    ("sm_90", "per cache", 64, 39, 2048, 132, "ws_h64_t64_k3_w8_s2"),
    # A 16-head program costs fewer of its tiles than a 64-head one
    # (_PROGRAM_TILES), and the fastest split counts lab/regret timed say
    # by how much: two waves of half rows beat one wave and a few
    # programs of whole rows at B 136, topk 512.
    ("sm_120", "per cache", 16, 136, 512, 132, "pp_h16_t64_k2_w8_s1"),
    ("sm_90", "per cache", 16, 136, 512, 132, "ws_h16_t64_k2_w4_s3"),
)


def load(folder):
    path = os.path.join(folder, "sparse_mla_mma.py")
    spec = importlib.util.spec_from_file_location(
        "mlagen_" + os.path.basename(folder), path
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def representatives(bounds, open_end):
    """Each bucket's largest value: where its table entry was measured."""
    return [b if b is not None else open_end for b in bounds]


def base(c):
    return (c.family, c.block_h, c.block_t, c.num_warps, c.num_stages)


def tiles(c, tokens):
    return -(-(-(-tokens // c.split_k)) // c.block_t)


def check_module(m):
    """The number of failures, each printed."""
    failed = 0
    measured = "H200" in m.__doc__
    entries = (
        (
            "per cache",
            lambda h, b, t, s: m.select(b, t, h, s),
            m.HEAD_BOUNDS,
            m.BATCH_BOUNDS,
            m.TOPK_BOUNDS,
            2048,
            TOPKS,
        ),
        (
            "whole call",
            lambda h, b, t, s: m.select_full(h, b, t, s),
            m.FULL_HEAD_BOUNDS,
            m.FULL_BATCH_BOUNDS,
            m.FULL_TOPK_BOUNDS,
            2176,
            TOKENS,
        ),
    )
    for entry, pick, hb, bb, tb, open_topk, grid_tokens in entries:
        if measured:
            # Where each entry was measured, the rule gives the table's own.
            # The open heads tier was measured at 64 heads, or at 128 where
            # a tier ends at 64 (the sm_90 whole call beside FlashMLA's).
            for h in representatives(hb, 128 if 64 in hb else 64):
                for b in representatives(bb, 128):
                    for t in representatives(tb, open_topk):
                        table, fitted = pick(h, b, t, None), pick(h, b, t, MEASURED_SMS)
                        if table != fitted:
                            failed += 1
                            print(
                                f"FAIL {m.TARGET} {entry} H {h} B {b} tokens {t}: "
                                f"measured {table}, fitted on {MEASURED_SMS} SMs {fitted}"
                            )
        for sms in SMS:
            for h in HEADS:
                for b in BATCHES:
                    for t in grid_tokens:
                        table, fitted = pick(h, b, t, None), pick(h, b, t, sms)
                        why = judge(m, table, fitted, h, b, t, sms)
                        if why:
                            failed += 1
                            print(
                                f"FAIL {m.TARGET} {entry} H {h} B {b} tokens {t} "
                                f"on {sms} SMs: {table} -> {fitted}: {why}"
                            )
    for target, entry, h, b, t, sms, want in CASES:
        if target != m.TARGET:
            continue
        got = (
            m.select(b, t, h, sms)
            if entry == "per cache"
            else m.select_full(h, b, t, sms)
        )
        if got != want:
            failed += 1
            print(
                f"FAIL {target} {entry} H {h} B {b} tokens {t} on {sms} SMs: {got}, not {want}"
            )
    return failed


@contextlib.contextmanager
def told_sms(value):
    """MLAGEN_SMS set to `value` (None: unset), the module's count cache
    emptied around it."""
    was = os.environ.pop("MLAGEN_SMS", None)
    if value is not None:
        os.environ["MLAGEN_SMS"] = value
    try:
        yield
    finally:
        os.environ.pop("MLAGEN_SMS", None)
        if was is not None:
            os.environ["MLAGEN_SMS"] = was


def check_counts(m, folder):
    """The number of failures of how the entry points learn and use the
    multiprocessor count, each printed."""
    failures = []
    # The driver's answer stands in for a GPU of 104 multiprocessors (a green
    # context's share, say): MLAGEN_SMS narrows it, never widens it.
    real_driver, m._driver_sms = m._driver_sms, lambda index, stream: 104
    logged = []
    handler = logging.Handler()
    handler.emit = lambda record: logged.append(record.getMessage())
    m._log.addHandler(handler)
    try:
        for told, want, warns in (
            (None, 104, False),
            ("72", 72, False),
            (" 104 ", 104, False),
            ("132", 104, True),
            ("0", None, False),
            ("72.5", None, False),
        ):
            m._STREAM_SMS.clear()
            m._LOGGED.clear()
            logged.clear()
            with told_sms(told):
                try:
                    got = m._stream_sms(0, 12345)
                except ValueError as e:
                    got = None if "MLAGEN_SMS" in str(e) else f"ValueError {e}"
            if got != want:
                failures.append(f"MLAGEN_SMS={told!r}: {got}, not {want}")
            said = [s for s in logged if "MLAGEN_SMS" in s and str(want) in s]
            if bool(said) != warns:
                failures.append(
                    f"MLAGEN_SMS={told!r} on 104 SMs logged {logged!r}"
                    + (", not a warning naming the count taken" if warns else "")
                )
    finally:
        m._driver_sms = real_driver
        m._log.removeHandler(handler)
        m._STREAM_SMS.clear()
        m._LOGGED.clear()
    # A shape whose fit differs between an A10's count and the H200's.
    harness = load_harness(folder)
    shape = next(
        (
            (h, b)
            for h in (64, 16)
            for b in range(1, 129)
            if m.select(b, 512, h, 72) != m.select(b, 512, h, MEASURED_SMS)
        ),
        None,
    )
    if shape is None:
        failures.append("no shape at topk 512 whose fit differs on 72 and 132 SMs")
    else:
        heads, batch = shape
        gen = torch.Generator().manual_seed(0)
        q = torch.randn(batch, 1, heads, harness.HEAD_DIM, generator=gen)
        q = q.to(torch.bfloat16)
        pad = harness.page_pad(64)
        _, k, i, n = harness.cache_inputs(64, pad, batch, 512, "full", gen, "cpu")
        was, triton.knobs.runtime.interpret = triton.knobs.runtime.interpret, True
        try:
            for sms in (72, MEASURED_SMS):
                plan = m._per_cache_plan(None, q, k, i, n, sms)
                want = m._served(m._PER_CACHE, m.select(batch, 512, heads, sms), heads)
                if plan.message != want:
                    failures.append(
                        f"H {heads} B {batch} planned on {sms} SMs: "
                        f"{plan.message!r}, not {want!r}"
                    )
            real = m._call_sms
            m._call_sms = lambda q: 72
            try:
                keys = (
                    m._call_key(m._PER_CACHE, q, k, i, n),
                    m._full_key(None, q, k, i, n, None, 512, None, None, None),
                )
            finally:
                m._call_sms = real
            for key in keys:
                if key[-1] != 72:
                    failures.append(
                        f"a plan key ends {key[-1]!r}, not the stream's count"
                    )
        finally:
            triton.knobs.runtime.interpret = was
    for line in failures:
        print(f"FAIL {m.TARGET} multiprocessor count: {line}")
    return len(failures)


def judge(m, table, fitted, heads, batch, tokens, sms):
    """Why `fitted` is not an acceptable fit of `table` ("" when it is): the
    same kernel with another split count, whose call is shorter than the
    table's by waves of programs times a program's tiles and fixed cost
    (plus the combine), the module's own constants."""
    if table == fitted:
        return ""
    a, b = m.CONFIGS.get(table), m.CONFIGS.get(fitted)
    if a is None or b is None:
        return "a peer or the SIMT kernel was changed"
    if base(a) != base(b):
        return "another kernel, not another split count"
    rows = batch * -(-heads // b.block_h)

    def cost(c):
        waves = -(-rows * c.split_k // sms)
        combine = m._COMBINE_TILES if c.split_k > 1 else 0
        program = m._PROGRAM_TILES.get(
            (c.family, c.block_h), max(m._PROGRAM_TILES.values())
        )
        return waves * (tiles(c, tokens) + program) + combine

    if cost(b) >= cost(a):
        return f"costs {cost(b)} tiles against the table's {cost(a)}"
    return ""


def main(folders):
    failed = 0
    for folder in folders:
        m = load(folder)
        n = check_module(m) + check_counts(m, folder)
        print(f"{m.TARGET}: fit_splits {'ok' if n == 0 else f'{n} failures'}")
        failed += n
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
