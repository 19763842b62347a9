"""Instruction-by-instruction numpy models of the PTX math sequences (a test helper): each
function computes what `coopdialect.ptx.math_rules` emits, in f32 with IEEE rounding per
instruction and the special-function instructions at a chosen point of the error the PTX ISA
allows them, so a test can hold the sequence to its bound on millions of inputs (the PTX
simulator runs the emitted code itself, on fewer)."""

from __future__ import annotations

import numpy as np

from coopdialect import math_approx as approx


def _fma32(a: np.ndarray, b, c) -> np.ndarray:
    """fma.rn.f32: the product exact in float64 (48 bits), the sum rounded there and again to f32
    (a double rounding that can differ from one rounding only when the float64 sum lies on an
    f32 midpoint, ~2^-29 of the inputs; well inside the bounds' margins)."""
    return (a.astype(np.float64) * np.float64(b) + np.float64(c)).astype(np.float32)


def _ex2(p: np.ndarray, ulps: int) -> np.ndarray:
    """ex2.approx.ftz.f32: the correctly rounded 2^p moved `ulps` f32 ulps (PTX ISA 9.7.3.21:
    at most 2 ulp from the correctly rounded result; .ftz flushes a subnormal p to zero)."""
    p = np.where(np.abs(p) < 2.0 ** -126, np.float32(0), p)
    cr = np.exp2(p.astype(np.float64)).astype(np.float32)
    step = np.nextafter(cr, np.float32(np.inf) if ulps > 0 else np.float32(0)).astype(np.float64) - cr
    return (cr + abs(ulps) * step).astype(np.float32)


def erf_fast_model(x: np.ndarray, ex2_ulps: int, relative: bool) -> np.ndarray:
    """coopdialect.ptx.math_rules.erf_fast_f32 instruction by instruction, in f32: abs, min.NaN,
    Horner with fma.rn, mul.rn, ex2.approx.ftz (`_ex2`), sub.rn, copysign; with `relative` the
    Taylor piece (mul.rn, fma.rn, mul.rn) selected where |x| < ERF_FAST_SPLIT."""
    f = np.float32
    with np.errstate(all="ignore"):
        x = x.astype(f)
        a = np.abs(x)
        c = np.where(np.isnan(a), a, np.minimum(a, f(approx.ERF_FAST_CLAMP)))  # min.NaN
        q = np.full_like(c, f(approx.ERF_FAST_LOG2_ERFC[-1]))
        for k in reversed(approx.ERF_FAST_LOG2_ERFC[:-1]):
            q = _fma32(q, c, f(k))
        e = _ex2((c * q).astype(f), ex2_ulps)
        big = np.copysign((f(1) - e).astype(f), x)
        if not relative:
            return big
        c1, c3 = (f(v) for v in approx.ERF_FAST_SMALL)
        small = (x * _fma32((x * x).astype(f), c3, c1)).astype(f)
        return np.where(a < f(approx.ERF_FAST_SPLIT), small, big)
