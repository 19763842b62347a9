"""The polynomial pieces of `coopdialect.math_approx`: their coefficients are the Taylor series
mpmath computes, and the SPIR-V erf sequence, modelled in f32 arithmetic with GLSL.std.450 Exp at
either end of the Vulkan bound (3 + 2|x| ulp), stays within its documented bound. The fast erf
of PTX, modelled instruction by instruction (tests/math_models.py) with ex2.approx at either end
of the PTX ISA's 2 ulp, stays within its documented bounds on every f16 and bf16 input (rounded
to the type) and on a dense f32 grid (the fastmath<afn> form), special values included."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from coopdialect import math_approx as approx
from coopdialect.math_bounds import VULKAN
from math_models import erf_fast_model

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


# -- the fast erf (PTX: f16/bf16 results, f32 with fastmath<afn>) --------------------------------

def _all_values(t: str) -> np.ndarray:
    """Every value of a 16-bit type (all bit patterns), as float64."""
    import ml_dtypes
    dt = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}[t]
    with np.errstate(invalid="ignore"):
        return np.arange(1 << 16, dtype=np.uint16).view(dt).astype(np.float64)


_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, -3e38, 1e-40, -1e-40, 2.0 ** -149,
                      1.0 / 16, -1.0 / 16, np.nextafter(1 / 16, 0), 4.0, -4.0, np.nextafter(4.0, 0)])


_ERF = np.frompyfunc(math.erf, 1, 1)


def _exact_erf(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return _ERF(x).astype(np.float64)


def _check_specials(got: np.ndarray, x: np.ndarray, zeros: bool = True) -> None:
    """NaN stays NaN, +-inf and huge give +-1 exactly; with `zeros`, +-0 gives +-0."""
    assert np.isnan(got[np.isnan(x)]).all()
    big = np.abs(x) >= approx.ERF_FAST_CLAMP
    assert (got[big] == np.sign(x[big])).all()
    zero = x == 0
    if zeros:
        assert (got[zero] == 0).all() and (np.signbit(got[zero]) == np.signbit(x[zero])).all()


@pytest.mark.parametrize("ex2_ulps", [0, 2, -2])
@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_fast_erf_of_every_half_value_within_the_bound(t: str, ex2_ulps: int) -> None:
    """Every f16 / bf16 input (the result rounded to t by cvt.rn) and the specials: the f32 value
    within relative ERF_FAST_BOUND_REL of erf, the rounded one within PTX's bound for t, with
    ex2 correctly rounded and at either end of its 2 ulp (the result is monotone in 2^p, so the
    ends are the worst)."""
    from coopdialect.math_bounds import NUMPY, PTX

    with np.errstate(over="ignore"):  # the huge specials are +-inf in f16
        x = np.concatenate([_all_values(t), _SPECIALS.astype(NUMPY[t]).astype(np.float64)])
    exact = _exact_erf(x)
    got32 = erf_fast_model(x, ex2_ulps, relative=True).astype(np.float64)
    _check_specials(got32, x)
    ok = np.isfinite(x)
    err = np.abs(got32 - exact)[ok]
    # relative, but f32's subnormal results are rounded to 2^-149: half that absolute on top
    assert (err <= approx.ERF_FAST_BOUND_REL * np.abs(exact[ok]) + 2.0 ** -150).all()
    normal = np.abs(exact[ok]) >= 2.0 ** -126
    assert np.max(err[normal] / np.abs(exact[ok][normal])) <= approx.ERF_FAST_BOUND_REL
    got = got32.astype(NUMPY[t]).astype(np.float64)
    tol = PTX[("math.erf", t)].tolerance([x[ok]], exact[ok], t)
    assert (np.abs(got[ok] - exact[ok]) <= tol).all()


@pytest.mark.parametrize("ex2_ulps", [0, 2, -2])
def test_fast_erf_f32_afn_within_the_bound(ex2_ulps: int) -> None:
    """The fastmath<afn> f32 form (no small piece) on a dense grid of [0, 4.5] (2^20 points),
    every 4096th positive f32 bit pattern (all binades, subnormals included), a seventh of them
    negated, and the specials: within PTX_AFN's bound (absolute 2^-20)."""
    from coopdialect.math_bounds import ptx_bound

    with np.errstate(invalid="ignore"):
        bits = np.arange(0, 1 << 31, 4096, dtype=np.uint32).view(np.float32).astype(np.float64)
    pos = np.concatenate([np.linspace(0.0, 4.5, 1 << 20), bits])
    x = np.concatenate([pos, -pos[::7], _SPECIALS]).astype(np.float32).astype(np.float64)
    exact = _exact_erf(x)
    got = erf_fast_model(x, ex2_ulps, relative=False).astype(np.float64)
    # erf(+-0) = 1 - 2^0 is +-0 only where ex2.approx gives 2^0 = 1 exactly (the ISA allows 2 ulp)
    _check_specials(got, x, zeros=ex2_ulps == 0)
    ok = np.isfinite(x)
    tol = ptx_bound("math.erf", "f32", afn=True).tolerance([x[ok]], exact[ok], "f32")
    err = np.abs(got[ok] - exact[ok])
    assert (err <= tol).all(), (x[ok][err > tol][:4], err[err > tol][:4], tol[err > tol][:4])


def test_fast_erf_fit() -> None:
    """The log2(erfc) polynomial against float64 erfc on a grid 7 times finer than the fit's
    points: its weighted error (relative error of erf above the split, absolute below) is what
    the fit reports, and below 2^-20.3, so the roundings of the sequence have room under the
    bounds."""
    a = np.linspace(0, approx.ERF_FAST_CLAMP, 7001)
    p = sum(c * a ** (k + 1) for k, c in enumerate(approx.ERF_FAST_LOG2_ERFC))
    erfc = np.array([math.erfc(v) for v in a])
    erf = np.array([math.erf(v) for v in a])
    err = np.abs(erfc * (np.exp2(p - np.log2(erfc)) - 1)) / np.maximum(erf, math.erf(approx.ERF_FAST_SPLIT))
    assert np.max(err) <= approx.ERF_FAST_FIT * 1.01 and approx.ERF_FAST_FIT < 2.0 ** -20.3
    # the Taylor piece: the first omitted term at the split, relative
    assert approx.ERF_FAST_SPLIT ** 4 / 10 < 2.0 ** -19.3
    assert math.erfc(approx.ERF_FAST_CLAMP) < 2.0 ** -25
