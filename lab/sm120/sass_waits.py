"""Where does a kernel's loop first wait for its gather loads? A static SASS check.

The prototype issues the next tile's global loads before the current tile's
MMAs so the MMAs hide their latency. That only works if nothing waits for
those loads until the tile's dequantise-and-store: on NVIDIA GPUs a warp
waits on a scoreboard (the ``&req={n}`` of cuobjdump's sm_100+ listing),
and every variable-latency instruction that wrote the same scoreboard
(``&wr=0xn``) must have completed. This finds the loop (the backward BRA),
the gather loads in it (LDG at the column-group offsets 0x40..0x1c0), their
scoreboards, and the first instruction after them that waits on each.

    python3 lab/sm120/compile_check.py pp_h64_t32_k1_w8_b1_c2_s2 --caps 120 --keep /tmp/s
    python3 lab/sm120/sass_waits.py /tmp/s/*.sm120.sass

A first wait a few dozen instructions after the loads (a PRMT unpacking the
raw bytes, or an HMMA whose LDSM shares the scoreboard) means the loop pays
the gather's memory latency every tile. Needs the scoreboard annotations,
which cuobjdump prints for sm_120 code, not for sm_90.
"""

import re
import sys

INSTR = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([^;&?]*)")
GATHER = re.compile(r"LDG\..*\+0x(40|80|c0|100|140|180|1c0)\]")


def parse(path):
    out = []
    with open(path) as f:
        for line in f:
            m = INSTR.match(line)
            if not m:
                continue
            wr = re.search(r"&wr=0x(\d)", line)
            req = re.search(r"&req=\{([0-9,]+)\}", line)
            out.append(
                dict(
                    addr=int(m.group(1), 16),
                    text=m.group(2).strip(),
                    wr=int(wr.group(1)) if wr else None,
                    req=[int(x) for x in req.group(1).split(",")] if req else [],
                )
            )
    return out


def loop(instrs):
    """The body of the last loop: from a backward branch's target to the branch."""
    body = None
    for i in instrs:
        m = re.search(r"\bBRA(?:\.U)?\s+(?:!?U?P\d+,\s*)?0x([0-9a-f]+)", i["text"])
        if m and int(m.group(1), 16) < i["addr"]:
            lo, hi = int(m.group(1), 16), i["addr"]
            body = [x for x in instrs if lo <= x["addr"] <= hi]
    return body


def first_waits(path):
    """(scoreboard, waiting instruction, instructions after the last gather load, wrapped)."""
    body = loop(parse(path))
    if not body:
        return None
    loads = [k for k, i in enumerate(body) if GATHER.search(i["text"])]
    if not loads:
        return []
    last, n, rows = loads[-1], len(body), []
    for sb in sorted({body[k]["wr"] for k in loads if body[k]["wr"] is not None}):
        for step in range(1, n):
            j = (last + step) % n
            if sb in body[j]["req"]:
                rows.append((sb, body[j]["text"], step, last + step >= n))
                break
    return rows


def main(argv=None):
    paths = sys.argv[1:] if argv is None else argv
    for path in paths:
        rows = first_waits(path)
        name = path.rsplit("/", 1)[-1]
        if rows is None:
            print(f"{name}: no loop found")
        elif not rows:
            print(f"{name}: no gather load in the loop (or no scoreboard annotations)")
        for sb, text, step, wrapped in rows or []:
            where = "next iteration" if wrapped else "same iteration"
            print(
                f"{name}: gather loads on SB{sb}, first waited on by {text[:48]!r}, "
                f"{step} instructions after the last load ({where})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
