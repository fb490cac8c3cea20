"""What e4m3 MMA operands would cost the 64-head tile in accuracy, emulated
on the CPU in float64 (no GPU): the harness's float64 reference against

- bf16: the shipped family's arithmetic (Q as given, K and V dequantised
  exactly to bf16, the scores summed in fp32, P rounded to bf16 before
  P.V);
- fp8 hi/lo: Q's nope columns as two e4m3 terms (hi, and the residual),
  each head scaled by a power of two into e4m3's range; K's nope bytes as
  stored, each 64-column group's score scaled by its token's UE8M0 factor
  after the MMA; P times each token's group factor relative to a running
  per-group exponent, as two e4m3 terms, against V's bytes as stored (the
  accumulator rescaled when the exponent moves, as for the row maximum);
  the rope in bf16 as today;
- fp8 single: the same with one e4m3 term for Q and for P;
- fp8 vtile: as fp8 hi/lo, but P split once a tile, and V's bytes
  re-quantised instead to each group's largest exponent so far (one P for
  all 7 groups: a seventh of the conversions).

Inputs as the harness makes them (N(0,1) latents, each token's group
scaled by e^N(0,1), UE8M0 per group), and a harsher spread (e^(3 N(0,1))).
Prints the norm-relative error of out and the largest lse error, as the
harness measures them (limits 5e-3 and 1e-3).

    .venv/torch/bin/python lab/fp8/precision.py
"""

import math

import torch

E4M3 = torch.float8_e4m3fn
TILE = 32


def quantize(x):
    """Nope latents [N, 448] as e4m3 bytes and UE8M0 exponents [N, 7], as
    the harness's quantize_pages does."""
    g = x.view(-1, 7, 64)
    amax = g.abs().amax(-1).clamp_min(1e-30)
    exp = torch.ceil(torch.log2(amax / 448.0)).clamp(-126, 127)
    q = (g / torch.pow(2.0, exp)[..., None]).to(E4M3)
    return q, exp


def rne(x, dtype):
    return x.to(dtype).to(torch.float64)


def split(x, terms):
    """x as `terms` e4m3 values (hi, then the residual), summed back."""
    hi = rne(x, E4M3)
    if terms == 1:
        return hi
    return hi + rne(x - hi, E4M3)


def attention(q, k_nope, k_rope, exp, mode):
    """out [H, 512] and lse [H] (natural log) for one batch row."""
    H = q.shape[0]
    n = k_nope.shape[0]
    scale = 512**-0.5
    kf = k_nope.to(torch.float64) * torch.pow(2.0, exp)[..., None]
    k_full = torch.cat([kf.view(n, 448), k_rope], -1)
    if mode == "ref":
        s = q @ k_full.T * scale
        lse = torch.logsumexp(s, -1)
        return torch.softmax(s, -1) @ k_full, lse
    if mode == "bf16":
        # The sums in fp32, as the MMAs accumulate.
        s = (q.float() @ k_full.float().T).double() * scale
        m = s.max(-1, keepdim=True).values
        p = torch.exp(s - m)
        out = rne(p, torch.bfloat16) @ k_full
        return out / p.sum(-1, keepdim=True), (m.squeeze(-1) + p.sum(-1).log())
    terms = 1 if mode == "fp8_single" else 2
    # Q: each head by a power of two so that its largest nope value is near
    # 256 (inside e4m3's 448), as hi (+ lo).
    qn = q[:, :448]
    qe = torch.floor(torch.log2(256.0 / qn.abs().amax(-1).clamp_min(1e-30)))
    q8 = split(qn * torch.pow(2.0, qe)[:, None], terms)
    k8 = k_nope.to(torch.float64)
    s = torch.zeros(H, n, dtype=torch.float64)
    for g in range(7):
        cols = slice(64 * g, 64 * g + 64)
        s += (q8[:, cols] @ k8[:, g].T) * torch.pow(2.0, exp[:, g])[None, :]
    s = s * torch.pow(2.0, -qe)[:, None]
    s += rne(q[:, 448:], torch.bfloat16) @ k_rope.T
    s *= scale
    # Online softmax over tiles; per group a running exponent r_g with
    # P * 2^(e - r_g) below 2^8.
    m = torch.full((H,), -math.inf, dtype=torch.float64)
    l = torch.zeros(H, dtype=torch.float64)
    acc = torch.zeros(H, 512, dtype=torch.float64)
    r = torch.full((7,), -1e9, dtype=torch.float64)
    for t0 in range(0, n, TILE):
        ts = slice(t0, min(n, t0 + TILE))
        st = s[:, ts]
        m_new = torch.maximum(m, st.max(-1).values)
        alpha = torch.exp(m - m_new)
        p = torch.exp(st - m_new[:, None])
        l = l * alpha + p.sum(-1)
        acc *= alpha[:, None]
        e = exp[ts]
        if mode == "fp8_vtile":
            # V's bytes re-quantised to each group's largest exponent so far
            # (r, over this tile and those before it), as a kernel would
            # have to, since the MMA adds its product to an accumulator kept
            # in units of r: bytes of tokens with smaller scales shift down,
            # losing bits where they fall below e4m3's normal range. P is
            # split once, at 2^8.
            r_new = torch.maximum(r, e.max(0).values)
            ph = split(p * 256.0, terms)
            for g in range(7):
                cols = slice(64 * g, 64 * g + 64)
                acc[:, cols] *= torch.pow(2.0, r[g] - r_new[g])
                v = rne(k8[ts, g] * torch.pow(2.0, e[:, g] - r_new[g])[:, None], E4M3)
                acc[:, cols] += (ph @ v) * 2.0**-8
        else:
            r_new = torch.maximum(r, e.max(0).values - 8)
            for g in range(7):
                cols = slice(64 * g, 64 * g + 64)
                acc[:, cols] *= torch.pow(2.0, r[g] - r_new[g])
                pg = split(p * torch.pow(2.0, e[:, g] - r_new[g])[None, :], terms)
                acc[:, cols] += pg @ k8[ts, g]
        r = r_new
        acc[:, 448:] += rne(p, torch.bfloat16) @ k_rope[ts]
        m = m_new
    # The nope groups' accumulators are in units of 2^r_g until here.
    acc[:, :448] *= torch.pow(2.0, r).repeat_interleave(64)[None, :]
    return acc / l[:, None], m + l.log()


def main():
    gen = torch.Generator().manual_seed(0)
    print("spread    tokens  mode       rel err out   max lse err")
    for spread in (1.0, 3.0):
        for n in (640, 2176):
            errs = {}
            for b in range(4):
                x = torch.randn(n, 448, generator=gen, dtype=torch.float64)
                x = x * torch.exp(
                    spread * torch.randn(n, 7, 1, generator=gen, dtype=torch.float64)
                ).repeat_interleave(64, -1).view(n, 448)
                k_nope, exp = quantize(x)
                k_rope = rne(
                    torch.randn(n, 64, generator=gen, dtype=torch.float64),
                    torch.bfloat16,
                )
                q = rne(
                    torch.randn(64, 512, generator=gen, dtype=torch.float64),
                    torch.bfloat16,
                )
                ref, ref_lse = attention(q, k_nope, k_rope, exp, "ref")
                for mode in ("bf16", "fp8_hilo", "fp8_single", "fp8_vtile"):
                    out, lse = attention(q, k_nope, k_rope, exp, mode)
                    rel = ((out - ref).norm() / ref.norm()).item()
                    le = (lse - ref_lse).abs().max().item()
                    old = errs.get(mode, (0.0, 0.0))
                    errs[mode] = (max(old[0], rel), max(old[1], le))
            for mode, (rel, le) in errs.items():
                print(f"e^({spread:.0f}N)  {n:6d}  {mode:10s} {rel:12.2e}  {le:12.2e}")


if __name__ == "__main__":
    main()
