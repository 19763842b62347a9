"""The polynomial pieces of `coopdialect.math_approx`: their coefficients are the Taylor series
mpmath computes, and the SPIR-V erf sequence, modelled in f32 arithmetic with GLSL.std.450 Exp at
either end of the Vulkan bound (3 + 2|x| ulp), stays within its documented bound."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from coopdialect import math_approx as approx
from coopdialect.math_bounds import VULKAN

mpmath.mp.prec = 100


def test_erf_taylor_coefficients() -> None:
    series = mpmath.taylor(mpmath.erf, 0, 21)  # coefficients of x^0 .. x^21
    assert [float(c) for c in series[1:21:2]] == pytest.approx(approx.ERF_TAYLOR, rel=1e-15)
    # the first omitted term (x^21; the series alternates, so it bounds the rest) at the split
    assert abs(float(series[21])) * approx.ERF_SPLIT ** 21 < 1.5e-8


def test_tanh_taylor_coefficients() -> None:
    series = mpmath.taylor(mpmath.tanh, 0, 19)
    assert [float(c) for c in series[3:19:2]] == pytest.approx(approx.TANH_TAYLOR, rel=1e-14)
    assert approx.TANH_TAYLOR[:3] == pytest.approx((-1 / 3, 2 / 15, -17 / 315))
    omitted = abs(float(series[19])) * approx.TANH_SPLIT ** 19
    assert omitted < 2.0 ** -27 * math.tanh(approx.TANH_SPLIT)


def _spirv_erf_model(x: np.ndarray, exp_ulps: int) -> np.ndarray:
    """passes/convert_math_to_spirv.erf_f32 in f32 arithmetic (OpFMul/OpFAdd/OpFDiv correctly
    rounded), Exp returning the exact value moved by exp_ulps * (3 + 2|arg|) ulp."""
    f = np.float32
    x = x.astype(f)
    a = np.abs(x)
    z = x * x
    acc = np.full_like(z, f(approx.ERF_TAYLOR[-1]))
    for c in reversed(approx.ERF_TAYLOR[:-1]):
        acc = acc * z + f(c)
    small = x * acc
    t = f(1) / (f(1) + f(approx.ERF_AS_P) * a)
    acc = np.full_like(t, f(approx.ERF_AS_A[-1]))
    for c in reversed(approx.ERF_AS_A[:-1]):
        acc = acc * t + f(c)
    q = t * acc
    arg = -z.astype(np.float64)
    e = np.exp(arg)
    e = (e + exp_ulps * (3 + 2 * np.abs(arg)) * np.spacing(e.astype(f)).astype(np.float64)).astype(f)
    big = f(1) - q * e
    big = np.where(x < 0, -big, big)
    return np.where(a < f(approx.ERF_SPLIT), small, big).astype(np.float64)


@pytest.mark.parametrize("exp_ulps", [0, 1, -1])
def test_spirv_erf_bound_with_vulkan_exp(exp_ulps: int) -> None:
    g = np.random.default_rng(1)
    x = np.concatenate([g.uniform(-4.5, 4.5, 40000), g.uniform(-1.05, 1.05, 20000),
                        np.exp(g.uniform(-20, 0, 4000))]).astype(np.float32)
    exact = np.array([math.erf(v) for v in x.astype(np.float64)])
    got = _spirv_erf_model(x, exp_ulps)
    tol = VULKAN[("math.erf", "f32")].tolerance([x.astype(np.float64)], exact, "f32")
    assert (np.abs(got - exact) <= tol).all()
    # and the pieces are close to their own stated accuracy (A&S 7.1.26: 1.5e-7 absolute)
    outside = np.abs(x) >= 1
    assert np.max(np.abs(got - exact)[outside]) < 2.0 ** -21
