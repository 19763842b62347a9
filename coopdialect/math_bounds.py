"""The documented error bound of each backend's `math` lowering, as data (docs/math.md is the
table for readers; tests/test_math_ptx.py and tests/gpu/test_gpu_math.py hold the lowerings to it).

`PTX` and `VULKAN` map (op, type) to a bound; `PTX_AFN` holds those that differ for an op marked
`fastmath<afn>` (PTX's fast erf of f32), and `ptx_bound(op, type, afn)` picks.

A bound is measured against the interpreter, which gives the exact value rounded once
(`coopdialect.interpreter.math`); here it is compared with the exact value itself, as float64.
`Bound.tolerance(args, exact, fmt)` is the largest allowed |result - exact| for each element
(`args`: the operands as float64 arrays). Units follow the sources:

* ulp(v): the distance between the two consecutive values of the format around v (for a
  subnormal v the subnormal spacing), as the Vulkan specification defines it;
* relative: |result - exact| <= r |exact|; absolute: |result - exact| <= a.

The PTX bounds combine the instruction bounds of the PTX ISA (9.7.3, "Floating Point
Instructions": ex2.approx.f32 2 ulp from the correctly rounded result, lg2.approx.f32 absolute
2^-22 in (0.5, 2) and relative 2^-22 elsewhere, rsqrt.approx.f32 relative 2^-22.9,
tanh.approx.f32 relative 2^-11, sqrt.rn/fma.rn/cvt.rn/cvt.rni... correctly rounded) with the
roundings of the sequences around them (`coopdialect.ptx.math_rules`). The Vulkan bounds are the
specification's ("Precision and Operation of SPIR-V Instructions", GLSL.std.450 table), where
"correctly rounded" lets a result be either neighbour of the exact value unless the module asks
for RoundingModeRTE (ours does not), i.e. 1 ulp; "inherited from" a formula is evaluated here by
interval arithmetic over the formula's operations, each at its own bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from coopdialect import math_approx as approx

# format -> (significand bits with the implicit one, minimum normal exponent)
FORMATS = {"f16": (11, -14), "bf16": (8, -126), "f32": (24, -126), "f64": (53, -1022)}
NUMPY = {"f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16),
         "f32": np.dtype(np.float32), "f64": np.dtype(np.float64)}


def ulp(v: np.ndarray, fmt: str) -> np.ndarray:
    """The spacing of format `fmt` at |v| (the subnormal spacing below the normal range)."""
    p, emin = FORMATS[fmt]
    a = np.abs(np.asarray(v, np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
    e = np.maximum(np.where(np.isfinite(e), e, emin), emin)
    return np.ldexp(1.0, (e - p + 1).astype(np.int64))


Tolerance = Callable[[list[np.ndarray], np.ndarray, str], np.ndarray]


@dataclass(frozen=True)
class Bound:
    """One documented bound: its text for readers, where it comes from, and the tolerance."""

    text: str
    source: str
    tolerance: Tolerance


def _ulps(n: float) -> Tolerance:
    return lambda args, exact, fmt: n * ulp(exact, fmt)


def _rel(r: float) -> Tolerance:
    return lambda args, exact, fmt: r * np.abs(exact)


def _abs(a: float) -> Tolerance:
    return lambda args, exact, fmt: np.full(np.shape(exact), a)


def _inside(lo: float, hi: float, inside: float, outside: Tolerance) -> Tolerance:
    """Absolute `inside` for the first operand in (lo, hi), `outside` elsewhere."""
    def tol(args, exact, fmt):
        x = args[0]
        return np.where((x > lo) & (x < hi), inside, outside(args, exact, fmt))
    return tol


def _plus(*parts: Tolerance) -> Tolerance:
    return lambda args, exact, fmt: sum(p(args, exact, fmt) for p in parts)


def _in_f32(f32: Tolerance) -> Tolerance:
    """An f16/bf16 result computed in f32 (bound `f32`) and rounded once to the type."""
    return lambda args, exact, fmt: 0.5 * ulp(exact, fmt) + f32(args, exact, "f32")


EXACT = Bound("exact", "the instruction is exact", _ulps(0.0))
CORRECTLY_ROUNDED = Bound("correctly rounded (0.5 ulp)", "IEEE 754 rounding", _ulps(0.5))

# exp: ex2's 2 ulp and the rounding of 2^hi are ulps of 2^hi, the result's nearest value before
# the last rounding; the result may lie just below the power of two 2^hi rounds to, where its ulp
# is half as large (up to 5.5 ulp of the result there). 2^hi is within 2^-17 of the result
# relatively (|lo| is at most half an ulp of |hi| < 128), so the ulp at |exact| (1 + 2^-15) is
# at least 2^hi's.
_EXP_F32 = _plus(_ulps(0.5), lambda args, exact, fmt: 2.5 * ulp(np.abs(exact) * (1 + 2.0 ** -15), fmt))
_EXP2_F32 = _ulps(2.5)
_LOG2_F32 = _inside(0.5, 2.0, 2.0 ** -22, _rel(2.0 ** -22))
_LOG_F32 = _inside(0.5, 2.0, 2.0 ** -22, _rel(1.5 * 2.0 ** -22))
_RSQRT_F32 = _rel(2.0 ** -22.9)
_TANH_F32 = _rel(approx.TANH_BOUND_REL)


def _erf(rel: float, absolute: float) -> Tolerance:
    """Relative `rel` inside |x| < ERF_SPLIT (the Taylor piece), absolute `absolute` outside."""
    return lambda args, exact, fmt: np.where(np.abs(args[0]) < approx.ERF_SPLIT,
                                             rel * np.abs(exact), absolute)


_ERF_F32 = _erf(approx.ERF_BOUND_REL, approx.ERF_BOUND_ABS)
_PTX_ISA = "PTX ISA 9.7.3"
_SEQ = "the sequence of coopdialect.math_approx (modelled in tests, measured by tests/gpu/test_gpu_math.py)"

PTX: dict[tuple[str, str], Bound] = {}
for _t in ("f16", "bf16", "f32", "f64"):
    for _name in ("math.absf", "math.fma", "math.floor", "math.ceil", "math.trunc", "math.roundeven",
                  "arith.maxnumf", "arith.minnumf"):
        PTX[(_name, _t)] = EXACT if _name != "math.fma" else CORRECTLY_ROUNDED
    PTX[("math.sqrt", _t)] = CORRECTLY_ROUNDED
PTX.update({
    ("math.exp2", "f32"): Bound("2.5 ulp (2 ulp from the correctly rounded result)", _PTX_ISA + ".21 ex2", _EXP2_F32),
    ("math.exp", "f32"): Bound("0.5 ulp + 2.5 ulp of 2^hi (3 ulp; 5.5 just below a power of two)",
                                 "ex2 (2 ulp) of x log2(e) split exactly, one fma correction", _EXP_F32),
    ("math.log2", "f32"): Bound("absolute 2^-22 in (0.5, 2), relative 2^-22 elsewhere", _PTX_ISA + ".20 lg2",
                                _LOG2_F32),
    ("math.log", "f32"): Bound("absolute 2^-22 in (0.5, 2), relative 1.5 * 2^-22 elsewhere",
                               "lg2 times ln 2, rounded", _LOG_F32),
    ("math.rsqrt", "f32"): Bound("relative 2^-22.9", _PTX_ISA + ".16 rsqrt", _RSQRT_F32),
    ("math.rsqrt", "f64"): Bound("1.5 ulp", "div.rn.f64(1, sqrt.rn.f64): two correct roundings", _ulps(1.5)),
    ("math.tanh", "f32"): Bound("relative 2^-21", _SEQ, _TANH_F32),
    ("math.erf", "f32"): Bound("relative 2^-21 for |x| < 1, absolute 2^-21 for |x| >= 1", _SEQ, _ERF_F32),
})
_HALF_F32 = {"math.exp": _rel(2.0 ** -16), "math.exp2": _EXP2_F32, "math.log2": _LOG2_F32,
             "math.log": _LOG_F32, "math.rsqrt": _RSQRT_F32, "math.tanh": _rel(2.0 ** -11),
             "math.erf": _plus(_rel(approx.ERF_FAST_BOUND_REL), _abs(2.0 ** -150))}
_HALF_TEXT = {"math.exp": "relative 2^-16", "math.tanh": "relative 2^-11 (tanh.approx.f32)",
              "math.erf": "relative 2^-18 (+ 2^-150 below f32's normal range), the fast erf sequence"}
for _t in ("f16", "bf16"):
    for _name, _f32 in _HALF_F32.items():
        inner = _HALF_TEXT.get(_name) or PTX[(_name, "f32")].text
        PTX[(_name, _t)] = Bound(f"0.5 ulp + the f32 error ({inner})", "computed in f32, cvt.rn once",
                                 _in_f32(_f32))

# ops marked fastmath<afn> (MLIR: "approximate functions") whose PTX lowering takes a faster
# sequence; any other (op, type) with the flag has its PTX bound
PTX_AFN: dict[tuple[str, str], Bound] = {
    ("math.erf", "f32"): Bound("absolute 2^-20", "the fast erf sequence of coopdialect.math_approx "
                               "(modelled in tests, measured by tests/gpu/test_gpu_math.py)",
                               _abs(approx.ERF_FAST_BOUND_ABS)),
    # .ftz: a result below 2^-126 (x < -126) becomes 0, an error below 2^-126; above it the
    # instruction's 2 ulp (2.5 from exact)
    ("math.exp2", "f32"): Bound("2.5 ulp, or absolute 2^-126 below 2^-126 (flushed)",
                                _PTX_ISA + ".21 ex2 .ftz",
                                _plus(_EXP2_F32, _abs(2.0 ** -126))),
}


def ptx_bound(op: str, t: str, afn: bool = False) -> Bound:
    """The documented PTX bound of `op` on type `t` (`afn`: the op carries fastmath<afn>).
    Raises KeyError for an (op, type) without a PTX lowering."""
    return PTX_AFN.get((op, t), PTX[(op, t)]) if afn else PTX[(op, t)]


# -- Vulkan -------------------------------------------------------------------------------------

_VK = "Vulkan spec, Precision and Operation of SPIR-V Instructions"
_U32 = 2.0 ** -23  # the relative size of one f32 ulp at the bottom of a binade (the worst case)


def _vk_exp_ulps(k0: float) -> Tolerance:
    return lambda args, exact, fmt: (k0 + 2 * np.abs(args[0])) * ulp(exact, fmt)


def _interval(f: Callable[..., tuple[np.ndarray, np.ndarray]]) -> Tolerance:
    """The bound of an "inherited from" formula: f(args, fmt) gives the lowest and highest value
    of the formula with every operation anywhere in its allowed range."""
    def tol(args, exact, fmt):
        lo, hi = f(args, fmt)
        return np.maximum(np.abs(hi - exact), np.abs(exact - lo))
    return tol


def _widen(v: np.ndarray, n: float, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    u = n * ulp(v, fmt)
    return v - u, v + u


def _vk_tanh(args, fmt):
    """(exp(x) - exp(-x)) / (exp(x) + exp(-x)): exp at (3 + 2|x|) ulp (f16: 1 + 2|x|), the sum
    and difference correctly rounded (1 ulp), the quotient 2.5 ulp."""
    x = args[0]
    k = (3.0 if fmt == "f32" else 1.0) + 2 * np.abs(x)
    with np.errstate(over="ignore", invalid="ignore"):
        a_lo, a_hi = np.exp(x) - k * ulp(np.exp(x), fmt), np.exp(x) + k * ulp(np.exp(x), fmt)
        b_lo, b_hi = np.exp(-x) - k * ulp(np.exp(-x), fmt), np.exp(-x) + k * ulp(np.exp(-x), fmt)
        n_lo, _ = _widen(a_lo - b_hi, 1, fmt)
        _, n_hi = _widen(a_hi - b_lo, 1, fmt)
        d_lo, _ = _widen(a_lo + b_lo, 1, fmt)
        _, d_hi = _widen(a_hi + b_hi, 1, fmt)
        qs = np.stack([n_lo / d_lo, n_lo / d_hi, n_hi / d_lo, n_hi / d_hi])
        lo, _ = _widen(qs.min(axis=0), 2.5, fmt)
        _, hi = _widen(qs.max(axis=0), 2.5, fmt)
    return lo, hi


def _vk_sqrt(args, fmt):
    """1.0 / inversesqrt(x): inversesqrt at 2 ulp, the division 2.5 ulp."""
    r = 1.0 / np.sqrt(args[0])
    r_lo, r_hi = _widen(r, 2, fmt)
    lo, _ = _widen(1.0 / r_hi, 2.5, fmt)
    _, hi = _widen(1.0 / r_lo, 2.5, fmt)
    return lo, hi


def _vk_fma(args, fmt):
    """OpFMul followed by OpFAdd, each correctly rounded (1 ulp)."""
    a, b, c = args
    p_lo, p_hi = _widen(a * b, 1, fmt)
    lo, _ = _widen(p_lo + c, 1, fmt)
    _, hi = _widen(p_hi + c, 1, fmt)
    return lo, hi


VULKAN: dict[tuple[str, str], Bound] = {}
for _t in ("f16", "f32"):
    half = _t == "f16"
    VULKAN.update({
        ("math.exp", _t): Bound("(1 + 2|x|) ulp" if half else "(3 + 2|x|) ulp", _VK, _vk_exp_ulps(1 if half else 3)),
        ("math.exp2", _t): Bound("(1 + 2|x|) ulp" if half else "(3 + 2|x|) ulp", _VK, _vk_exp_ulps(1 if half else 3)),
        ("math.log", _t): Bound(f"3 ulp outside [0.5, 2], absolute 2^{-7 if half else -21} inside", _VK,
                                _inside(0.5, 2.0, 2.0 ** (-7 if half else -21), _ulps(3))),
        ("math.log2", _t): Bound(f"3 ulp outside [0.5, 2], absolute 2^{-7 if half else -21} inside", _VK,
                                 _inside(0.5, 2.0, 2.0 ** (-7 if half else -21), _ulps(3))),
        ("math.rsqrt", _t): Bound("2 ulp", _VK + " (inversesqrt)", _ulps(2)),
        ("math.sqrt", _t): Bound("inherited from 1.0 / inversesqrt()", _VK, _interval(_vk_sqrt)),
        ("math.tanh", _t): Bound("inherited from sinh()/cosh(), i.e. from the exp formula", _VK,
                                 _interval(_vk_tanh)),
        ("math.fma", _t): Bound("inherited from OpFMul followed by OpFAdd", _VK, _interval(_vk_fma)),
        ("math.erf", _t): Bound("relative 2^-20 for |x| < 1, absolute 2^-20 for |x| >= 1"
                                + (" (in f32, then OpFConvert: + 1 ulp)" if half else ""),
                                _SEQ + " with Vulkan's exp",
                                _plus(_erf(2.0 ** -20, 2.0 ** -20), _ulps(1)) if half else _erf(2.0 ** -20, 2.0 ** -20)),
    })
    for _name in ("math.absf", "math.floor", "math.ceil", "math.trunc", "math.roundeven",
                  "arith.maxnumf", "arith.minnumf"):
        VULKAN[(_name, _t)] = Bound("correctly rounded (exact: the result is representable)", _VK, _ulps(0))
