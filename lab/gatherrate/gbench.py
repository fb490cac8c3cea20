"""How fast can one SM gather random 576-byte token rows, by access pattern?

A microbenchmark (plain Triton, no MMA): each program gathers n_tiles tiles
of 64 random rows of a 576-byte-row buffer (about 600 MB, as the harness's
largest caches) and folds them into a checksum, one program per SM or
fewer. The patterns:
  g64:  each row as nine 64-byte pieces, one load instruction a piece
        (4 threads a row, 8 rows a warp instruction: the kernels' gather);
  c128: each row as four 128-byte pieces and one of 64 (8 threads a row);
  c128a: as c128 on rows 640 bytes apart (every piece one whole line);
  g64-L2, c128-L2: g64 and c128 over 16,384 rows (9.4 MB, L2-resident);
each at depth 1 (a tile's loads, then its sum) and depth 2 (two tiles'
loads, then their sums), the next tile's indices loaded one tile ahead;
16 programs, one an SM, then two and four an SM (depth 1, 8 warps).
Prints GB/s per program (bytes gathered / time / programs) and in all.
"""

import sys

try:
    import torch
except ImportError:  # compile checks without torch
    torch = None
import triton
import triton.language as tl


@triton.jit
def _piece(BUF, base, off: tl.constexpr, WORDS: tl.constexpr):
    w = tl.arange(0, WORDS)
    p = (BUF + base + off).to(tl.pointer_type(tl.int32))
    return tl.load(p[:, None] + w[None, :])


@triton.jit
def _tile(BUF, rows, ROW: tl.constexpr, MODE: tl.constexpr):
    base = tl.multiple_of(rows.to(tl.int64) * ROW, 64)
    if MODE == 0:
        a = _piece(BUF, base, 0, 16)
        for g in tl.static_range(1, 9):
            a += _piece(BUF, base, g * 64, 16)
        return tl.sum(a, 1)
    else:
        a = _piece(BUF, base, 0, 32)
        for g in tl.static_range(1, 4):
            a += _piece(BUF, base, g * 128, 32)
        return tl.sum(a, 1) + tl.sum(_piece(BUF, base, 512, 16), 1)


@triton.jit
def gather_kernel(
    IDX, BUF, OUT, n_tiles, ROW: tl.constexpr, MODE: tl.constexpr, DEPTH: tl.constexpr
):
    pid = tl.program_id(0)
    offs = tl.arange(0, 64)
    idx = IDX + pid.to(tl.int64) * n_tiles * 64
    acc = tl.zeros([64], tl.int32)
    rows = tl.load(idx + offs)
    if DEPTH == 1:
        for t in range(n_tiles):
            nxt = tl.load(idx + ((t + 1) % n_tiles) * 64 + offs)
            acc += _tile(BUF, rows, ROW, MODE)
            rows = nxt
    else:
        rows2 = tl.load(idx + 64 + offs)
        for t in range(0, n_tiles, 2):
            n1 = tl.load(idx + ((t + 2) % n_tiles) * 64 + offs)
            n2 = tl.load(idx + ((t + 3) % n_tiles) * 64 + offs)
            x = _tile(BUF, rows, ROW, MODE)
            y = _tile(BUF, rows2, ROW, MODE)
            acc += x + y
            rows, rows2 = n1, n2
    tl.store(OUT + pid * 64 + offs, acc)


def main():
    dev = "cuda"
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    n_tok = 1 << 20
    n_tiles = 64
    buf = {
        576: torch.randint(0, 255, (n_tok * 576,), dtype=torch.uint8, device=dev),
        640: torch.randint(0, 255, (n_tok * 640,), dtype=torch.uint8, device=dev),
    }
    print(
        f"{'pattern':8} {'depth':>5} {'warps':>5} {'progs':>5} {'us':>8} {'GB/s/prog':>8} {'TB/s':>6}"
    )
    for progs in (16, sms, 2 * sms, 4 * sms):
        idx = torch.randint(
            0, n_tok, (progs * n_tiles * 64,), dtype=torch.int32, device=dev
        )
        out = torch.empty(progs * 64, dtype=torch.int32, device=dev)
        small = torch.randint(0, 1 << 14, idx.shape, dtype=torch.int32, device=dev)
        for name, row, mode in (
            ("g64", 576, 0),
            ("c128", 576, 1),
            ("c128a", 640, 1),
            ("g64-L2", 576, 0),
            ("c128-L2", 576, 1),
        ):
            rows = small if name.endswith("-L2") else idx
            for depth in (1, 2) if progs <= sms else (1,):
                for warps in (4, 8) if progs <= sms else (8,):
                    f = lambda: gather_kernel[(progs,)](
                        rows,
                        buf[row],
                        out,
                        n_tiles,
                        row,
                        mode,
                        depth,
                        num_warps=warps,
                        num_stages=1,
                    )
                    f()
                    ms = triton.testing.do_bench(
                        f, warmup=50, rep=300, return_mode="median"
                    )
                    byts = progs * n_tiles * 64 * 576
                    print(
                        f"{name:8} {depth:5d} {warps:5d} {progs:5d} {ms * 1e3:8.1f} "
                        f"{byts / (ms * 1e-3) / progs / 1e9:8.2f} {byts / (ms * 1e-3) / 1e12:6.2f}",
                        flush=True,
                    )


if __name__ == "__main__":
    sys.exit(main())
