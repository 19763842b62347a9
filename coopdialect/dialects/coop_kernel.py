"""The coop dialect's kernel attributes and kernel interface: one verifier for every backend.

A kernel is a `func.func` with memref and scalar arguments and `coop.workgroup_size =
array<i32: x, y, z>`; it may declare its grid as `coop.grid = affine_map<()[s0, ...] -> (x, y,
z)>` (README, "The kernel convention"). MLIR verifies a dialect's discardable attributes in the
dialect (`Dialect::verifyOperationAttribute`); here `verify_kernel_attributes` plays that part:
`diagnostics.verify_with_locations` calls it for every op, so parsing, every pass boundary, the
interpreter and both emitters see one rule set.

Limits (the device limits of the targets coopdialect emits for, which agree):

* workgroup size: each of x, y, z ≤ `MAX_WORKGROUP_SIZE` = (1024, 1024, 64) and x·y·z ≤
  `MAX_WORKGROUP_INVOCATIONS` = 1024 invocations — Vulkan `maxComputeWorkGroupSize` /
  `maxComputeWorkGroupInvocations` of the H200 (as its driver reports them) and CUDA's `maxThreadsDim` /
  `maxThreadsPerBlock` for sm_80…sm_90a (`.reqntid` beyond them is refused by ptxas).
* subgroup size: a power of two from 1 to 128 (Vulkan `minSubgroupSize`/`maxSubgroupSize` range;
  32 on NVIDIA GPUs), checked by `check_subgroup_size`.

`check_kernel_interface` is the kernel-interface rule both conversion passes apply before
lowering: a body of one block, no results, and arguments that are memrefs of scalars without a
memory space (SPIR-V storage buffers / PTX `.param .u64` pointers) or scalars of `SCALAR_TYPES`
(SPIR-V push constants / PTX `.param`s).

The declared grid (`coop.grid`): an affine map without dimensions whose symbols are the kernel's
integer scalar arguments (i32, i64, index) in argument order, and whose three results are the
workgroup counts along x, y, z. `declared_grid` gives it as host expressions
(`coopdialect.host_expr`), `dispatch_grid` evaluates it for given arguments. A kernel without it
is dispatched over the grid its caller gives.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
    Signedness,
)
from xdsl.ir import Attribute, Operation

from coopdialect.errors import CoopError
from coopdialect.host_expr import HostExpr, eval_host_expr, from_affine, to_text

WORKGROUP_SIZE_ATTR = "coop.workgroup_size"
GRID_ATTR = "coop.grid"
KERNEL_ATTRS = (WORKGROUP_SIZE_ATTR, GRID_ATTR)
SCALAR_TYPES = ("i32", "i64", "index", "f32", "f16")
"""The scalar kernel argument types (MLIR spelling), as the launch description names them."""
INTEGER_SCALARS = ("i32", "i64", "index")
MAX_WORKGROUP_SIZE = (1024, 1024, 64)
MAX_WORKGROUP_INVOCATIONS = 1024
SUBGROUP_SIZES = (1, 2, 4, 8, 16, 32, 64, 128)


def verify_kernel_attributes(op: Operation) -> None:
    """Check the `coop.*` attributes of `op`; CoopError on `op` if one is malformed.

    `coop.workgroup_size` must sit on a `func.func` and be `array<i32: x, y, z>` with
    1 ≤ x, y ≤ 1024, 1 ≤ z ≤ 64 and x·y·z ≤ 1024. `coop.grid` must sit on a `func.func` and be
    an affine map of no dimensions, one symbol per integer scalar argument and three results."""
    for name in KERNEL_ATTRS:
        if name in op.attributes and not isinstance(op, func.FuncOp):
            raise CoopError(op, f"'{name}' belongs on a func.func kernel")
    attr = op.attributes.get(WORKGROUP_SIZE_ATTR)
    if attr is not None:
        workgroup_size(op, attr)
    if GRID_ATTR in op.attributes:
        declared_grid(op)


def scalar_type_name(t: Attribute) -> str | None:
    """The SCALAR_TYPES name of a scalar kernel argument type (`i32`, `index`, ...), else None
    (signed/unsigned integers `si32`/`ui32` are not kernel arguments: MLIR's signless types are)."""
    if isinstance(t, IndexType):
        return "index"
    if isinstance(t, IntegerType) and t.signedness.data == Signedness.SIGNLESS \
            and t.width.data in (32, 64):
        return f"i{t.width.data}"
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float16Type):
        return "f16"
    return None


def grid_symbol_args(types: Sequence[Attribute]) -> list[int]:
    """The argument indices that `coop.grid`'s symbols s0, s1, ... stand for: the integer
    scalar arguments (i32, i64, index) in argument order."""
    return [i for i, t in enumerate(types) if scalar_type_name(t) in INTEGER_SCALARS]


def declared_grid(fn: func.FuncOp) -> list[HostExpr] | None:
    """The kernel's `coop.grid` as three host expressions (x, y, z) over its arguments, or None
    when it declares none. CoopError on `fn` when the attribute is not an affine map of no
    dimensions, one symbol per integer scalar argument and three results."""
    attr = fn.attributes.get(GRID_ATTR)
    if attr is None:
        return None
    symbols = grid_symbol_args(fn.function_type.inputs.data)
    spelled = "affine_map<()[s0, ...] -> (x, y, z)>"
    if not isinstance(attr, AffineMapAttr):
        raise CoopError(fn, f"'{GRID_ATTR}' must be {spelled}, got {attr}")
    m = attr.data
    if m.num_dims:
        raise CoopError(fn, f"'{GRID_ATTR}' has {m.num_dims} dimensions; the grid is a function "
                            f"of symbols only: {spelled}")
    if m.num_symbols != len(symbols):
        raise CoopError(fn, f"'{GRID_ATTR}' has {m.num_symbols} symbols, but the kernel has "
                            f"{len(symbols)} integer scalar arguments (i32, i64, index): one "
                            "symbol each, in argument order")
    if len(m.results) != 3:
        raise CoopError(fn, f"'{GRID_ATTR}' must have three results (x, y, z), got "
                            f"{len(m.results)}")
    try:
        return [from_affine(r, symbols) for r in m.results]
    except ValueError as e:
        raise CoopError(fn, f"'{GRID_ATTR}': {e}") from None


def scalar_value(t: Attribute, value: object) -> int | float:
    """`value` checked as the value of a scalar kernel argument of type `t`: an int (Python or
    numpy integer, not bool) for i32/i64/index, returned as the signed two's-complement value
    (an i32/i64 also takes the unsigned range: 0xFFFFFFFF is -1); a Python or numpy number for
    f32/f16, returned as a Python float (rounded to the type where it is used). Raises TypeError
    for a value of the wrong kind, ValueError for an integer out of the type's range."""
    name = scalar_type_name(t)
    if name is None:
        raise TypeError(f"{t} is not a scalar kernel argument type ({', '.join(SCALAR_TYPES)})")
    if isinstance(value, bool):
        raise TypeError(f"a {name} argument takes a number, got bool")
    if name in INTEGER_SCALARS:
        try:
            v = operator.index(value)
        except TypeError:
            raise TypeError(f"a {name} argument takes an integer, got {type(value).__name__} "
                            f"{value!r}") from None
        bits = 32 if name == "i32" else 64
        top = 1 << (bits - 1) if name == "index" else 1 << bits
        if not -(1 << (bits - 1)) <= v < top:
            raise ValueError(f"{v} does not fit {name} ({-(1 << (bits - 1))}..{top - 1})")
        return v - (1 << bits) if v >= 1 << (bits - 1) else v
    if not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"a {name} argument takes a number, got {type(value).__name__} {value!r}")
    return float(value)


def dispatch_grid(fn: func.FuncOp, args: Sequence[object]) -> tuple[int, int, int]:
    """The workgroups `fn` declares (`coop.grid`) for the argument values `args` (one per
    kernel argument, in order; scalars as `scalar_value` accepts them). Raises ValueError when
    `fn` declares no grid or a count is not positive, CoopError for a malformed `coop.grid`."""
    exprs = declared_grid(fn)
    name = f"@{fn.sym_name.data}"
    if exprs is None:
        raise ValueError(f"{name} declares no grid ({GRID_ATTR}): give the grid to dispatch")
    types = fn.function_type.inputs.data
    if len(args) != len(types):
        raise ValueError(f"{name} takes {len(types)} arguments, got {len(args)}")
    scalars = {i: scalar_value(types[i], args[i]) for i in grid_symbol_args(types)}
    grid = tuple(eval_host_expr(e, scalars) for e in exprs)
    if min(grid) < 1:
        names = {i: a.name_hint or f"arg{i}" for i, a in enumerate(fn.args)}
        given = ", ".join(f"{names[i]} = {v}" for i, v in scalars.items())
        raise ValueError(f"{name}'s declared grid ({', '.join(to_text(e, names) for e in exprs)}) "
                         f"is {grid} for {given}: every count must be positive")
    return grid  # type: ignore[return-value]


def workgroup_size(fn: func.FuncOp, attr: Attribute | None = None) -> tuple[int, int, int]:
    """The checked (x, y, z) of the kernel's `coop.workgroup_size`; CoopError on `fn` if it is
    missing or malformed (see `verify_kernel_attributes`)."""
    attr = attr if attr is not None else fn.attributes.get(WORKGROUP_SIZE_ATTR)
    if attr is None:
        raise CoopError(fn, f"a kernel needs `{WORKGROUP_SIZE_ATTR} = array<i32: x, y, z>`")
    if not (isinstance(attr, DenseArrayBase) and isinstance(attr.elt_type, IntegerType)
            and attr.elt_type.width.data == 32):
        raise CoopError(fn, f"'{WORKGROUP_SIZE_ATTR}' must be array<i32: x, y, z>, got {attr}")
    values = tuple(int(v) for v in attr.get_values())
    if len(values) != 3:
        raise CoopError(fn, f"'{WORKGROUP_SIZE_ATTR}' must have three entries (x, y, z), got "
                            f"{len(values)}")
    for axis, v, most in zip("xyz", values, MAX_WORKGROUP_SIZE):
        if not 1 <= v <= most:
            raise CoopError(fn, f"'{WORKGROUP_SIZE_ATTR}' {axis} = {v} is outside 1..{most} "
                                "(maxComputeWorkGroupSize)")
    x, y, z = values
    if x * y * z > MAX_WORKGROUP_INVOCATIONS:
        raise CoopError(fn, f"'{WORKGROUP_SIZE_ATTR}' {x}x{y}x{z} = {x * y * z} invocations exceeds "
                            f"{MAX_WORKGROUP_INVOCATIONS} (maxComputeWorkGroupInvocations)")
    return x, y, z


def check_subgroup_size(size: object) -> int:
    """`size` if it is a subgroup size a device can have (a power of two, 1..128); TypeError for
    a non-integer, ValueError otherwise."""
    try:
        if isinstance(size, bool):
            raise TypeError
        size = operator.index(size)  # an int, or an integer-like such as numpy.int64
    except TypeError:
        raise TypeError(f"subgroup_size must be an int, got {type(size).__name__}") from None
    if size not in SUBGROUP_SIZES:
        raise ValueError(f"subgroup_size must be a power of two from 1 to 128, got {size}")
    return size


def check_kernel_interface(fn: func.FuncOp) -> tuple[int, int, int]:
    """The rule both conversion passes apply to a kernel before lowering it; returns its
    workgroup size. CoopError on `fn`: a declaration, results, an argument that is neither a
    memref of integers/floats without a memory space nor a scalar of SCALAR_TYPES, a body of
    several blocks (unstructured control flow), or a missing/malformed `coop.workgroup_size`."""
    if fn.is_declaration:
        raise CoopError(fn, "a kernel declaration has no body to lower")
    if len(fn.body.blocks) != 1:
        raise CoopError(fn, f"a kernel body is one block of structured control flow (scf.for, "
                            f"scf.if), got {len(fn.body.blocks)} blocks")
    if fn.function_type.outputs.data:
        returns = [op for op in fn.walk() if isinstance(op, func.ReturnOp) and op.operands]
        raise CoopError(returns[0] if returns else fn, "kernels return nothing; write results to a memref")
    from coopdialect.dialects import coop

    for i, arg in enumerate(fn.args):
        t = arg.type
        if not isinstance(t, MemRefType):
            if scalar_type_name(t) is None:
                raise CoopError(fn, f"kernel argument {i} must be a memref or a scalar of "
                                    f"{', '.join(SCALAR_TYPES)}, got {t}")
            continue
        if not isinstance(t.memory_space, NoneAttr):
            raise CoopError(fn, f"kernel argument {i} must be a storage buffer (a memref without "
                                "memory space)")
        elem = t.element_type
        if not (coop.is_integer(elem) or coop.is_float(elem)):
            raise CoopError(fn, f"kernel argument {i} must be a memref of scalars, got element "
                                f"type {elem}")
    return workgroup_size(fn)
