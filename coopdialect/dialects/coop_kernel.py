"""The coop dialect's kernel attributes and kernel interface: one verifier for every backend.

A kernel is a `func.func` with memref arguments and `coop.workgroup_size = array<i32: x, y, z>`
(README, "The kernel convention"). MLIR verifies a dialect's discardable attributes in the
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
lowering (SPIR-V storage buffers / PTX `.param .u64` pointers): a body of one block, no results,
and memref arguments of scalars without a memory space.
"""

from __future__ import annotations

import operator

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerType, MemRefType, NoneAttr
from xdsl.ir import Attribute, Operation

from coopdialect.errors import CoopError

WORKGROUP_SIZE_ATTR = "coop.workgroup_size"
MAX_WORKGROUP_SIZE = (1024, 1024, 64)
MAX_WORKGROUP_INVOCATIONS = 1024
SUBGROUP_SIZES = (1, 2, 4, 8, 16, 32, 64, 128)


def verify_kernel_attributes(op: Operation) -> None:
    """Check the `coop.*` attributes of `op`; CoopError on `op` if one is malformed.

    `coop.workgroup_size` must sit on a `func.func` and be `array<i32: x, y, z>` with
    1 ≤ x, y ≤ 1024, 1 ≤ z ≤ 64 and x·y·z ≤ 1024."""
    attr = op.attributes.get(WORKGROUP_SIZE_ATTR)
    if attr is None:
        return
    if not isinstance(op, func.FuncOp):
        raise CoopError(op, f"'{WORKGROUP_SIZE_ATTR}' belongs on a func.func kernel")
    workgroup_size(op, attr)


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
    workgroup size. CoopError on `fn`: a declaration, results, an argument that is not a memref of
    integers/floats without a memory space, a body of several blocks (unstructured control flow),
    or a missing/malformed `coop.workgroup_size`."""
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
            raise CoopError(fn, f"kernel argument {i} must be a memref, got {t}")
        if not isinstance(t.memory_space, NoneAttr):
            raise CoopError(fn, f"kernel argument {i} must be a storage buffer (a memref without "
                                "memory space)")
        elem = t.element_type
        if not (coop.is_integer(elem) or coop.is_float(elem)):
            raise CoopError(fn, f"kernel argument {i} must be a memref of scalars, got element "
                                f"type {elem}")
    return workgroup_size(fn)
