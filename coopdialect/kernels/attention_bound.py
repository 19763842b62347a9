"""The float64 model of the attention kernels (`coopdialect.kernels.attention`) and the bound of
their error against it, per element.

`row_stats(q, k, v, scale, causal)`: for [B, H, S, D] arrays, the exact output o and LSE lse of
softmax(q kᵀ · scale [+ causal mask]) v in float64, and per query row the statistics the bound
needs (a `RowStats`; benchmarks/bench_attention.py fills one for a sample of rows with torch).
`error_bound(stats, config, causal, device)`: elementwise bounds of |O − o| and |LSE − lse|,
shaped as o and lse, for the kernel of `config` run by `device` ("interp", "cuda", "vulkan").
docs/attention.md derives the bound; in short:

Units: u = 2^-24 (f32's unit roundoff), u_T = 2^-11 for f16, 2^-8 for bf16. For query row i:
t_ij = scale·log2(e)·(q_i·k_j) over its unmasked keys j (n of them, in b key blocks), M = max_j
|t_ij|, w_ij the exact softmax weights, W_id = Σ_j w_ij |v_jd|, Z_id = Σ_j |v_jd|. Then

    |O_id − o_id|   ≤ u_T |o_id| + (1 + u_T)((u_T + η_i) W_id + δ |o_id| + z Z_id) + 2^-25
    |LSE_i − lse_i| ≤ κ_i + 4u |lse_i|

u_T W is P's rounding to T before P·V (the kernel's row sum l adds the f32 P, so the weights of
the numerator are off by P's rounding), u_T |o| the output's rounding; η collects the f32 errors:
the scores' (4 roundings: S, log2(e), scale2, S·scale2), the subtractions' of the running max
(all within 2M, magnified by ln 2 through exp2), the exponentials', the rescalings' and the sums'.
z Z is P below 2^-14 rounded to an f16 subnormal (absolute error 2^-25; bf16: 2^-134). On
cuda the exponentials are `ex2.approx.ftz` (the kernel's exp2 is marked `fastmath<afn>`): a P
below 2^-126 is 0, so z is at least 2^-126, and the row sum l (at least 1) loses at most
n·2^-126, a relative error f = n·2^-126 added to η and κ (0 elsewhere).

    η = 2γ + (b + 1)u + b e_sum + (s_l + 2b)u + f,   γ = ln2 (8.02 u M + g) + (b + 1) e_exp
    κ = ln2 (8.02 u M + g) + (b + 1) e_exp + (s_l + 2b)u + f + ln2 (u (log2 n + 1) + e_log2)

with, per device:

| | e_exp (one exp2) | g (score sums) | e_sum (a block's P·V sum) | s_l (row sum) | δ (O / l) | e_log2 |
|---|---|---|---|---|---|---|
| interp | u (rounded once) | 0 | u | log2(block_n) u | u | 0 |
| cuda | u + 2^-22 (`ex2.approx`, 2 ulp) | D 2^-23 A | (block_n + 1) 2^-23 | log2(block_n) u | u | 2^-22 (1 + log2 n) |
| vulkan | (3 + 4M) 2^-23 (3 + 2\\|x\\| ulp, \\|x\\| ≤ 2M) | D 2^-23 A | (block_n + 1) 2^-23 | block_n u | 2.5·2^-23 | 3·2^-23 (1 + log2 n) + 2^-21 |

where A = max_j scale·log2(e)·Σ_d |q_id k_jd|: the tensor cores' sums are not assumed to round
correctly, only to keep f32 precision per addition. The PTX row sums use the interpreter's tree
(correctly rounded add.f32); Vulkan's may add in any order. The interpreter's and PTX's masked
exponentials are exactly 0; Vulkan's are assumed 0 (exp2 of about -3.4e38) and its f16 subnormals
assumed kept (no flush to zero); a device that breaks either fails the bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coopdialect.kernels.attention import AttentionConfig

LOG2E = np.log2(np.e)
DEVICES = ("interp", "cuda", "vulkan")


@dataclass
class RowStats:
    """The exact results and the per-row statistics of the bound (module docstring), float64,
    for the query rows `rows` (R of them, any leading dimensions before them)."""

    o: np.ndarray  # [..., R, D]
    lse: np.ndarray  # [..., R]
    w_abs_v: np.ndarray  # W: [..., R, D]
    abs_v: np.ndarray  # Z: [..., R, D]
    max_t: np.ndarray  # M: [..., R]
    max_abs_t: np.ndarray  # A: [..., R]
    keys: np.ndarray  # n: [R]
    rows: np.ndarray  # the query rows' indices, [R]
    head_dim: int
    seq: int


def row_stats(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, causal: bool) -> RowStats:
    """The float64 model for [B, H, S, D] arrays of any float dtype; `scale` is taken as the f32
    the kernel receives. Memory: a few [B, H, S, S] float64 arrays."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    seq, d = q.shape[-2], q.shape[-1]
    sc = float(np.float32(scale))
    s = np.einsum("bhid,bhjd->bhij", q, k) * sc
    sa = np.einsum("bhid,bhjd->bhij", np.abs(q), np.abs(k)) * sc
    keep = np.tril(np.ones((seq, seq), bool)) if causal else np.ones((seq, seq), bool)
    s_m = np.where(keep, s, -np.inf)
    mx = s_m.max(axis=-1, keepdims=True)
    e = np.exp(s_m - mx)
    tot = e.sum(axis=-1, keepdims=True)
    w = e / tot
    return RowStats(o=w @ v, lse=(mx + np.log(tot))[..., 0], w_abs_v=w @ np.abs(v),
                    abs_v=keep.astype(np.float64) @ np.abs(v),
                    max_t=np.where(keep, np.abs(s), 0.0).max(axis=-1) * LOG2E,
                    max_abs_t=np.where(keep, sa, 0.0).max(axis=-1) * LOG2E,
                    keys=keep.sum(axis=-1).astype(np.float64), rows=np.arange(seq),
                    head_dim=d, seq=seq)


def key_blocks(config: AttentionConfig, seq: int, causal: bool, rows: np.ndarray) -> np.ndarray:
    """b: the key blocks the kernel visits for each query row in `rows`."""
    if causal:
        end = np.minimum(seq, (rows // config.block_m + 1) * config.block_m)
    else:
        end = np.full(rows.shape, seq)
    return -(-end // config.block_n)


def error_bound(stats: RowStats, config: AttentionConfig, causal: bool,
                device: str = "interp") -> tuple[np.ndarray, np.ndarray]:
    """(bound of |O − o|, bound of |LSE − lse|), shaped as `stats.o` and `stats.lse` (module
    docstring). Raises ValueError for an unknown device."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    u, g23 = 2.0 ** -24, 2.0 ** -23
    ut = 2.0 ** -11 if config.dtype == "f16" else 2.0 ** -8
    z = 2.0 ** -25 if config.dtype == "f16" else 2.0 ** -134
    m = stats.max_t
    b = key_blocks(config, stats.seq, causal, stats.rows).astype(np.float64)
    n = stats.keys
    bn = config.block_n
    if device == "interp":
        e_exp, g, e_sum, s_l, div, e_log2 = u, 0.0, u, np.log2(bn), u, 0.0
    else:
        g = stats.head_dim * g23 * stats.max_abs_t
        e_sum = (bn + 1) * g23
        if device == "cuda":
            e_exp, s_l, div = u + 2.0 ** -22, np.log2(bn), u
            e_log2 = 2.0 ** -22 * (1 + np.log2(n))
        else:
            e_exp, s_l, div = (3 + 4 * m) * g23, float(bn), 2.5 * g23
            e_log2 = 3 * g23 * (1 + np.log2(n)) + 2.0 ** -21
    flush = n * 2.0 ** -126 if device == "cuda" else 0.0
    if device == "cuda":
        z = max(z, 2.0 ** -126)
    ln2 = np.log(2.0)
    gamma = ln2 * (8.02 * u * m + g) + (b + 1) * e_exp
    lam = (s_l + 2 * b) * u + flush
    eta = (2 * gamma + (b + 1) * u + b * e_sum + lam) * 1.01
    kappa = (gamma + lam + ln2 * (u * (np.log2(n) + 1) + e_log2)) * 1.01
    bo = ut * np.abs(stats.o) + (1 + ut) * ((ut + eta[..., None]) * stats.w_abs_v
                                            + div * np.abs(stats.o) + z * stats.abs_v) + 2.0 ** -25
    return bo, kappa + 4 * u * np.abs(stats.lse)
