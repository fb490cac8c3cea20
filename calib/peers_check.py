"""Check the emitted harness's peers on a CPU (CI has no GPU).

The harness times mlagen beside what SGLang runs without it (FlashMLA,
FlashInfer, SGLang's own Triton path) where those are importable, and
checks each against the same float64 reference. Without a GPU, this runs
its correctness section (the tiny whole-call cases) twice:

1. Nothing importable: every built-in peer is reported absent with its
   reason, this folder's copy of SGLang's kernel stands in for SGLang's
   path and passes, and the run succeeds.
2. With calib/testdata/peers on the path: a stand-in ``flash_mla`` package
   (FlashMLA's interface and checks, plain torch inside), the stand-in
   SGLang tree of gpu/dispatch (``--sglang``), a correct peer file and one
   10% off. The FlashMLA adapter must pass the cases FlashMLA takes and
   decline the others, SGLang's path and the correct file must pass, the
   wrong one must fail, and the harness must still exit 0 (a peer's failure
   is reported, not counted).

    python3 calib/peers_check.py kernels/sm120/harness.py
"""

import contextlib
import importlib.util
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# Triton 3.6's interpreter multiplies bf16 dot operands as raw bits:
# calib/interp.py's fix, installed by importing it (the module's own entry
# points run here too).
import interp  # noqa: E402,F401

ROOT = os.path.dirname(HERE)
PEERS = os.path.join(HERE, "testdata", "peers")
SGLANG_TREE = os.path.join(ROOT, "gpu", "dispatch", "tree", "python")


def load(path):
    spec = importlib.util.spec_from_file_location("harness_under_check", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(harness, argv):
    """harness.main(argv) with its output kept: (exit status, report, output)."""
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), "mlagen-peers-check.json")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = harness.main(argv + ["--out", out])
    with open(out) as f:
        return code, json.load(f), buf.getvalue()


def rows(report, peer):
    return [r for r in report["correctness"] if r["variant"] == "peer:" + peer]


def check_declines(harness, expect):
    """The module declines a bucket the selection gives to a peer: the same
    call that supports_full() accepts is refused, with a log line naming the
    peer, once the whole call's table names the peer there; defers_full()
    (asked by mlagen's route guard, here with the same keywords) says so,
    logs it at INFO, and is False otherwise, without raising on arguments
    that are not SGLang's."""
    import logging

    import torch

    bundle = harness.load_module(os.path.join(harness.HERE, harness.BUNDLE))
    case = harness.whole_call_cases(True)[0]
    kwargs, _ = harness.whole_call_inputs(
        case, torch.Generator().manual_seed(1), torch.device("cpu")
    )
    expect(
        bundle.supports_full(**kwargs), f"supports_full accepts {case[0]} as selected"
    )
    expect(not bundle.defers_full(**kwargs), "defers_full keeps it as selected")
    expect(
        not bundle.defers_full(None, None, None, None, None, "512", None),
        "defers_full is False, not an exception, on arguments SGLang does not pass",
    )
    lines = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    logging.getLogger().addHandler(handler)
    bundle._log.setLevel(logging.INFO)
    bundle.FULL_SELECTION = tuple(
        tuple(tuple("peer:flashinfer" for _ in row) for row in table)
        for table in bundle.FULL_SELECTION
    )
    bundle._PLANS.clear()
    expect(
        not bundle.supports_full(**kwargs),
        "supports_full declines a bucket the table gives to a peer",
    )
    expect(
        any("the selection gives this shape to flashinfer" in line for line in lines),
        f"and says so in the log: {lines}",
    )
    expect(bundle.defers_full(**kwargs), "defers_full defers it to SGLang")
    expect(
        any(
            "gives this shape to flashinfer" in line
            and line.endswith("SGLang's backend choice runs")
            for line in lines
        ),
        f"and says so in the log: {lines}",
    )


def main():
    harness_path = sys.argv[1]
    harness = load(harness_path)
    base = ["--device", "cpu", "--tiny", "--variants", "selected"]
    problems = []

    def expect(ok, what):
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        if not ok:
            problems.append(what)

    code, report, out = run(harness, base + ["--peers", "auto"])
    present = {p["name"]: p for p in report["peers"]}
    expect(code == 0, f"no peer importable: exit 0 (got {code})")
    for name in ("flashmla", "flashinfer", "sglang-triton"):
        p = present.get(name, {})
        expect(
            p.get("present") is False and p.get("why"),
            f"{name} reported absent with a reason: {p.get('why')!r}",
        )
    simt = rows(report, "simt-baseline")
    cases = len(harness.whole_call_cases(True))
    expect(
        len(simt) == cases and all(r["passed"] for r in simt),
        f"simt-baseline stands in for SGLang's path: {sum(r['passed'] for r in simt)} of {cases} cases pass",
    )

    sys.path.insert(0, PEERS)
    os.environ["MLAGEN_KERNELS"] = os.path.dirname(os.path.abspath(harness_path))
    peers = [
        "flashmla",
        "sglang-triton",
        "file:" + os.path.join(PEERS, "stub_ok.py"),
        "file:" + os.path.join(PEERS, "stub_wrong.py"),
    ]
    argv = base + ["--peers", ",".join(peers), "--sglang", SGLANG_TREE]
    code, report, out = run(harness, argv)
    expect(code == 0, f"a failing peer does not fail the run: exit 0 (got {code})")
    fm = rows(report, "flashmla")
    taken = [c[0] for c in harness.whole_call_cases(True) if "576units" in c[0]]
    expect(
        [r["case"] for r in fm] == taken and all(r["passed"] for r in fm),
        f"flashmla takes exactly the cases with 576-byte pages and 64 or 128 heads, and passes: {[(r['case'], r['passed']) for r in fm]}",
    )
    expect(
        "declined: 20 heads (FlashMLA takes 64 or 128)" in out,
        "flashmla declines 20 heads, saying why",
    )
    for name in ("sglang-triton", "stub-ok"):
        got = rows(report, name)
        expect(
            len(got) == cases and all(r["passed"] for r in got),
            f"{name}: {sum(r['passed'] for r in got)} of {cases} cases pass",
        )
    wrong = rows(report, "stub-wrong")
    expect(
        wrong and not any(r["passed"] for r in wrong),
        f"stub-wrong (10% off) fails every case it takes: {[(r['case'], r['passed']) for r in wrong]}",
    )
    expect(
        all(r["rel_err"] > 0.05 for r in wrong),
        "stub-wrong's relative errors are about 0.1",
    )
    check_declines(harness, expect)
    if problems:
        print(out)
        print(f"peers check: {len(problems)} problems")
        return 1
    print("peers check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
