"""The short table of lab/words/device2.sh: per cache, the best passing
pipelined configuration of v3 and v2 at each shape against the sm_90
module's selection (CUDA-graph µs), and v3's correctness.

    python3 lab/words/summary2.py DIR
"""

import json
import os
import sys


def load(d, name):
    p = os.path.join(d, name)
    return json.load(open(p)) if os.path.exists(p) else None


def best(r, prefix):
    """(heads, topk, batch) -> (graph µs, config): the fastest passing
    configuration whose name starts with prefix."""
    out = {}
    for t in r["timing"] if r else []:
        if t.get("window") or "impl" in t or t.get("passed") is False:
            continue
        if not t["variant"].startswith(prefix):
            continue
        k = (t["heads"], t["topk"], t["batch"])
        g = t.get("graph_us") or t.get("us")
        if g and (k not in out or g < out[k][0]):
            out[k] = (g, t["variant"])
    return out


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"


def print_checks(d, names):
    """One line per harness results file: its correctness rows, the
    dequantisation check and supports(); each failing row after it."""
    for name in names:
        r = load(d, name)
        if r is None:
            print(name, "missing")
            continue
        rows = r["correctness"]
        ok = sum(bool(x.get("passed")) for x in rows)
        rel = max((x.get("rel_err") or 0 for x in rows), default=0)
        lse = max((x.get("lse_err") or 0 for x in rows), default=0)
        q = r.get("dequant") or {}
        sup = r.get("supports") or []
        print(
            f"{name}: {ok}/{len(rows)} pass, worst rel {rel:.1e}, lse {lse:.1e}; "
            f"dequant {q.get('wrong')} of {q.get('values')} differ; "
            f"supports {sum(x['passed'] for x in sup)}/{len(sup)}"
        )
        for x in rows:
            if not x.get("passed"):
                print("  FAIL", x.get("variant"), x.get("entry"), x.get("case"))


def main(d):
    print_checks(d, ("v3-check.json", "v3-check-sel.json"))
    v3, v2, s90 = load(d, "tv3.json"), load(d, "tv2.json"), load(d, "t90.json")
    base = best(s90, "")
    print("\nper cache, CUDA-graph µs; the fastest passing pp config of each:")
    print(
        f"{'H':>3} {'topk':>5} {'B':>4} | {'sm90':>7} | {'v2':>7} {'/sm90':>6} | {'v3':>7} {'/sm90':>6} {'v3/v2':>6} | v3 config"
    )
    b3, b2 = best(v3, "pp_"), best(v2, "pp_")
    for k in sorted(b3, key=lambda k: (-k[0], k[1], k[2])):
        g90 = base.get(k, (None,))[0]
        g3, c3 = b3[k]
        g2 = b2.get(k, (None,))[0]
        print(
            f"{k[0]:>3} {k[1]:>5} {k[2]:>4} | {g90 or 0:7.1f} | {g2 or 0:7.1f} {ratio(g2, g90):>6} | "
            f"{g3:7.1f} {ratio(g3, g90):>6} {ratio(g3, g2):>6} | {c3}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
