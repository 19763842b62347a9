"""The polynomial pieces of the math lowerings that have no single instruction (docs/math.md).

Both backends lower these the same way, in f32 arithmetic (an f16/bf16 operand is widened and
the result rounded once to its type):

* `math.erf` (SPIR-V and PTX: GLSL.std.450 and PTX have no erf instruction):

      |x| <  ERF_SPLIT:  x * P(x^2),  P = the Taylor series of erf(x)/x to x^18 (ERF_TAYLOR),
                         coefficients (2/sqrt(pi)) (-1)^n / (n! (2n+1)); the first omitted term
                         is below 1.5e-8 at |x| = 1 (an alternating series);
      |x| >= ERF_SPLIT:  sign(x) (1 - (a1 t + a2 t^2 + ... + a5 t^5) exp(-x^2)),
                         t = 1 / (1 + p |x|)   (Abramowitz & Stegun, Handbook of Mathematical
                         Functions, 7.1.26: |error| <= 1.5e-7 for x >= 0; ERF_AS_P, ERF_AS_A).

  Stated bound (measured on the GPUs by tests/gpu/test_gpu_math.py, modelled in
  tests/test_math_sequences.py): relative error <= ERF_BOUND_REL for |x| < 1, absolute error
  <= ERF_BOUND_ABS for |x| >= 1, plus the backend's exp error there.

* `math.tanh` on PTX for f32 (f16/bf16 use `tanh.approx.f32`, whose 2^-11 relative error is
  below one ulp of those types; SPIR-V has GLSL.std.450 Tanh):

      |x| <  TANH_SPLIT:  x + x^3 Q(x^2),  Q = the Taylor series of (tanh(x) - x)/x^3 to x^14
                          (TANH_TAYLOR, exact rationals from tanh' = 1 - tanh^2 rounded to
                          f32); the first omitted term is below 2^-27 tanh(x) at |x| = 0.55;
      |x| >= TANH_SPLIT:  copysign(1 - 2 / (1 + exp(2|x|)), x),  exp(2|x|) overflowing to inf
                          for |x| > 44 gives exactly 1.

  Stated bound: relative error <= TANH_BOUND_REL.

* the fast `math.erf` (PTX only: f16/bf16 results, and f32 results of an op marked
  `fastmath<afn>`), one exponential over the whole range instead of two pieces and a division:

      erf(x) = sign(x) (1 - 2^p(a)),  a = min(|x|, ERF_FAST_CLAMP),
      p(a) = c1 a + c2 a^2 + ... + c5 a^5 ~ log2(erfc(a))   (ERF_FAST_LOG2_ERFC)

  The coefficients are a weighted minimax fit (`minimax`, computed here with numpy): the error
  of erf is erfc(a) (2^(p - log2 erfc) - 1) ~ erfc(a) ln 2 |p - log2 erfc(a)|, so the fit
  weighs by erfc(a) ln 2 / max(erf(a), erf(ERF_FAST_SPLIT)), which bounds the relative error of
  erf above ERF_FAST_SPLIT and its absolute error everywhere (ERF_FAST_FIT: the weighted
  maximum the fit reached, before rounding the coefficients to f32). p(0) = 0, so erf(+-0) =
  +-0 wherever 2^0 comes out as 1 (the PTX ISA bounds ex2.approx by 2 ulp, which the absolute
  bound covers); erfc(ERF_FAST_CLAMP) < 2^-25, so past the clamp 1 - 2^p rounds to exactly 1. Near 0 the
  absolute error of 2^p (2 ulp of a value near 1, about 2^-23) is a large *relative* error of
  erf, so where the result needs a relative bound (f16/bf16) |x| < ERF_FAST_SPLIT takes
  x (c1' + c3' x^2), the Taylor series of erf to x^3 (ERF_FAST_SMALL; the first omitted term is
  x^4/10 <= 2^-19.3 relative at the split); the `afn` form omits it (the absolute bound holds).

  Stated bounds (modelled in tests/test_math_sequences.py with ex2 at either end of its bound,
  measured on the GPUs by tests/gpu/test_gpu_math.py): relative error <= ERF_FAST_BOUND_REL
  with the small piece (plus 2^-150 absolute where the result is an f32 subnormal: a bf16
  operand below 2^-126), absolute error <= ERF_FAST_BOUND_ABS without it.

Polynomials are evaluated by Horner's rule from the highest coefficient, in f32.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np

ERF_SPLIT = 1.0
# coefficients of x^(2n+1), n = 0..9
ERF_TAYLOR: tuple[float, ...] = tuple(
    2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(10))
ERF_AS_P = 0.3275911
ERF_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
ERF_BOUND_REL = 2.0 ** -21  # |x| < ERF_SPLIT
ERF_BOUND_ABS = 2.0 ** -21  # |x| >= ERF_SPLIT


def _tanh_taylor(terms: int) -> tuple[float, ...]:
    """Coefficients of x^3, x^5, ... of tanh's Taylor series: with tanh = sum a_k x^k,
    tanh' = 1 - tanh^2 gives (k + 1) a_(k+1) = [k = 0] - sum_(i+j=k) a_i a_j (exact rationals)."""
    n = 2 * terms + 3
    a = [Fraction(0)] * (n + 1)
    a[1] = Fraction(1)
    for k in range(1, n):
        a[k + 1] = -sum(a[i] * a[k - i] for i in range(k + 1)) / (k + 1)
    return tuple(float(a[2 * j + 3]) for j in range(terms))


TANH_SPLIT = 0.55
TANH_TAYLOR: tuple[float, ...] = _tanh_taylor(8)  # x^3 .. x^17
TANH_BOUND_REL = 2.0 ** -21


def minimax(f: Callable[[np.ndarray], np.ndarray], weight: Callable[[np.ndarray], np.ndarray],
            lo: float, hi: float, powers: Sequence[int], nodes: int = 1000,
            rounds: int = 100) -> tuple[tuple[float, ...], float]:
    """(c, e): coefficients c_k of P(x) = sum_k c_k x^powers[k] that nearly minimise
    e = max |weight(x) (P(x) - f(x))| over [lo, hi], and that e on the fit's points. Lawson's
    algorithm: least squares on `nodes` Chebyshev points of [lo, hi], each point's weight
    multiplied by its error every round, which drives the fit toward equal ripple (the minimax
    polynomial) - enough here, as each sequence's bound is measured on the rounded coefficients
    afterwards. f and weight map float64 arrays to float64 arrays."""
    k = np.arange(nodes)
    x = lo + (hi - lo) * (1 - np.cos(np.pi * (k + 0.5) / nodes)) / 2
    y, w = f(x), weight(x)
    v = x[:, None] ** np.asarray(powers, np.float64)[None, :]
    u = np.full(nodes, 1.0 / nodes)
    for _ in range(rounds):
        s = np.sqrt(u) * w
        c = np.linalg.lstsq(v * s[:, None], y * s, rcond=None)[0]
        err = np.abs(w * (v @ c - y))
        u = u * err / np.sum(u * err)
    return tuple(float(a) for a in c), float(np.max(err))


_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)

ERF_FAST_CLAMP = 4.0  # erfc(4) = 1.5e-8 < 2^-25
ERF_FAST_SPLIT = 1.0 / 16
# erf(x) = (2 / sqrt(pi)) (x - x^3 / 3 + x^5 / 10 - ...): coefficients of x and x^3
ERF_FAST_SMALL: tuple[float, ...] = (2 / math.sqrt(math.pi), -2 / (3 * math.sqrt(math.pi)))
# coefficients of a^1 .. a^5
ERF_FAST_LOG2_ERFC, ERF_FAST_FIT = minimax(
    lambda a: np.log2(_erfc(a).astype(np.float64)),
    lambda a: _erfc(a).astype(np.float64) * math.log(2)
    / np.maximum(_erf(a).astype(np.float64), math.erf(ERF_FAST_SPLIT)),
    0.0, ERF_FAST_CLAMP, range(1, 6))
ERF_FAST_BOUND_REL = 2.0 ** -18  # with the small piece (f16, bf16)
ERF_FAST_BOUND_ABS = 2.0 ** -20  # fastmath<afn> f32
