"""The public runner: interpret a kernel `func.func` over a grid of workgroups, on numpy buffers.

```python
from coopdialect.interpreter import run_kernel, interpret_file
run_kernel(module, "gemm_f16", [A, B, C], grid=(2, 2, 1))   # C is updated in place
```

Execution model (`coopdialect.interpreter.lockstep`): the subgroups of all workgroups of the
grid are interpreted together, in lock-step and without threads: each op runs once for the
subgroups whose operands agree (a Workgroup-scope matrix op once per workgroup), or once as numpy
over a leading subgroup axis, or once per subgroup; a `gpu.barrier` is a point that all
subgroups of a workgroup reach together. Per-invocation values are lane vectors (see
`coopdialect.interpreter.common`); control flow must be uniform across the invocations of a
subgroup and may differ between subgroups.

Data races: since the interpreter's order is only one of the orders a GPU may pick, every memory
access is checked by `coopdialect.interpreter.races` (model and exceptions in its docstring). An
element written by one subgroup and read or written by another of the same workgroup with no
`gpu.barrier` between, accessed by two workgroups with one a write, or touched by a
Workgroup-scope matrix load/store and by another access of the same barrier interval raises
`InterpreterError` ("data race: ...", naming the op, the buffer and the element). A result
therefore never depends on the order the interpreter picked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.interpreter import Interpreter
from xdsl.interpreters.builtin import BuiltinFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import RawPtr, TypedPtr
from xdsl.ir import Operation
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import ParseError

from coopdialect.dialects.coop_kernel import dispatch_grid, scalar_value
from coopdialect.interpreter.common import (
    InterpreterError,
    SubgroupContext,
    Workgroup,
    numpy_dtype,
)
from coopdialect.interpreter.coop_async import finish_workgroup
from coopdialect.interpreter.lockstep import MAX_MEMBERS, LockstepRunner
from coopdialect.interpreter.races import RaceTracker, stored_arguments

WORKGROUP_SIZE_ATTR = "coop.workgroup_size"


def register_implementations(interpreter: Interpreter) -> None:
    """Register every impl coopdialect kernels need: xDSL's func/builtin/scf/arith/memref, with
    coopdialect's arith, scf and memref overrides, and the coop, gpu and math impls."""
    from xdsl.interpreters.arith import ArithFunctions

    from coopdialect.interpreter.arith import CoopArithFunctions
    from coopdialect.interpreter.coop import CoopFunctions
    from coopdialect.interpreter.gpu import GpuFunctions
    from coopdialect.interpreter.math import MathFunctions
    from coopdialect.interpreter.memref import CoopMemRefFunctions
    from coopdialect.interpreter.scf import CoopScfFunctions
    from coopdialect.interpreter.sparse_mma import SparseMmaFunctions
    from coopdialect.interpreter.coop_nv2 import CoopNV2Functions
    from coopdialect.interpreter.coop_async import CoopAsyncFunctions
    from coopdialect.interpreter.tensor_addr import TensorAddrFunctions

    for impls in (FuncFunctions(), BuiltinFunctions(), ArithFunctions(), CoopScfFunctions(),
                  CoopMemRefFunctions(), CoopFunctions(), GpuFunctions(),
                  SparseMmaFunctions(), TensorAddrFunctions(), CoopNV2Functions(),
                  CoopAsyncFunctions(), MathFunctions()):
        interpreter.register_implementations(impls)
    interpreter.register_implementations(CoopArithFunctions(), override=True)


class _OpTracker(Interpreter.Listener):
    """Keeps the stack of ops being interpreted, so an error can name the innermost one."""

    def __init__(self) -> None:
        self.stack: list[Operation] = []

    def will_interpret_op(self, op: Operation, args: Any) -> None:
        self.stack.append(op)

    def did_interpret_op(self, op: Operation, results: Any) -> None:
        self.stack.pop()


def _new_interpreter(module: ModuleOp) -> tuple[Interpreter, _OpTracker]:
    tracker = _OpTracker()
    interpreter = Interpreter(module, index_bitwidth=64, listeners=(tracker,))
    register_implementations(interpreter)
    return interpreter, tracker


def _workgroup_size(kernel: func.FuncOp) -> tuple[int, int, int]:
    attr = kernel.attributes.get(WORKGROUP_SIZE_ATTR)
    if attr is None:
        raise InterpreterError(kernel, f"the kernel has no '{WORKGROUP_SIZE_ATTR}' attribute "
                                       "(array<i32: x, y, z>)")
    values = attr.get_values() if isinstance(attr, DenseArrayBase) else None
    if values is None or len(values) != 3 or any(int(v) <= 0 for v in values):
        raise InterpreterError(kernel, f"'{WORKGROUP_SIZE_ATTR}' must be array<i32: x, y, z> "
                                       f"with positive entries, got {attr}")
    x, y, z = (int(v) for v in values)
    return (x, y, z)


def _wrap_arguments(kernel: func.FuncOp, buffers: Sequence[Any]):
    """Kernel arguments from numpy arrays (memrefs, zero-copy) and Python numbers (scalars).

    Returns (args, copy_backs) where copy_backs lists (caller array, contiguous copy) pairs for
    arrays that could not be wrapped without a copy."""
    inputs = kernel.function_type.inputs.data
    if len(buffers) != len(inputs):
        raise InterpreterError(kernel, f"the kernel takes {len(inputs)} arguments, "
                                       f"{len(buffers)} buffers were given")
    args: list[Any] = []
    copy_backs: list[tuple[np.ndarray, np.ndarray]] = []
    for i, (t, buf) in enumerate(zip(inputs, buffers)):
        if isinstance(t, MemRefType):
            args.append(_wrap_memref(kernel, i, t, buf, copy_backs))
            continue
        try:
            value = scalar_value(t, buf)
        except (TypeError, ValueError) as e:
            raise InterpreterError(kernel, f"argument {i} ({t}): {e}") from None
        if isinstance(t, IntegerType | IndexType):
            args.append(value)
        else:  # rounded once to the argument's float type
            args.append(np.asarray(value, dtype=np.float64).astype(numpy_dtype(t))[()])
    return args, copy_backs


def _wrap_memref(kernel: func.FuncOp, i: int, t: MemRefType, buf: Any,
                 copy_backs: list[tuple[np.ndarray, np.ndarray]]) -> ShapedArray:
    if not isinstance(buf, np.ndarray):
        raise InterpreterError(kernel, f"argument {i} ({t}) needs a numpy array, got "
                                       f"{type(buf).__name__}")
    try:
        dt = numpy_dtype(t.element_type)
    except ValueError as e:
        raise InterpreterError(kernel, f"argument {i}: {e}") from None
    if buf.dtype != dt:
        raise InterpreterError(kernel, f"argument {i} ({t}) needs dtype {dt}, got {buf.dtype}")
    shape = t.get_shape()
    # a dynamic dimension is negative (xDSL's DYNAMIC_INDEX; -1 in older IR builders)
    if len(shape) != buf.ndim or any(d >= 0 and d != n for d, n in zip(shape, buf.shape)):
        raise InterpreterError(kernel, f"argument {i} ({t}) needs shape "
                                       f"{tuple('?' if d < 0 else d for d in shape)}, got "
                                       f"{buf.shape}")
    if buf.flags.c_contiguous and buf.flags.writeable:
        data = buf
    else:
        # zero-copy needs a writable row-major buffer; otherwise copy (and copy back if we can)
        data = np.ascontiguousarray(buf).copy()
        if buf.flags.writeable:
            copy_backs.append((buf, data))
    raw = RawPtr(memoryview(data.reshape(-1).view(np.uint8)))  # type: ignore[arg-type]
    return ShapedArray(TypedPtr(raw, xtype=t.element_type), list(buf.shape))


def run_kernel(module: ModuleOp, kernel: str, buffers: Sequence[Any],
               grid: tuple[int, int, int] | None = None, *, subgroup_size: int = 32) -> None:
    """Run `func.func @kernel` of `module` over `grid` workgroups, in place on `buffers`.

    * `buffers`: one per kernel argument, in order. A memref argument takes a numpy array of the
      memref's shape (`?` dims accept any size) and exact dtype (f16 float16, bf16
      ml_dtypes.bfloat16, f32 float32, iN/siN intN, uiN uintN, ...); stores land in the caller's
      array (zero-copy for C-contiguous writable arrays; others are copied in and, if writable,
      copied back at the end; stores into a read-only array are dropped). A scalar argument
      (i32, i64, index, f32, f16) takes a Python or numpy number: an integer within the type's
      range for the integer types (`coop_kernel.scalar_value`), any number for the float
      types, rounded once to the type.
    * `grid`: workgroups along (x, y, z); None: the grid the kernel declares (`coop.grid`,
      evaluated with its scalar arguments). The workgroup size is the kernel's
      `coop.workgroup_size = array<i32: x, y, z>` (invocations); a workgroup has
      ceil(x*y*z / subgroup_size) subgroups.
    * `subgroup_size`: invocations per subgroup (32 on NVIDIA GPUs).

    Raises InterpreterError (one line: `file:line:col: error: 'op' op message (workgroup (x, y,
    z), subgroup s)`) for bad arguments, a missing workgroup size or grid, and every run-time error:
    out-of-bounds accesses, forbidden strides, undefined conversions, divergent control flow, ...
    """
    found = SymbolTable.lookup_symbol(module, kernel)
    if not isinstance(found, func.FuncOp):
        raise InterpreterError(None, f"no func.func @{kernel} in the module")
    block_dim = _workgroup_size(found)
    if subgroup_size <= 0:
        raise InterpreterError(found, f"subgroup_size must be positive, got {subgroup_size}")
    args, copy_backs = _wrap_arguments(found, buffers)
    if grid is None:
        try:
            grid = dispatch_grid(found, buffers)
        except ValueError as e:
            raise InterpreterError(found, str(e)) from None
    if len(grid) != 3 or any(int(g) <= 0 for g in grid):
        raise InterpreterError(found, f"grid must be three positive counts, got {grid}")
    grid = (int(grid[0]), int(grid[1]), int(grid[2]))
    invocations = block_dim[0] * block_dim[1] * block_dim[2]
    nsub = -(-invocations // subgroup_size)
    races = _race_tracker(found, args)
    blocks = [(x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0])]
    races.blocks, races.nsub = blocks, nsub
    interpreter, tracker = _new_interpreter(module)
    per_chunk = max(1, MAX_MEMBERS // nsub)  # whole workgroups, in x, then y, then z order
    for first in range(0, len(blocks), per_chunk):
        members = []
        for n in range(first, min(first + per_chunk, len(blocks))):
            wg = Workgroup(races=races, number=n)
            members += [SubgroupContext(block_id=blocks[n], grid=grid, block_dim=block_dim,
                                        subgroup_id=s, subgroup_size=subgroup_size,
                                        workgroup=wg) for s in range(nsub)]
        LockstepRunner(interpreter, tracker.stack, members).run(found, args)
        for ctx in members[::nsub]:
            try:
                finish_workgroup(ctx.workgroup, found)  # no asynchronous copy left pending
            except InterpreterError as e:
                raise InterpreterError(e.op, f"{e.message} (workgroup {ctx.block_id})") from None
        for ctx in members[::nsub]:  # workgroup memory ends with its workgroup
            for v in ctx.workgroup.shared.values():
                if isinstance(v, ShapedArray):
                    races.unregister(v)
    for caller, data in copy_backs:
        caller[...] = data


def _race_tracker(kernel: func.FuncOp, args: list[Any]) -> RaceTracker:
    """A RaceTracker with the kernel's memref arguments registered (named by their SSA names)."""
    races = RaceTracker()
    written = stored_arguments(kernel)
    for i, (a, v) in enumerate(zip(kernel.body.block.args, args)):
        if isinstance(v, ShapedArray):
            name = f"%{a.name_hint} (argument {i})" if a.name_hint else f"argument {i}"
            races.register(v, name, written is None or i in written)
    return races


def interpret_file(path: str, kernel: str, buffers: Sequence[Any],
                   grid: tuple[int, int, int] | None = None,
                   *, subgroup_size: int = 32) -> ModuleOp:
    """Parse (with op locations) and verify the IR file `path`, then `run_kernel` on it.

    Returns the parsed module. Parse and verifier errors are raised as InterpreterError too, with
    the `file:line:col` of the problem."""
    from coopdialect.context import make_context
    from coopdialect.errors import CoopError
    from coopdialect.diagnostics import LocatingParser, verify_with_locations

    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise InterpreterError(None, f"cannot read: {e.strerror or e}", where=path) from None
    try:
        module = LocatingParser(make_context(), text, path).parse_module()
        verify_with_locations(module)
    except ParseError as e:
        loc = e.span.get_location()
        msg = e.msg.strip().splitlines()[0] if e.msg.strip() else "parse error"
        raise InterpreterError(None, msg, where=f"{loc.file}:{loc.line}:{loc.col}") from None
    except CoopError as e:
        raise InterpreterError(e.op, e.message) from None
    run_kernel(module, kernel, buffers, grid, subgroup_size=subgroup_size)
    return module
