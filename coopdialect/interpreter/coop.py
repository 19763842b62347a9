"""Interpreter impls of every `coop` op: numpy semantics of SPV_KHR/NV_cooperative_matrix.

A `!coop.matrix<RxCxT, ...>` value is a numpy array of shape (R, C), dtype `numpy_dtype(T)`
(f16 -> float16, bf16 -> ml_dtypes.bfloat16, f8 -> ml_dtypes float8, iN/siN -> intN, uiN -> uintN).
One interpreter runs a whole subgroup at once (see `coopdialect.interpreter.common`).

Documented choices where the specs leave the implementation free:

* **mul_add, floats.** Products and sums in float64, then ONE rounding (to nearest even) to the
  Result component type. Products of f16/bf16/f8 and also of f32 inputs are exact in float64
  (24+24 significand bits <= 53); only the K-term sum rounds, at float64 precision, which is far
  below one f16/f32 ulp of the result. Hardware accumulates in f32 or f16 in an unspecified order,
  so hardware results may differ from the interpreter's by the rounding of its own accumulation
  (the specs: "the order of the operations is implementation-dependent", precision "defined by the
  client API"). f64 inputs: products round in float64.
* **mul_add, integers** (KHR 3.X OpCooperativeMatrixMulAddKHR). A, B, C are sign- or zero-extended
  per `MulAddOp.is_signed` and the exact A*B is computed (int64, or Python ints where 64 bits may
  overflow). Without SaturatingAccumulation the result is the low N bits of A*B + C (N = Result
  width). With it, A*B outside the range of Result (its signedness) is undefined behavior and
  raises; the addition of C saturates to Result's range. NV matrices (no Use): the NV text says
  integer operations are exact and overflow is undefined, so any overflow of Result's range raises.
* **Components per invocation** (OpCooperativeMatrixLength, OpCompositeExtract/Insert; the
  mapping is implementation-dependent). S = invocations of the matrix's scope (subgroup size for
  Subgroup, workgroup invocation count for Workgroup). Length = ceil(R*C / S). Invocation `inv`
  (its lane for Subgroup, its LocalInvocationIndex for Workgroup) holds components
  i = 0..Length-1 = the matrix elements at row-major linear index `i*S + inv`; linear indices past
  R*C are padding (extract gives 0, insert ignores the value). `coop.extract` returns a lane
  vector of shape (subgroup_size,); `coop.insert` takes a lane vector or a uniform scalar.
* A scalar operand that is a lane vector (composite_construct, matrix_times_scalar) applies to
  each invocation's own components under the same mapping (Subgroup scope only).
* Memory operands (Volatile, Aligned, MakePointer*) do not change values and are ignored.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.ir import Operation

from coopdialect.dialects import coop
from coopdialect.interpreter.arm_layouts import arm_byte_offsets
from coopdialect.interpreter.common import (
    exact_ints,
    fail,
    int_range,
    is_float_dtype,
    is_lanes,
    numpy_dtype,
    round_from_f64,
    signed_view,
    subgroup_context,
    uniform,
    unsigned_view,
    wrap_to,
)
from coopdialect.interpreter.races import access

# --------------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------------


def memref_view(op: Operation, value: Any, memref_type: MemRefType) -> np.ndarray:
    """Zero-copy flat numpy view (row-major) of a memref value (an xDSL ShapedArray)."""
    if not isinstance(value, ShapedArray):
        raise fail(op, f"expected a memref value, got {type(value).__name__}")
    dt = numpy_dtype(memref_type.element_type)
    raw = value.data_ptr.raw
    n = prod(value.shape)
    return np.frombuffer(raw.memory, dtype=dt, count=n, offset=raw.offset)


def _element_indices(op: Operation, rows: int, cols: int, offset: Any, stride: Any,
                     layout: coop.Layout, size: int, is_store: bool) -> np.ndarray:
    """Linear element index of each matrix element (R, C), bounds- and stride-checked.

    RowMajor: (r, c) -> offset + r*stride + c; ColumnMajor: offset + c*stride + r (KHR 3.X
    OpCooperativeMatrixLoadKHR/StoreKHR, NV 3.X Load/StoreNV with ColumnMajor)."""
    offset = uniform(op, offset, "the offset")
    stride = uniform(op, stride, "the stride")
    if is_store and stride <= 0:
        raise fail(op, f"Stride must be greater than 0 for a store, got {stride} at run time")
    if not is_store and stride < 0:
        raise fail(op, f"Stride must be greater than or equal to 0 for a load, got {stride} "
                       "at run time")
    r = np.arange(rows, dtype=np.int64)[:, None]
    c = np.arange(cols, dtype=np.int64)[None, :]
    if layout == coop.Layout.RowMajor:
        idx = offset + r * stride + c
    else:
        idx = offset + c * stride + r
    bad = (idx < 0) | (idx >= size)
    if bad.any():
        br, bc = (int(v[0]) for v in np.nonzero(bad))
        raise fail(op, f"out-of-bounds {'store' if is_store else 'load'}: element ({br}, {bc}) "
                       f"of the {rows}x{cols} matrix is at index {int(idx[br, bc])}, outside "
                       f"the {size} elements of the memref (offset {offset}, stride {stride}, "
                       f"{layout.value})")
    return idx


def _arm_bytes(op: Operation, m: coop.MatrixType, flat: np.ndarray, offset: Any, stride: Any,
               is_store: bool) -> tuple[np.ndarray, np.ndarray]:
    """(byte view of the memref, byte address of each element's bytes in row-major element
    order, flattened) for the SPV_ARM_cooperative_matrix_layouts layouts (interpreter.arm_layouts)."""
    offset = uniform(op, offset, "the offset")
    stride = uniform(op, stride, "the stride")
    esize = flat.dtype.itemsize
    try:
        rel = arm_byte_offsets(m.rows, m.columns, esize, op.layout.data, int(stride))
    except ValueError as e:
        raise fail(op, f"{op.layout.data.value}: {e} (at run time)") from None
    first, count = offset * esize, m.rows * m.columns * esize
    if offset < 0 or first + count > flat.size * esize:
        raise fail(op, f"out-of-bounds {'store' if is_store else 'load'}: the {m.rows}x{m.columns} "
                       f"matrix in {op.layout.data.value} covers elements [{offset}, "
                       f"{offset + m.rows * m.columns}) of a memref of {flat.size}")
    return flat.view(np.uint8), (first + rel).reshape(-1)


# --------------------------------------------------------------------------------------------
# Scalars and lanes
# --------------------------------------------------------------------------------------------


def to_dtype(value: Any, dt: np.dtype) -> Any:
    """A scalar or lane vector converted to component dtype `dt` (ints wrap, floats round once)."""
    arr = np.asarray(value)
    if arr.dtype == dt:
        return arr
    if is_float_dtype(dt):
        if arr.dtype.kind in "iubO" or arr.dtype == np.float64:
            return round_from_f64(arr.astype(np.float64), dt)  # one rounding
        with np.errstate(all="ignore"):
            return arr.astype(dt)  # from a narrower float: exact or one rounding
    return wrap_to(arr if arr.dtype == object else arr.astype(np.int64), dt)


def _per_element(op: Operation, value: Any, m: coop.MatrixType, interpreter: Interpreter) -> Any:
    """A scalar operand as seen by each matrix element: a uniform scalar, or for a lane vector
    the value of the lane that holds the element (see the module docstring)."""
    if not is_lanes(value) or (value.size and np.all(value == value[0])):
        return value[0] if is_lanes(value) else value
    if m.scope_value != coop.Scope.Subgroup:
        raise fail(op, "a scalar that differs between invocations is only supported for "
                       "Subgroup-scope matrices")
    s = subgroup_context(interpreter).subgroup_size
    lane_of = (np.arange(m.rows * m.columns) % s).reshape(m.rows, m.columns)
    return value[lane_of]


def _mapping(interpreter: Interpreter, m: coop.MatrixType, index: int, op: Operation):
    """(linear element index per lane, valid mask) of component `index` (module docstring)."""
    ctx = subgroup_context(interpreter)
    s = ctx.invocations_in_scope(m.scope_value.value)
    length = -(-m.rows * m.columns // s)
    if index >= length:
        raise fail(op, f"component index {index} is out of range: each invocation holds "
                       f"{length} components of a {m.rows}x{m.columns} {m.scope_value.value} "
                       f"matrix (S = {s})")
    inv = ctx.local_index() if m.scope_value == coop.Scope.Workgroup else np.arange(
        ctx.subgroup_size, dtype=np.int64)
    lin = index * s + inv
    return lin, lin < m.rows * m.columns


def _check_finite_ints(op: Operation, t: np.ndarray, lo_ok: np.ndarray, hi_ok: np.ndarray,
                       x: np.ndarray, what: str) -> None:
    bad = np.isnan(t) | ~lo_ok | ~hi_ok
    if bad.any():
        r, c = (int(v[0]) for v in np.nonzero(bad))
        raise fail(op, f"element ({r}, {c}) = {x[r, c]} is not representable as {what} "
                       "(the result is undefined)")


@register_impls
class CoopFunctions(InterpreterFunctions):
    """numpy implementations of the coop dialect (see the module docstring for the choices)."""

    # ---- memory -------------------------------------------------------------------------

    @impl(coop.LoadOp)
    def run_load(self, interpreter: Interpreter, op: coop.LoadOp, args: PythonValues):
        """OpCooperativeMatrixLoadKHR/NV: gather (R, C) elements; errors on OOB or stride < 0."""
        buf, offset, stride = args
        m = op.result.type
        assert isinstance(m, coop.MatrixType)
        assert isinstance(op.pointer.type, MemRefType)
        flat = memref_view(op, buf, op.pointer.type)
        wgs = m.scope_value == coop.Scope.Workgroup
        if op.layout.data in coop.ARM_LAYOUTS:
            raw, addr = _arm_bytes(op, m, flat, offset, stride, False)
            access(interpreter, op, buf, addr[::flat.dtype.itemsize] // flat.dtype.itemsize,
                   write=False, workgroup_scope=wgs)
            return (raw[addr].view(flat.dtype).reshape(m.rows, m.columns),)
        idx = _element_indices(op, m.rows, m.columns, offset, stride, op.layout.data,
                               flat.size, False)
        access(interpreter, op, buf, idx, write=False, workgroup_scope=wgs)
        return (flat[idx],)  # fancy indexing copies

    @impl(coop.StoreOp)
    def run_store(self, interpreter: Interpreter, op: coop.StoreOp, args: PythonValues):
        """OpCooperativeMatrixStoreKHR/NV: scatter; errors on OOB or stride <= 0."""
        value, buf, offset, stride = args
        m = op.object.type
        assert isinstance(m, coop.MatrixType)
        assert isinstance(op.pointer.type, MemRefType)
        flat = memref_view(op, buf, op.pointer.type)
        wgs = m.scope_value == coop.Scope.Workgroup
        if op.layout.data in coop.ARM_LAYOUTS:
            raw, addr = _arm_bytes(op, m, flat, offset, stride, True)
            access(interpreter, op, buf, addr[::flat.dtype.itemsize] // flat.dtype.itemsize,
                   write=True, workgroup_scope=wgs, view=flat, new=value.reshape(-1))
            raw[addr] = np.ascontiguousarray(value, dtype=flat.dtype).reshape(-1).view(np.uint8)
            return ()
        idx = _element_indices(op, m.rows, m.columns, offset, stride, op.layout.data,
                               flat.size, True)
        access(interpreter, op, buf, idx, write=True, workgroup_scope=wgs, view=flat, new=value)
        flat[idx] = value
        return ()

    # ---- multiply-add -------------------------------------------------------------------

    @impl(coop.MulAddOp)
    def run_mul_add(self, interpreter: Interpreter, op: coop.MulAddOp, args: PythonValues):
        """Result = A*B + C (KHR OpCooperativeMatrixMulAddKHR; NV ...MulAddNV), module docstring."""
        a, b, c = args
        rt = op.result.type
        assert isinstance(rt, coop.MatrixType)
        rdt = numpy_dtype(rt.element_type)
        k = a.shape[-1]  # K (a may carry a leading member axis: interpreter.lockstep)
        if is_float_dtype(rdt):
            fa = a.astype(np.float64) if is_float_dtype(a.dtype) else exact_ints(
                a, op.is_signed("A")).astype(np.float64)
            fb = b.astype(np.float64) if is_float_dtype(b.dtype) else exact_ints(
                b, op.is_signed("B")).astype(np.float64)
            fc = c.astype(np.float64) if is_float_dtype(c.dtype) else exact_ints(
                c, op.is_signed("C")).astype(np.float64)
            return (round_from_f64(_matmul(fa, fb) + fc, rdt),)
        if is_float_dtype(a.dtype) or is_float_dtype(c.dtype):
            raise fail(op, "float A/B or C with an integer Result is not supported")
        # int64 is exact while |a*b| * K + |c| < 2**63; else Python ints (object arrays)
        wide = (a.dtype.itemsize + b.dtype.itemsize) * 8 + int(k).bit_length() >= 62 or max(
            c.dtype.itemsize, rdt.itemsize) == 8
        ea = exact_ints(a, op.is_signed("A"), wide)
        eb = exact_ints(b, op.is_signed("B"), wide)
        ec = exact_ints(c, op.is_signed("C"), wide)
        # a C wider than Result keeps its exact value; the wrap or saturation brings it in range
        ab = ea @ eb
        bits = rdt.itemsize * 8
        lo, hi = int_range(bits, op.is_signed("Result"))
        saturating = coop.MatrixOperand.SaturatingAccumulation in op.operand_flags
        rtype_is_nv = rt.is_nv
        if saturating or rtype_is_nv:
            bad = (ab < lo) | (ab > hi)
            if bad.any():
                r, cc = (int(v[0]) for v in np.nonzero(bad))
                raise fail(op, f"A*B overflows the Result component range [{lo}, {hi}] at "
                               f"({r}, {cc}): {ab[r, cc]} (undefined behavior with "
                               f"{'SaturatingAccumulation' if saturating else 'NV matrices'})")
        total = ab + ec
        if saturating:
            total = np.minimum(np.maximum(total, lo), hi)
        elif rtype_is_nv:
            bad = (total < lo) | (total > hi)
            if bad.any():
                r, cc = (int(v[0]) for v in np.nonzero(bad))
                raise fail(op, f"A*B+C overflows the Result component range [{lo}, {hi}] at "
                               f"({r}, {cc}): {total[r, cc]} (undefined behavior for NV matrices)")
        return (wrap_to(total, rdt),)

    # ---- length, construct, extract, insert ----------------------------------------------

    @impl(coop.LengthOp)
    def run_length(self, interpreter: Interpreter, op: coop.LengthOp, args: PythonValues):
        """OpCooperativeMatrixLength: ceil(R*C / S), S = invocations of the matrix's scope."""
        m = op.matrix_type
        s = subgroup_context(interpreter).invocations_in_scope(m.scope_value.value)
        return (-(-m.rows * m.columns // s),)

    @impl(coop.CompositeConstructOp)
    def run_composite_construct(self, interpreter: Interpreter, op: coop.CompositeConstructOp,
                                args: PythonValues):
        """OpCompositeConstruct with one Constituent: every component equals it."""
        m = op.result.type
        assert isinstance(m, coop.MatrixType)
        dt = numpy_dtype(m.element_type)
        v = to_dtype(_per_element(op, args[0], m, interpreter), dt)
        return (np.broadcast_to(v, m.get_shape()).astype(dt, copy=True),)

    @impl(coop.ExtractOp)
    def run_extract(self, interpreter: Interpreter, op: coop.ExtractOp, args: PythonValues):
        """OpCompositeExtract: a lane vector (subgroup_size,) of component `index` of each lane."""
        (mat,) = args
        m = op.matrix.type
        assert isinstance(m, coop.MatrixType)
        lin, valid = _mapping(interpreter, m, op.index.data, op)
        out = np.zeros(lin.shape, mat.dtype)
        out[valid] = mat.reshape(-1)[lin[valid]]
        return (out,)

    @impl(coop.InsertOp)
    def run_insert(self, interpreter: Interpreter, op: coop.InsertOp, args: PythonValues):
        """OpCompositeInsert: each lane writes its component `index` (lane vector or scalar)."""
        obj, mat = args
        m = op.matrix.type
        assert isinstance(m, coop.MatrixType)
        ctx = subgroup_context(interpreter)
        if m.scope_value == coop.Scope.Workgroup and ctx.num_subgroups > 1:
            # each subgroup holds its own copy of a Workgroup matrix; an insert by one subgroup
            # would not reach the others' copies, so refuse rather than diverge silently.
            raise fail(op, "coop.insert into a Workgroup-scope matrix is not supported by the "
                           "interpreter when the workgroup has more than one subgroup")
        lin, valid = _mapping(interpreter, m, op.index.data, op)
        vals = np.broadcast_to(to_dtype(obj, mat.dtype), lin.shape)
        if ctx.subgroup_size == lin.size:
            valid = valid & ctx.active()
        out = mat.copy()
        out.reshape(-1)[lin[valid]] = vals[valid]
        return (out,)

    # ---- element-wise arithmetic ----------------------------------------------------------

    @impl(coop.SNegateOp)
    def run_snegate(self, interpreter, op, args):
        return (wrap_to(-exact_ints(args[0], True), args[0].dtype),)

    @impl(coop.FNegateOp)
    def run_fnegate(self, interpreter, op, args):
        return (-args[0],)

    @impl(coop.IAddOp)
    def run_iadd(self, interpreter, op, args):
        return (_wrap_binary(args, lambda x, y: x + y),)

    @impl(coop.ISubOp)
    def run_isub(self, interpreter, op, args):
        return (_wrap_binary(args, lambda x, y: x - y),)

    @impl(coop.IMulOp)
    def run_imul(self, interpreter, op, args):
        return (_wrap_binary(args, lambda x, y: x * y, wide=True),)

    @impl(coop.FAddOp)
    def run_fadd(self, interpreter, op, args):
        return (_float_binary(args, np.add),)

    @impl(coop.FSubOp)
    def run_fsub(self, interpreter, op, args):
        return (_float_binary(args, np.subtract),)

    @impl(coop.FMulOp)
    def run_fmul(self, interpreter, op, args):
        return (_float_binary(args, np.multiply),)

    @impl(coop.FDivOp)
    def run_fdiv(self, interpreter, op, args):
        return (_float_binary(args, np.divide),)

    @impl(coop.SDivOp)
    def run_sdiv(self, interpreter, op, args):
        """OpSDiv: signed view, rounds toward 0; x/0 and MIN/-1 are undefined and raise."""
        x, y = (exact_ints(v, True, wide=True) for v in args)
        _check_divisor(op, y)
        lo, _ = int_range(args[0].dtype.itemsize * 8, True)
        bad = (x == lo) & (y == -1)
        if bad.any():
            r, c = (int(v[0]) for v in np.nonzero(bad))
            raise fail(op, f"signed division overflow at ({r}, {c}): {lo} / -1 (undefined)")
        q = np.abs(x) // np.abs(y)
        q = q * np.where((x < 0) != (y < 0), -1, 1)  # round toward zero
        return (wrap_to(q, args[0].dtype),)

    @impl(coop.UDivOp)
    def run_udiv(self, interpreter, op, args):
        """OpUDiv on the unsigned view; division by 0 raises."""
        x, y = (unsigned_view(v) for v in args)
        _check_divisor(op, y)
        return ((x // y).view(args[0].dtype),)

    @impl(coop.MatrixTimesScalarOp)
    def run_matrix_times_scalar(self, interpreter: Interpreter, op: coop.MatrixTimesScalarOp,
                                args: PythonValues):
        """OpMatrixTimesScalar: each component times the scalar, rounded to the component type."""
        mat, scalar = args
        m = op.matrix.type
        assert isinstance(m, coop.MatrixType)
        s = to_dtype(_per_element(op, scalar, m, interpreter), mat.dtype)
        with np.errstate(all="ignore"):
            return ((mat * s).astype(mat.dtype),)

    # ---- conversions -------------------------------------------------------------------

    @impl(coop.ConvertFToSOp)
    def run_convert_f_to_s(self, interpreter, op, args):
        return (_float_to_int(op, args[0], True),)

    @impl(coop.ConvertFToUOp)
    def run_convert_f_to_u(self, interpreter, op, args):
        return (_float_to_int(op, args[0], False),)

    @impl(coop.ConvertSToFOp)
    def run_convert_s_to_f(self, interpreter, op, args):
        return (_int_to_float(op, args[0], True),)

    @impl(coop.ConvertUToFOp)
    def run_convert_u_to_f(self, interpreter, op, args):
        return (_int_to_float(op, args[0], False),)

    @impl(coop.UConvertOp)
    def run_u_convert(self, interpreter, op, args):
        """OpUConvert: zero-extend or truncate the unsigned view."""
        dt = _result_dtype(op)
        return (unsigned_view(args[0]).astype(f"u{dt.itemsize}").view(dt),)

    @impl(coop.SConvertOp)
    def run_s_convert(self, interpreter, op, args):
        """OpSConvert: sign-extend or truncate the signed view."""
        dt = _result_dtype(op)
        return (signed_view(args[0]).astype(f"i{dt.itemsize}").view(dt),)

    @impl(coop.FConvertOp)
    def run_f_convert(self, interpreter, op, args):
        """OpFConvert: round to nearest even (exact widening to float64 first)."""
        return (round_from_f64(args[0].astype(np.float64), _result_dtype(op)),)

    @impl(coop.BitcastOp)
    def run_bitcast(self, interpreter, op, args):
        """OpBitcast: the same bits, reinterpreted."""
        return (args[0].view(_result_dtype(op)),)


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b in float64 for 2-D operands, or for each (R, K) @ (K, C) pair along a leading member
    axis (interpreter.lockstep): always one 2-D matmul per matrix, so the K-term sums round in
    the same order as for a lone matrix (numpy's stacked matmul sums in another order)."""
    if a.ndim == 2 and b.ndim == 2:
        return a @ b
    n = a.shape[0] if a.ndim == 3 else b.shape[0]
    out = np.empty((n, a.shape[-2], b.shape[-1]), np.float64)
    for i in range(n):
        out[i] = (a[i] if a.ndim == 3 else a) @ (b[i] if b.ndim == 3 else b)
    return out


def _result_dtype(op: Operation) -> np.dtype:
    t = op.results[0].type
    assert isinstance(t, coop.MatrixType)
    return numpy_dtype(t.element_type)


def _wrap_binary(args, f, wide: bool = False) -> np.ndarray:
    """Integer op on the exact values, result wrapped to the component width (two's complement;
    the same bits for signed and unsigned views)."""
    x, y = (exact_ints(v, True, wide=wide or v.dtype.itemsize == 8) for v in args)
    return wrap_to(f(x, y), args[0].dtype)


def _float_binary(args, f) -> np.ndarray:
    """A float op in the component type: numpy rounds each f16/bf16/f8 op once (it computes in
    float32, wide enough for + - * / to round correctly) and f32/f64 natively."""
    with np.errstate(all="ignore"):
        return f(args[0], args[1]).astype(args[0].dtype)


def _check_divisor(op: Operation, y: np.ndarray) -> None:
    zero = y == 0
    if zero.any():
        r, c = (int(v[0]) for v in np.nonzero(zero))
        raise fail(op, f"division by zero at element ({r}, {c}) (undefined behavior)")


def _float_to_int(op: Operation, x: np.ndarray, signed: bool) -> np.ndarray:
    """OpConvertFToS/U: round toward 0; NaN or out of range is undefined and raises."""
    dt = _result_dtype(op)
    bits = dt.itemsize * 8
    t = np.trunc(x.astype(np.float64))
    if signed:
        lo_ok, hi_ok = t >= -(2.0 ** (bits - 1)), t < 2.0 ** (bits - 1)
    else:
        lo_ok, hi_ok = t >= 0, t < 2.0 ** bits
    with np.errstate(invalid="ignore"):
        _check_finite_ints(op, t, lo_ok, hi_ok, x,
                           f"a {'signed' if signed else 'unsigned'} {bits}-bit integer")
    if signed:
        return t.astype(np.int64).astype(f"i{dt.itemsize}").view(dt)
    return t.astype(np.uint64).astype(f"u{dt.itemsize}").view(dt)


def _int_to_float(op: Operation, x: np.ndarray, signed: bool) -> np.ndarray:
    """OpConvertSToF/UToF: round to nearest even. Values of up to 53 bits convert exactly to
    float64 first, so one rounding; 64-bit values round to float64 first (documented)."""
    dt = _result_dtype(op)
    v = exact_ints(x, signed)
    f = np.array([float(i) for i in v.reshape(-1)], np.float64).reshape(v.shape) \
        if v.dtype == object else v.astype(np.float64)
    return round_from_f64(f, dt)
