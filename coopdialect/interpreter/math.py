"""`math` impls: each result is the exact value of the function rounded once to the result type.

The interpreter is the oracle the backends are measured against (docs/math.md gives each
backend's bound relative to it), so it computes as exactly as numpy allows:

* exact operations, whatever the type: absf, floor, ceil, trunc, round (half away from zero),
  roundeven, copysign, fma (the fused a*b + c with ONE rounding: for f16/bf16/f32 operands the
  product is exact in float64 and the sum is rounded to float64 with round-to-odd, after which
  the rounding to the result type is the correct single rounding; f64 operands are summed as
  exact fractions), sqrt (float64 sqrt rounded again is the correctly rounded f16/bf16/f32 sqrt:
  53 >= 2p + 2 bits);
* transcendental functions (exp, exp2, expm1, log, log2, log10, log1p, rsqrt, cbrt, sin, cos,
  tan, asin, acos, atan, atan2, sinh, cosh, tanh, asinh, acosh, atanh, erf, powf, fpowi): numpy's
  float64 function (Python's `math.erf` for erf), whose error is below one float64 ulp, rounded
  once to the result type. For f16, bf16 and f32 results that is the correctly rounded value
  except when the exact value lies within about 2^-52 (relative) of a rounding boundary of the
  result type, which happens for a vanishingly small fraction of inputs; an f64 result carries
  numpy's own error (below 1 ulp);
* integers (absi, ctlz, cttz, ctpop, ipowi): exact, wrapping to the width (absi of the most
  negative value is itself, as in MLIR).

Domain errors give what IEEE 754 and MLIR give: NaN (log of a negative number), +-inf (log 0),
no exception. Operands may be scalars or lane vectors (1-D numpy arrays, also the batched
element arrays of a `coop.per_element_op` function body); the result is a lane vector when any
operand is one (`coopdialect.interpreter.common`).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
from xdsl.dialects import math
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from coopdialect.interpreter.arith import _int_result, _ints, _width
from coopdialect.interpreter.common import fail, is_lanes, numpy_dtype, round_from_f64

_ERF = np.frompyfunc(pymath.erf, 1, 1)


def _erf(x: np.ndarray) -> np.ndarray:
    return np.asarray(_ERF(x), dtype=object).astype(np.float64)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """round(): the nearest integer, ties away from zero (C's round), with x - trunc(x) exact."""
    t = np.trunc(x)
    r = np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)
    return np.copysign(r, x)


# math op -> its float64 function (inputs and output float64 arrays)
UNARY_FLOAT: dict[type[Operation], Callable[[np.ndarray], np.ndarray]] = {
    math.AbsFOp: np.abs, math.FloorOp: np.floor, math.CeilOp: np.ceil, math.TruncOp: np.trunc,
    math.RoundOp: _round_half_away, math.RoundEvenOp: np.rint, math.SqrtOp: np.sqrt,
    math.RsqrtOp: lambda x: 1.0 / np.sqrt(x), math.CbrtOp: np.cbrt,
    math.ExpOp: np.exp, math.Exp2Op: np.exp2, math.ExpM1Op: np.expm1,
    math.LogOp: np.log, math.Log2Op: np.log2, math.Log10Op: np.log10, math.Log1pOp: np.log1p,
    math.SinOp: np.sin, math.CosOp: np.cos, math.TanOp: np.tan, math.AsinOp: np.arcsin,
    math.AcosOp: np.arccos, math.AtanOp: np.arctan, math.SinhOp: np.sinh, math.CoshOp: np.cosh,
    math.TanhOp: np.tanh, math.AsinhOp: np.arcsinh, math.AcoshOp: np.arccosh,
    math.AtanhOp: np.arctanh, math.ErfOp: _erf,
}
BINARY_FLOAT: dict[type[Operation], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    math.Atan2Op: np.arctan2,  # math.atan2 %y, %x
    math.CopySignOp: np.copysign, math.PowFOp: np.power,
}


def _to_odd(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    """s + err (s = RN(s + err), |err| <= ulp(s)/2) rounded to float64 with round-to-odd:
    truncate toward zero, then set the last bit when inexact."""
    inexact = (err != 0) & np.isfinite(s)
    toward_zero = inexact & (np.signbit(err) != np.signbit(s))  # RN rounded away from zero
    t = np.where(toward_zero, np.nextafter(s, 0.0), s)
    bits = t.view(np.uint64) | inexact.astype(np.uint64)
    return bits.view(np.float64)


def fma_exact(a: np.ndarray, b: np.ndarray, c: np.ndarray, dt: np.dtype) -> np.ndarray:
    """a*b + c rounded once to float dtype `dt` (operands already of type `dt`).

    f16/bf16/f32 operands: a*b is exact in float64 (at most 48 significant bits); TwoSum gives the
    exact error of the float64 sum, which round-to-odd folds into the last bit, so the final
    rounding to `dt` (p <= 24 <= 53 - 2 bits) is correct. f64 operands: exact fractions."""
    a64, b64, c64 = (np.asarray(x).astype(np.float64) for x in (a, b, c))
    if dt == np.dtype(np.float64):
        out = np.empty(np.broadcast(a64, b64, c64).shape, np.float64)
        for i, (x, y, z) in enumerate(np.broadcast(a64, b64, c64)):
            if all(map(pymath.isfinite, (x, y, z))):
                try:
                    out.flat[i] = float(Fraction(x) * Fraction(y) + Fraction(z))
                except OverflowError:
                    out.flat[i] = x * y + z  # overflows either way
            else:
                out.flat[i] = x * y + z  # infinities and NaNs: the IEEE special cases
        return out
    with np.errstate(all="ignore"):
        p = a64 * b64
        s = p + c64
        bb = s - p
        err = (p - (s - bb)) + (c64 - bb)
        err = np.where(np.isfinite(err), err, 0.0)
        return round_from_f64(_to_odd(np.asarray(s), np.asarray(err)), dt)


class MathFunctions(InterpreterFunctions):
    """`math` dialect impls (see the module docstring); registered with xDSL at the end of the
    module, after the table-driven float impls are added."""

    def _dtype(self, op: Operation) -> np.dtype:
        try:
            return numpy_dtype(op.results[0].type)
        except ValueError as e:
            raise fail(op, str(e)) from None

    def _float(self, op: Operation, args: PythonValues, f) -> tuple[Any]:
        dt = self._dtype(op)
        if dt.kind in "iub":
            raise fail(op, f"{op.name} takes floats, got {op.results[0].type}")
        xs = [np.asarray(a).astype(np.float64) for a in args]
        with np.errstate(all="ignore"):
            r = round_from_f64(np.asarray(f(*xs), dtype=np.float64), dt)
        return (r if any(is_lanes(a) for a in args) else r[()],)

    def _int(self, interpreter: Interpreter, op: Operation, args: PythonValues, f) -> tuple[Any]:
        bits = _width(interpreter, op.results[0].type)
        xs = [_ints(a, bits, True) for a in args]
        return (_int_result(f(bits, *xs), bits, any(is_lanes(a) for a in args)),)

    @impl(math.FmaOp)
    def run_fma(self, interpreter: Interpreter, op: math.FmaOp, args: PythonValues):
        dt = self._dtype(op)
        xs = [np.asarray(a).astype(dt) for a in args]
        r = fma_exact(*xs, dt)
        return (r if any(is_lanes(a) for a in args) else r[()],)

    @impl(math.FPowIOp)
    def run_fpowi(self, interpreter: Interpreter, op: math.FPowIOp, args: PythonValues):
        bits = _width(interpreter, op.rhs.type)
        n = np.asarray(_ints(args[1], bits, True)).astype(np.float64)
        return self._float(op, (args[0], n if is_lanes(args[1]) else n[()]), np.power)

    @impl(math.AbsIOp)
    def run_absi(self, interpreter, op, args):
        return self._int(interpreter, op, args, lambda bits, x: abs(x))

    @impl(math.CountLeadingZerosOp)
    def run_ctlz(self, interpreter, op, args):
        return self._int(interpreter, op, args, lambda bits, x: np.frompyfunc(
            lambda v: bits - (int(v) & ((1 << bits) - 1)).bit_length(), 1, 1)(x))

    @impl(math.CountTrailingZerosOp)
    def run_cttz(self, interpreter, op, args):
        def tz(v: int, bits: int) -> int:
            v &= (1 << bits) - 1
            return bits if v == 0 else (v & -v).bit_length() - 1
        return self._int(interpreter, op, args,
                         lambda bits, x: np.frompyfunc(lambda v: tz(int(v), bits), 1, 1)(x))

    @impl(math.CtPopOp)
    def run_ctpop(self, interpreter, op, args):
        return self._int(interpreter, op, args, lambda bits, x: np.frompyfunc(
            lambda v: bin(int(v) & ((1 << bits) - 1)).count("1"), 1, 1)(x))

    @impl(math.IPowIOp)
    def run_ipowi(self, interpreter, op, args):
        def ipow(b: int, e: int, bits: int) -> int:
            if e < 0:  # MLIR: 1 for b == 1, +-1 for b == -1, division by zero for 0, else 0
                if b == 0:
                    raise fail(op, "math.ipowi of 0 to a negative power (division by zero)")
                return 1 if b == 1 else ((-1) ** (-e) if b == -1 else 0)
            return pow(b, e, 1 << bits)
        return self._int(interpreter, op, args, lambda bits, x, y: np.frompyfunc(
            lambda b, e: ipow(int(b), int(e), bits), 2, 1)(x, y))


def _register_float_impls() -> None:
    """One impl per float function of UNARY_FLOAT / BINARY_FLOAT (a table rather than ~30
    methods that differ only in the numpy function)."""
    for table in (UNARY_FLOAT, BINARY_FLOAT):
        for cls, f in table.items():
            def run(self, interpreter, op, args, f=f):
                return self._float(op, args, f)
            name = f"run_{cls.name.split('.')[1]}"
            setattr(MathFunctions, name, impl(cls)(run))


_register_float_impls()
register_impls(MathFunctions)
