"""Fast paths of the lock-step runner (`coopdialect.interpreter.lockstep`): one numpy call over
the member axis, for the ops that dominate GEMM-like kernels, when all members are present.

Each returns the op's results, or None to have the op replayed member by member: it declines
before changing any state (memory, race records) whenever anything is unusual (an error the impl
would raise, a race, an element written twice, values it cannot stack), so the replay produces
the exact per-member values and errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.ir import Operation

from coopdialect.dialects import coop
from coopdialect.interpreter.common import set_subgroup_context
from coopdialect.interpreter.math import BINARY_FLOAT, UNARY_FLOAT
from coopdialect.interpreter.coop import memref_view
from coopdialect.interpreter.lockstep_values import Varying
from coopdialect.interpreter.races import has_repeats


class LockstepRunner(Protocol):
    """What a fast path reads of the runner that calls it (`lockstep.LockstepRunner`, which
    imports this module)."""

    interpreter: Any  # the xDSL Interpreter that runs the impls
    members: list  # the subgroup contexts run in lock-step
    count: int  # len(members)
    nsub: int  # subgroups in a workgroup


def try_fast(fast, runner: LockstepRunner, op: Operation, args: list[Any]) -> tuple | None:
    """A fast path's results, or None where it declines or cannot stack the members' values
    (say, a value that is a lane vector in some members and a scalar in others)."""
    try:
        return fast(runner, op, args)
    except (ValueError, TypeError):
        return None


def _run_stacked(runner: LockstepRunner, op: Operation, args: list[Any]) -> tuple | None:
    """Run the impl once on stacked operands; None if it raises (the replay reports it)."""
    set_subgroup_context(runner.interpreter, runner.members[0])
    try:
        return tuple(runner.interpreter.run_op(op, tuple(args)))
    except Exception:  # noqa: BLE001 - replayed member by member for the exact error
        return None


def _fast_arith(runner: LockstepRunner, op: Operation, args: list[Any]) -> tuple | None:
    """arith ops are element-wise on scalars and lane vectors: run them on the members'
    values laid end to end (lane vectors of subgroup_size lanes each)."""
    n = runner.count
    lanes = runner.members[0].subgroup_size
    has_lanes = False
    for a in args:
        if isinstance(a, Varying):
            if a.kind == "array":
                if a.stacked().ndim != 2:
                    return None
                has_lanes = True
            elif a.kind == "object":
                return None
        elif isinstance(a, np.ndarray):
            if a.ndim != 1:
                return None
            has_lanes = True
        elif not isinstance(a, int | float | bool | np.generic):
            return None
    flat = []
    for a in args:
        if isinstance(a, Varying):
            s = a.stacked()
            flat.append(s.reshape(-1) if s.ndim == 2 else
                        (np.repeat(s, lanes) if has_lanes else s))
        elif isinstance(a, np.ndarray):
            flat.append(np.tile(a, n))
        else:
            flat.append(a)
    out = _run_stacked(runner, op, flat)
    if out is None:
        return None
    results = []
    for r, res in zip(out, op.results):
        want = n * lanes if has_lanes else n
        if not isinstance(r, np.ndarray) or r.shape != (want,):
            return None
        if has_lanes:
            results.append(Varying(stack=r.reshape(n, lanes), kind="array"))
        else:
            t = res.type
            kind = ("bool" if isinstance(t, IntegerType) and t.width.data == 1 else
                    "int" if isinstance(t, IntegerType | IndexType) else "scalar")
            results.append(Varying(stack=r, kind=kind))
    return tuple(results)


def _fast_matrix(runner: LockstepRunner, op: Operation, args: list[Any]) -> tuple | None:
    """Element-wise and mul_add matrix ops are numpy expressions that broadcast over a
    leading member axis (matmul multiplies each member's matrices, as the 2-D call does)."""
    stacked = []
    for a in args:
        if isinstance(a, Varying):
            if a.kind != "array":
                return None
            s = a.stacked()
            if s.ndim != 3:
                return None
            stacked.append(s)
        elif isinstance(a, np.ndarray) and a.ndim == 2:
            stacked.append(a)
        else:
            return None
    out = _run_stacked(runner, op, stacked)
    if out is None:
        return None
    results = []
    for r, res in zip(out, op.results):
        t = res.type
        assert isinstance(t, coop.MatrixType)
        if not isinstance(r, np.ndarray) or r.shape != (runner.count, t.rows, t.columns):
            return None
        results.append(Varying(stack=r, kind="array"))
    return tuple(results)


def _tile_indices(op: Operation, args: list[Any], m: coop.MatrixType, offset: Any,
                  stride: Any, size: int, store: bool) -> np.ndarray | None:
    """Element indices (members, R, C) of a Subgroup-scope RowMajor/ColumnMajor tile, or None
    when anything would raise (the replay reports it)."""
    if op.layout.data not in (coop.Layout.RowMajor, coop.Layout.ColumnMajor):
        return None
    if isinstance(stride, Varying) or not isinstance(stride, int) or stride < (1 if store else 0):
        return None
    if isinstance(offset, Varying):
        if offset.kind != "int":
            return None
        offs = offset.stacked()
    elif isinstance(offset, int):
        offs = np.array([offset], np.int64)
    else:
        return None
    r = np.arange(m.rows, dtype=np.int64)[:, None]
    c = np.arange(m.columns, dtype=np.int64)[None, :]
    rel = r * stride + c if op.layout.data == coop.Layout.RowMajor else c * stride + r
    lo, hi = int(offs.min()), int(offs.max())
    if lo + int(rel.min()) < 0 or hi + int(rel.max()) >= size:
        return None
    return offs[:, None, None] + rel


def _subgroup_scope(runner: LockstepRunner, m: Any) -> bool:
    return isinstance(m, coop.MatrixType) and (m.scope_value == coop.Scope.Subgroup or
                                               runner.nsub == 1)


def _fast_load(runner: LockstepRunner, op: coop.LoadOp, args: list[Any]) -> tuple | None:
    """coop.load of a Subgroup-scope tile from per-member offsets: one gather."""
    buf, offset, stride = args
    m = op.result.type
    if not isinstance(buf, ShapedArray) or not _subgroup_scope(runner, m):
        return None
    assert isinstance(op.pointer.type, MemRefType)
    flat = memref_view(op, buf, op.pointer.type)
    idx = _tile_indices(op, args, m, offset, stride, flat.size, False)
    if idx is None:
        return None
    races = runner.members[0].workgroup.races
    idx = np.broadcast_to(idx, (runner.count, m.rows, m.columns))
    if races is not None and not races.try_access_members(buf, idx, runner.members,
                                                          write=False):
        return None
    return (Varying(stack=flat[idx], kind="array"),)


def _fast_store(runner: LockstepRunner, op: coop.StoreOp, args: list[Any]) -> tuple | None:
    """coop.store of Subgroup-scope tiles to per-member offsets: one scatter (no element is
    written twice, else the replay decides)."""
    value, buf, offset, stride = args
    m = op.object.type
    if not isinstance(buf, ShapedArray) or not _subgroup_scope(runner, m):
        return None
    assert isinstance(op.pointer.type, MemRefType)
    flat = memref_view(op, buf, op.pointer.type)
    idx = _tile_indices(op, args, m, offset, stride, flat.size, True)
    if idx is None:
        return None
    shape = (runner.count, m.rows, m.columns)
    if isinstance(value, Varying):
        if value.kind != "array" or value.stacked().shape != shape:
            return None
        vals = value.stacked()
    elif isinstance(value, np.ndarray) and value.shape == shape[1:]:
        vals = np.broadcast_to(value, shape)
    else:
        return None
    if vals.dtype != flat.dtype:
        return None
    idx = np.broadcast_to(idx, shape)
    if has_repeats(idx, flat.size):
        return None  # which member's value lands is the replay's business
    races = runner.members[0].workgroup.races
    if races is not None and not races.try_access_members(buf, idx, runner.members, write=True):
        return None
    flat[idx] = vals
    return ()


FAST: dict[type, Callable[[LockstepRunner, Any, list[Any]], tuple | None]] = {
    coop.LoadOp: _fast_load,
    coop.StoreOp: _fast_store,
}
for _t in (coop.MulAddOp, coop.SNegateOp, coop.FNegateOp, coop.IAddOp, coop.ISubOp, coop.IMulOp,
           coop.FAddOp, coop.FSubOp, coop.FMulOp, coop.FDivOp, coop.SDivOp, coop.UDivOp,
           coop.ConvertFToSOp, coop.ConvertFToUOp, coop.ConvertSToFOp, coop.ConvertUToFOp,
           coop.UConvertOp, coop.SConvertOp, coop.FConvertOp, coop.BitcastOp):
    FAST[_t] = _fast_matrix
for _t in (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.AndIOp, arith.OrIOp, arith.XOrIOp,
           arith.MinSIOp, arith.MaxSIOp, arith.MinUIOp, arith.MaxUIOp, arith.DivSIOp,
           arith.DivUIOp, arith.RemSIOp, arith.RemUIOp, arith.ShLIOp, arith.ShRSIOp,
           arith.ShRUIOp, arith.CmpiOp, arith.SelectOp, arith.IndexCastOp, arith.ExtSIOp,
           arith.ExtUIOp, arith.TruncIOp, arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp,
           arith.MinimumfOp, arith.MaximumfOp, arith.NegfOp, arith.CmpfOp, arith.ExtFOp,
           arith.TruncFOp, arith.SIToFPOp, arith.UIToFPOp, arith.FPToSIOp, arith.FPToUIOp,
           arith.MinnumfOp, arith.MaxnumfOp, *UNARY_FLOAT, *BINARY_FLOAT, math.FmaOp):
    FAST[_t] = _fast_arith
