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

Polynomials are evaluated by Horner's rule from the highest coefficient, in f32.
"""

from __future__ import annotations

import math
from fractions import Fraction

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
