"""`arith` impls for kernels: floats round to their type, and every op works on lane vectors.

xDSL's own arith impls compute floats as Python float64 without rounding to f16/f32 and take
only Python scalars. `CoopArithFunctions` replaces them (register it after xDSL's
`ArithFunctions` with `override=True`; `register_implementations` in this package does so) for:

* integers/index: constant, addi, subi, muli, divsi, divui, remsi, remui, andi, ori, xori, shli,
  shrsi, shrui, minsi, maxsi, minui, maxui, cmpi, select, index_cast, extsi, extui, trunci —
  results wrap to the result width (two's complement, xDSL's signed-int convention);
  division by zero and shifts >= width are undefined and raise;
* floats: constant (rounded once to the type), addf, subf, mulf, divf, negf, cmpf, extf, truncf,
  sitofp, uitofp, fptosi, fptoui, minimumf, maximumf (IEEE 754-2019: NaN-propagating, -0 < +0 in
  either order), minnumf, maxnumf (a NaN
  operand gives the other operand, IEEE 754 minNum/maxNum) — each result rounded to the result type
  (numpy float16/float32, ml_dtypes bfloat16/float8); fptosi/fptoui of NaN or out-of-range
  values (poison in MLIR) raise;
* bitcast: the bits reinterpreted between same-width integer and float types (i16 <-> f16).

Operands may be lane vectors (numpy arrays of shape (subgroup_size,)); the result is then a lane
vector: int64 holding the signed value for integers, the float dtype for floats, bool for i1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, IntegerType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Attribute, Operation

from coopdialect.interpreter.common import (
    fail,
    is_lanes,
    numpy_dtype,
    round_from_f64,
    to_signed_int,
)


def _width(interpreter: Interpreter, t: Attribute) -> int:
    if isinstance(t, IndexType):
        return interpreter.index_bitwidth
    assert isinstance(t, IntegerType), t
    return t.width.data


# element-wise on object arrays of Python ints (np.where would squeeze them through C longs)
_SIGNED = np.frompyfunc(to_signed_int, 2, 1)
_UNSIGNED = np.frompyfunc(lambda v, bits: int(v) & ((1 << bits) - 1), 2, 1)
_WHERE = np.frompyfunc(lambda c, a, b: a if c else b, 3, 1)


def _ints(v: Any, bits: int, signed: bool) -> np.ndarray:
    """An integer scalar or lane vector as an object array of exact Python ints (0-d for a
    scalar), read as `bits`-bit signed or unsigned."""
    a = np.asarray(v)
    if a.dtype.kind in "iub":
        # read from the int64 value's low `bits` bits in numpy (1-D: int64 arrays wrap without
        # warnings), then made Python ints: what `to_signed_int` / the mask give per element
        x = a.astype(np.int64).reshape(-1)
        if signed and bits > 1:
            if bits < 64:
                half = np.int64(1 << (bits - 1))
                x = ((x + half) & np.int64((1 << bits) - 1)) - half
            out = x.astype(object)
        elif bits < 64:
            out = (x & np.int64((1 << bits) - 1)).astype(object)
        else:
            out = x.astype(np.uint64).astype(object)
        return out.reshape(a.shape)
    f = _SIGNED if signed and bits > 1 else _UNSIGNED
    return np.asarray(f(a.astype(object), bits), dtype=object)


def _wrapped(ufunc, args: tuple, bits: int, vector: bool) -> Any:
    """`ufunc` (add, subtract, multiply, bitwise and/or/xor) of integer scalars or lanes, wrapped
    to `bits` (2..64) bits, signed: the value `_int_result` gives for the exact result. These
    ops' low 64 bits depend only on their operands' low 64 bits, so numpy's int64 arithmetic,
    which wraps modulo 2**64, holds them; the low `bits` then read signed. None if an operand
    is not a numpy integer or bool (the exact path takes it)."""
    xs = []
    for a in args:
        x = np.asarray(a)
        if x.dtype.kind not in "iub":
            return None
        xs.append(x.astype(np.int64).reshape(-1))  # 1-D: int64 arrays wrap without warnings
    r = ufunc(xs[0], xs[1])
    if bits < 64:
        half = np.int64(1 << (bits - 1))
        r = ((r + half) & np.int64((1 << bits) - 1)) - half
    return r if vector else int(r[0])


def _int_result(r: Any, bits: int, vector: bool) -> Any:
    """Exact ints -> the value of type iN: wrapped, signed; bool for i1; scalar or int64 lanes."""
    r = np.asarray(r, dtype=object)
    try:  # exact results that fit int64 (nearly all) are wrapped in numpy, as `_ints` reads
        x = r.astype(np.int64).reshape(-1)
    except OverflowError:
        x = None
    if x is not None:
        if bits == 1:
            b = (x & np.int64(1)).astype(bool).reshape(r.shape)
            return b if vector else bool(b[()])
        if bits < 64:
            half = np.int64(1 << (bits - 1))
            x = ((x + half) & np.int64((1 << bits) - 1)) - half
        s = x.reshape(r.shape)
        return s if vector else int(s[()])
    if bits == 1:
        b = np.asarray(_UNSIGNED(r, 1)).astype(bool)
        return b if vector else bool(b[()])
    s = np.asarray(_SIGNED(r, bits), dtype=object)
    return s.astype(np.int64) if vector else int(s[()])


def _float_result(r: Any, dt: np.dtype, vector: bool) -> Any:
    with np.errstate(all="ignore"):
        a = np.asarray(r).astype(dt)
    return a if vector else a[()]


def _float_dtype(op: Operation, t: Attribute) -> np.dtype:
    try:
        return numpy_dtype(t)
    except ValueError as e:
        raise fail(op, str(e)) from None


def _as_float(v: Any, dt: np.dtype) -> np.ndarray:
    a = np.asarray(v)
    if a.dtype == dt:
        return a
    return round_from_f64(a.astype(np.float64), dt)


_CMPI = {
    0: lambda x, y: x == y, 1: lambda x, y: x != y, 2: lambda x, y: x < y,
    3: lambda x, y: x <= y, 4: lambda x, y: x > y, 5: lambda x, y: x >= y,
    6: lambda x, y: x < y, 7: lambda x, y: x <= y, 8: lambda x, y: x > y, 9: lambda x, y: x >= y,
}


def ieee_maximum(x, y):
    """IEEE 754-2019 maximum, MLIR's arith.maximumf: NaN if either is NaN, and -0 < +0 whatever
    the order (numpy's maximum returns its first argument for +0 and -0)."""
    r = np.maximum(x, y)
    both_zero = (x == 0) & (y == 0)
    return np.where(both_zero & ~(np.signbit(x) & np.signbit(y)), np.zeros_like(r), r)


def ieee_minimum(x, y):
    """IEEE 754-2019 minimum, MLIR's arith.minimumf: NaN if either is NaN, -0 < +0."""
    r = np.minimum(x, y)
    both_zero = (x == 0) & (y == 0)
    return np.where(both_zero & (np.signbit(x) | np.signbit(y)), -np.zeros_like(r), r)


@register_impls
class CoopArithFunctions(InterpreterFunctions):
    """arith with per-type float rounding and lane vectors (see the module docstring)."""

    # ---- helpers ------------------------------------------------------------------------

    def _binary_int(self, interpreter: Interpreter, op: Operation, args: PythonValues, f,
                    signed: bool = True, ufunc=None):
        """`f` on the exact values (`ufunc`: the numpy int64 op that wraps alike, `_wrapped`)."""
        bits = _width(interpreter, op.results[0].type)
        vector = any(is_lanes(a) for a in args)
        if ufunc is not None and 1 < bits:
            if not vector and all(type(a) is int or isinstance(a, np.integer) for a in args):
                # two scalars: the exact op on Python ints, then the low `bits` bits, signed
                # (which is what reading the operands signed or unsigned first would give)
                return (to_signed_int(f(int(args[0]), int(args[1])), bits),)
            if bits <= 64:
                r = _wrapped(ufunc, args, bits, vector)
                if r is not None:
                    return (r,)
        x, y = (_ints(a, bits, signed) for a in args)
        return (_int_result(f(x, y), bits, vector),)

    def _binary_float(self, op: Operation, args: PythonValues, f):
        dt = _float_dtype(op, op.results[0].type)
        x, y = (_as_float(a, dt) for a in args)
        with np.errstate(all="ignore"):
            r = f(x, y)
        return (_float_result(r, dt, any(is_lanes(a) for a in args)),)

    # ---- constants ------------------------------------------------------------------------

    @impl(arith.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues):
        v = op.value
        if isinstance(v, IntegerAttr):
            bits = _width(interpreter, op.result.type)
            data = v.value.data
            return (bool(data & 1) if bits == 1 else to_signed_int(data, bits),)
        if isinstance(v, FloatAttr):
            dt = _float_dtype(op, op.result.type)
            return (round_from_f64(np.float64(v.value.data), dt)[()],)
        raise fail(op, f"arith.constant of {type(v).__name__} is not supported by the interpreter")

    # ---- integers -------------------------------------------------------------------------

    @impl(arith.AddiOp)
    def run_addi(self, interpreter, op, args):
        return self._binary_int(interpreter, op, args, lambda x, y: x + y, ufunc=np.add)

    @impl(arith.SubiOp)
    def run_subi(self, interpreter, op, args):
        return self._binary_int(interpreter, op, args, lambda x, y: x - y, ufunc=np.subtract)

    @impl(arith.MuliOp)
    def run_muli(self, interpreter, op, args):
        return self._binary_int(interpreter, op, args, lambda x, y: x * y, ufunc=np.multiply)

    @impl(arith.AndIOp)
    def run_andi(self, interpreter, op, args):
        return self._binary_int(interpreter, op, args, lambda x, y: x & y, signed=False,
                                ufunc=np.bitwise_and)

    @impl(arith.OrIOp)
    def run_ori(self, interpreter, op, args):
        return self._binary_int(interpreter, op, args, lambda x, y: x | y, signed=False,
                                ufunc=np.bitwise_or)

    @impl(arith.XOrIOp)
    def run_xori(self, interpreter, op, args):
        return self._binary_int(interpreter, op, args, lambda x, y: x ^ y, signed=False,
                                ufunc=np.bitwise_xor)

    @impl(arith.MinSIOp)
    def run_minsi(self, interpreter, op, args):
        return self._binary_int(interpreter, op, args, lambda x, y: _WHERE(x < y, x, y))

    @impl(arith.MaxSIOp)
    def run_maxsi(self, interpreter, op, args):
        return self._binary_int(interpreter, op, args, lambda x, y: _WHERE(x > y, x, y))

    @impl(arith.MinUIOp)
    def run_minui(self, interpreter, op, args):
        return self._binary_int(interpreter, op, args, lambda x, y: _WHERE(x < y, x, y), False)

    @impl(arith.MaxUIOp)
    def run_maxui(self, interpreter, op, args):
        return self._binary_int(interpreter, op, args, lambda x, y: _WHERE(x > y, x, y), False)

    def _divide(self, interpreter, op, args, signed: bool, rem: bool):
        bits = _width(interpreter, op.results[0].type)
        x, y = (_ints(a, bits, signed) for a in args)
        if np.any(y == 0):
            raise fail(op, "division by zero (undefined behavior)")
        q = abs(x) // abs(y) if signed else x // y
        if signed:
            q = _WHERE((x < 0) != (y < 0), -q, q)  # round toward zero
        r = x - q * y if rem else q
        return (_int_result(r, bits, any(is_lanes(a) for a in args)),)

    @impl(arith.DivSIOp)
    def run_divsi(self, interpreter, op, args):
        return self._divide(interpreter, op, args, True, False)

    @impl(arith.DivUIOp)
    def run_divui(self, interpreter, op, args):
        return self._divide(interpreter, op, args, False, False)

    @impl(arith.CeilDivUIOp)
    def run_ceildivui(self, interpreter, op, args):
        return self._rounded(interpreter, op, args, False, ceil=True)

    @impl(arith.CeilDivSIOp)
    def run_ceildivsi(self, interpreter, op, args):
        return self._rounded(interpreter, op, args, True, ceil=True)

    @impl(arith.FloorDivSIOp)
    def run_floordivsi(self, interpreter, op, args):
        return self._rounded(interpreter, op, args, True, ceil=False)

    def _rounded(self, interpreter, op, args, signed: bool, ceil: bool):
        """MLIR's ceildivui / ceildivsi / floordivsi: the exact quotient rounded up (down)."""
        bits = _width(interpreter, op.results[0].type)
        x, y = (_ints(a, bits, signed) for a in args)
        if np.any(y == 0):
            raise fail(op, "division by zero (undefined behavior)")
        q = -((-x) // y) if ceil else x // y  # exact Python-style floor on the int64 lanes
        return (_int_result(q, bits, any(is_lanes(a) for a in args)),)

    @impl(arith.RemSIOp)
    def run_remsi(self, interpreter, op, args):
        return self._divide(interpreter, op, args, True, True)

    @impl(arith.RemUIOp)
    def run_remui(self, interpreter, op, args):
        return self._divide(interpreter, op, args, False, True)

    def _shift(self, interpreter, op, args, kind: str):
        bits = _width(interpreter, op.results[0].type)
        x = _ints(args[0], bits, kind == "shrsi")
        n = _ints(args[1], bits, False)
        if np.any(n >= bits):
            raise fail(op, f"shift amount >= the bit width {bits} (poison)")
        r = x << n if kind == "shli" else x >> n
        return (_int_result(r, bits, any(is_lanes(a) for a in args)),)

    @impl(arith.ShLIOp)
    def run_shli(self, interpreter, op, args):
        return self._shift(interpreter, op, args, "shli")

    @impl(arith.ShRSIOp)
    def run_shrsi(self, interpreter, op, args):
        return self._shift(interpreter, op, args, "shrsi")

    @impl(arith.ShRUIOp)
    def run_shrui(self, interpreter, op, args):
        return self._shift(interpreter, op, args, "shrui")

    @impl(arith.CmpiOp)
    def run_cmpi(self, interpreter, op: arith.CmpiOp, args):
        bits = _width(interpreter, op.lhs.type)
        pred = op.predicate.value.data
        x, y = (_ints(a, bits, pred < 6) for a in args)
        r = np.asarray(_CMPI[pred](x, y)).astype(bool)
        return (r if any(is_lanes(a) for a in args) else bool(r[()]),)

    @impl(arith.SelectOp)
    def run_select(self, interpreter, op: arith.SelectOp, args):
        cond, a, b = args
        if not is_lanes(cond):
            return (a if cond else b,)
        t = op.result.type
        if isinstance(t, IntegerType | IndexType):
            bits = _width(interpreter, t)
            r = _WHERE(cond, _ints(a, bits, True), _ints(b, bits, True))
            return (_int_result(r, bits, True),)
        dt = _float_dtype(op, t)
        return (np.where(cond, _as_float(a, dt), _as_float(b, dt)).astype(dt),)

    def _int_cast(self, interpreter, op, args, signed: bool):
        src = _width(interpreter, op.operands[0].type)
        dst = _width(interpreter, op.results[0].type)
        return (_int_result(_ints(args[0], src, signed), dst, is_lanes(args[0])),)

    @impl(arith.IndexCastOp)
    def run_index_cast(self, interpreter, op, args):
        return self._int_cast(interpreter, op, args, True)

    @impl(arith.ExtSIOp)
    def run_extsi(self, interpreter, op, args):
        return self._int_cast(interpreter, op, args, True)

    @impl(arith.ExtUIOp)
    def run_extui(self, interpreter, op, args):
        return self._int_cast(interpreter, op, args, False)

    @impl(arith.TruncIOp)
    def run_trunci(self, interpreter, op, args):
        return self._int_cast(interpreter, op, args, True)

    @impl(arith.BitcastOp)
    def run_bitcast(self, interpreter, op, args):
        """Same-width reinterpretation between integer and float types (e.g. i16 <-> f16)."""
        src, dst = op.operands[0].type, op.results[0].type
        vector = is_lanes(args[0])
        if isinstance(src, IntegerType | IndexType):
            bits = _width(interpreter, src)
            raw = np.asarray(_ints(args[0], bits, False)).astype(np.uint64)
        else:
            a = np.asarray(args[0]).astype(_float_dtype(op, src))
            raw = a.view(np.dtype(f"u{a.dtype.itemsize}")).astype(np.uint64)
            bits = a.dtype.itemsize * 8
        if isinstance(dst, IntegerType | IndexType):
            return (_int_result(raw.astype(object), _width(interpreter, dst), vector),)
        dt = _float_dtype(op, dst)
        if dt.itemsize * 8 != bits:
            raise fail(op, f"arith.bitcast between types of different widths ({src} -> {dst})")
        out = raw.astype(np.dtype(f"u{dt.itemsize}")).view(dt)
        return (out if vector else out[()],)

    # ---- floats ---------------------------------------------------------------------------

    @impl(arith.AddfOp)
    def run_addf(self, interpreter, op, args):
        return self._binary_float(op, args, np.add)

    @impl(arith.SubfOp)
    def run_subf(self, interpreter, op, args):
        return self._binary_float(op, args, np.subtract)

    @impl(arith.MulfOp)
    def run_mulf(self, interpreter, op, args):
        return self._binary_float(op, args, np.multiply)

    @impl(arith.DivfOp)
    def run_divf(self, interpreter, op, args):
        return self._binary_float(op, args, np.divide)

    @impl(arith.MinimumfOp)
    def run_minimumf(self, interpreter, op, args):
        return self._binary_float(op, args, ieee_minimum)

    @impl(arith.MaximumfOp)
    def run_maximumf(self, interpreter, op, args):
        return self._binary_float(op, args, ieee_maximum)

    @impl(arith.MinnumfOp)
    def run_minnumf(self, interpreter, op, args):
        return self._binary_float(op, args, np.fmin)

    @impl(arith.MaxnumfOp)
    def run_maxnumf(self, interpreter, op, args):
        return self._binary_float(op, args, np.fmax)

    @impl(arith.NegfOp)
    def run_negf(self, interpreter, op, args):
        dt = _float_dtype(op, op.result.type)
        return (_float_result(-_as_float(args[0], dt), dt, is_lanes(args[0])),)

    @impl(arith.CmpfOp)
    def run_cmpf(self, interpreter, op: arith.CmpfOp, args):
        x, y = (np.asarray(a).astype(np.float64) for a in args)
        unordered = np.isnan(x) | np.isnan(y)
        ordered = ~unordered
        p = op.predicate.value.data
        base = {1: x == y, 2: x > y, 3: x >= y, 4: x < y, 5: x <= y, 6: x != y}
        if p == 0:
            r = np.zeros_like(ordered)
        elif p == 15:
            r = np.ones_like(ordered)
        elif p == 7:
            r = ordered
        elif p == 14:
            r = unordered
        elif p < 7:
            r = base[p] & ordered
        else:
            r = base[p - 7] | unordered
        r = np.asarray(r, dtype=bool)
        return (r if any(is_lanes(a) for a in args) else bool(r[()]),)

    def _resize_float(self, op, args):
        """One rounding from the exact (float64) value to the result type."""
        dt = _float_dtype(op, op.result.type)
        return (_float_result(round_from_f64(np.asarray(args[0]).astype(np.float64), dt), dt,
                              is_lanes(args[0])),)

    @impl(arith.ExtFOp)
    def run_extf(self, interpreter, op, args):
        return self._resize_float(op, args)

    @impl(arith.TruncFOp)
    def run_truncf(self, interpreter, op, args):
        # not self.run_extf: an @impl method called directly returns xDSL's (values, terminator) pair
        return self._resize_float(op, args)

    def _int_to_float(self, interpreter, op, args, signed: bool):
        dt = _float_dtype(op, op.result.type)
        bits = _width(interpreter, op.operands[0].type)
        x = _ints(args[0], bits, signed)
        f = np.array([float(i) for i in x.reshape(-1)], np.float64).reshape(x.shape)
        return (_float_result(round_from_f64(f, dt), dt, is_lanes(args[0])),)

    @impl(arith.SIToFPOp)
    def run_sitofp(self, interpreter, op, args):
        return self._int_to_float(interpreter, op, args, True)

    @impl(arith.UIToFPOp)
    def run_uitofp(self, interpreter, op, args):
        return self._int_to_float(interpreter, op, args, False)

    def _float_to_int(self, interpreter, op, args, signed: bool):
        bits = _width(interpreter, op.result.type)
        x = np.asarray(args[0]).astype(np.float64)
        t = np.trunc(x)
        lo, hi = (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1)) if signed else (0.0, 2.0 ** bits)
        with np.errstate(invalid="ignore"):
            bad = np.isnan(t) | (t < lo) | (t >= hi)
        if np.any(bad):
            v = x[np.nonzero(bad)][0] if x.ndim else x[()]
            raise fail(op, f"{v} is not representable as a {'signed' if signed else 'unsigned'} "
                           f"{bits}-bit integer (poison)")
        ints = np.array([int(i) for i in t.reshape(-1)], dtype=object).reshape(t.shape)
        return (_int_result(ints, bits, is_lanes(args[0])),)

    @impl(arith.FPToSIOp)
    def run_fptosi(self, interpreter, op, args):
        return self._float_to_int(interpreter, op, args, True)

    @impl(arith.FPToUIOp)
    def run_fptoui(self, interpreter, op, args):
        return self._float_to_int(interpreter, op, args, False)
