"""Shared pieces of the coopdialect interpreter: errors, numpy dtypes, integer helpers, lanes.

Value model (every impl module follows it):

* `!coop.matrix<RxCxT, ...>`: a numpy array of shape (R, C) and dtype `numpy_dtype(T)`.
* scalars: Python `int` for integers and `index` (signed two's-complement value, xDSL's own
  convention), numpy scalars of the exact type for f16/bf16/f32/f8 (so each arith op rounds to
  its type), Python/numpy float64 for f64, Python `bool` for i1.
* lane vectors: a value that differs between the invocations of one subgroup (`gpu.thread_id`,
  `gpu.lane_id`, `coop.extract`, and arith derived from them) is a 1-D numpy array of shape
  (subgroup_size,), entry l belonging to lane l. Integer lane vectors are int64 holding the signed
  two's-complement value; float lane vectors carry the float dtype of their type.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects import builtin
from xdsl.dialects.builtin import IndexType, IntegerType, Signedness
from xdsl.interpreter import Interpreter, InterpreterFunctions
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from coopdialect.errors import CoopError
from coopdialect.interpreter.async_copies import AsyncCopyState

# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


class InterpreterError(CoopError, InterpretationError):
    """A run-time error of an interpreted kernel, as one line.

    `str(e)` is `file:line:col: error: 'op.name' op message` (`<unknown>` when the op carries no
    FileLineColLoc). It is also an xDSL `InterpretationError`, so code written against xDSL's
    interpreter catches it too. `e.op` is the failing op (or None), `e.message` the bare message.
    """


def fail(op: Operation | None, message: str) -> InterpreterError:
    """The error to raise for `op` (callers write `raise fail(op, ...)`)."""
    return InterpreterError(op, message)


# --------------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------------

_FLOATS: dict[type, Any] = {
    builtin.Float16Type: np.dtype(np.float16),
    builtin.BFloat16Type: np.dtype(ml_dtypes.bfloat16),
    builtin.Float32Type: np.dtype(np.float32),
    builtin.Float64Type: np.dtype(np.float64),
    builtin.Float8E4M3FNType: np.dtype(ml_dtypes.float8_e4m3fn),
    builtin.Float8E5M2Type: np.dtype(ml_dtypes.float8_e5m2),
    builtin.Float8E4M3FNUZType: np.dtype(ml_dtypes.float8_e4m3fnuz),
    builtin.Float8E5M2FNUZType: np.dtype(ml_dtypes.float8_e5m2fnuz),
    builtin.Float8E4M3B11FNUZType: np.dtype(ml_dtypes.float8_e4m3b11fnuz),
}


def numpy_dtype(t: Attribute) -> np.dtype:
    """numpy dtype of a scalar type: iN/siN -> intN, uiN -> uintN, i1 -> bool, index -> int64,
    f16 -> float16, bf16 -> ml_dtypes.bfloat16, f32, f64, f8 types -> ml_dtypes' float8 types.
    Raises ValueError for a type the interpreter cannot hold."""
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, IntegerType):
        w = t.width.data
        if w == 1:
            return np.dtype(np.bool_)
        if w not in (8, 16, 32, 64):
            raise ValueError(f"integer width {w} has no numpy dtype")
        kind = "u" if t.signedness.data == Signedness.UNSIGNED else "i"
        return np.dtype(f"{kind}{w // 8}")
    if (dt := _FLOATS.get(type(t))) is not None:
        return dt
    raise ValueError(f"type {t} has no numpy dtype in the interpreter")


def is_float_dtype(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt in _FLOATS.values()


def int_width(t: Attribute, index_bitwidth: int = 64) -> int:
    if isinstance(t, IndexType):
        return index_bitwidth
    assert isinstance(t, IntegerType)
    return t.width.data


def signed_view(x: np.ndarray) -> np.ndarray:
    """The same bits as signed intN."""
    return x.view(np.dtype(f"i{x.dtype.itemsize}"))


def unsigned_view(x: np.ndarray) -> np.ndarray:
    """The same bits as unsigned uintN."""
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def exact_ints(x: np.ndarray, signed: bool, wide: bool = False) -> np.ndarray:
    """The integers the bits of `x` denote (two's complement if `signed`), as int64 or, when
    `wide` or when they may not fit int64 (unsigned 64-bit), as an object array of Python ints."""
    v = signed_view(x) if signed else unsigned_view(x)
    if wide or (not signed and x.dtype.itemsize == 8):
        return v.astype(object)
    return v.astype(np.int64)


def wrap_to(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Low-order bits of exact integers `x` (int64 or object) as an array of integer dtype `dt`."""
    bits = dt.itemsize * 8
    if x.dtype == object:
        u = (x % (1 << 64)).astype(np.uint64) if x.size else np.zeros(x.shape, np.uint64)
    else:
        u = x.astype(np.int64).view(np.uint64)  # two's complement: a modular reinterpretation
    return u.astype(np.dtype(f"u{bits // 8}")).view(dt)


def int_range(bits: int, signed: bool) -> tuple[int, int]:
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def round_from_f64(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """float64 values rounded once (to nearest, ties to even) to float dtype `dt`.

    numpy converts float64 to float16/float32 directly. ml_dtypes converts float64 to bfloat16
    and float8 through float32, which double-rounds; so for those the value is first rounded to
    float32 with round-to-odd (truncate, then set the last bit when inexact), after which the
    float32 -> dt rounding is the correct single rounding (float32 keeps >= 2 more bits).
    """
    x = np.asarray(x, dtype=np.float64)
    if dt in (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)):
        with np.errstate(all="ignore"):
            return x.astype(dt)
    with np.errstate(all="ignore"):
        f = x.astype(np.float32)
        back = f.astype(np.float64)
        finite = np.isfinite(x)
        # truncate toward zero: step back where RNE rounded away from zero
        away = finite & (np.abs(back) > np.abs(x))
        f = np.where(away, np.nextafter(f, np.float32(0)), f)
        inexact = finite & (f.astype(np.float64) != x)
        bits = f.view(np.uint32) | inexact.astype(np.uint32)
        return bits.view(np.float32).astype(dt)


def to_signed_int(v: int, bits: int) -> int:
    """The two's-complement value of the low `bits` bits of Python int `v`."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


# --------------------------------------------------------------------------------------------
# The invocations one interpreter stands for
# --------------------------------------------------------------------------------------------


@dataclass
class Workgroup:
    """State shared by the subgroups of one workgroup (workgroup-memory allocations, pending
    asynchronous copies).

    One object per workgroup of the grid; all of them live for the whole `run_kernel`, since
    the workgroups run in lock-step (`coopdialect.interpreter.lockstep`)."""

    shared: dict[Operation, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # race detection (coopdialect.interpreter.races): the run's RaceTracker
    races: Any = None
    number: int = 0  # x + y*X + z*X*Y: the position of block_id in the grid
    # coop.async_copy / commit / wait (coopdialect.interpreter.async_copies)
    async_copies: AsyncCopyState = field(default_factory=AsyncCopyState)


@dataclass
class SubgroupContext:
    """Which subgroup an interpreter is running: ids and sizes, in invocations.

    Invocation `l` of subgroup `s` has LocalInvocationIndex `s * subgroup_size + l`; lanes whose
    index is >= the workgroup's invocation count are inactive (a partial last subgroup).
    """

    block_id: tuple[int, int, int] = (0, 0, 0)
    grid: tuple[int, int, int] = (1, 1, 1)
    block_dim: tuple[int, int, int] = (32, 1, 1)
    subgroup_id: int = 0
    subgroup_size: int = 32
    workgroup: Workgroup = field(default_factory=Workgroup)
    epoch: int = 0  # gpu.barrier calls this subgroup has passed
    # Set by the lock-step runner for the op being executed: `batch` lists the members that
    # execute it together, with identical operands, in order (None: this member alone), and
    # `step` numbers the op execution (the same for every member of one execution).
    batch: list[SubgroupContext] | None = None
    step: int = 0

    @property
    def workgroup_number(self) -> int:
        return self.workgroup.number

    @property
    def workgroup_invocations(self) -> int:
        x, y, z = self.block_dim
        return x * y * z

    @property
    def num_subgroups(self) -> int:
        return -(-self.workgroup_invocations // self.subgroup_size)

    def local_index(self) -> np.ndarray:
        """LocalInvocationIndex of each lane, shape (subgroup_size,)."""
        return self.subgroup_id * self.subgroup_size + np.arange(self.subgroup_size, dtype=np.int64)

    def active(self) -> np.ndarray:
        """Mask of the lanes that are real invocations."""
        return self.local_index() < self.workgroup_invocations

    def invocations_in_scope(self, scope: str) -> int:
        """S of the component mapping: subgroup size, or workgroup invocation count."""
        return self.subgroup_size if scope == "Subgroup" else self.workgroup_invocations


class _ContextKey(InterpreterFunctions):
    """Key under which the SubgroupContext lives in `Interpreter.get_data`."""


def subgroup_context(interpreter: Interpreter) -> SubgroupContext:
    """The interpreter's SubgroupContext (a 32-wide single subgroup when none was set)."""
    return interpreter.get_data(_ContextKey, "subgroup", SubgroupContext)


def set_subgroup_context(interpreter: Interpreter, ctx: SubgroupContext) -> None:
    interpreter.set_data(_ContextKey, "subgroup", ctx)


def is_lanes(v: Any) -> bool:
    """Whether `v` is a lane vector (1-D ndarray)."""
    return isinstance(v, np.ndarray) and v.ndim == 1


def uniform(op: Operation, v: Any, what: str) -> Any:
    """`v` as one value: a lane vector whose lanes all agree collapses; divergence is an error."""
    if not is_lanes(v):
        return v
    if v.size and np.all(v == v[0]):
        x = v[0]
        return int(x) if v.dtype.kind in "iu" else (bool(x) if v.dtype.kind == "b" else x)
    raise fail(op, f"{what} differs between the invocations of a subgroup (divergent control flow "
                   "or addressing is not supported here)")
