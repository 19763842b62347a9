"""What `raise-spirv-to-coop` holds for a SPIR-V value while it lifts a function: an SSA value of
the kernel IR, or one of the kinds below for what has no SSA value of its own there (a vector or
aggregate, a pointer, a builtin), and the byte layout of SPIR-V types that addressing needs.

Pointers (SPIR-V 2.2.2 "Pointer"; 3.42.8 OpAccessChain):

* `BufferPointer`: an object inside a memref argument (a storage or uniform buffer, or a
  DecodeFunc's PhysicalStorageBuffer parameter). Its offset from the memref's element 0 is
  `elem` memref elements + `byte` bytes + `const` bytes, the first two i32 SSA values or None:
  array indices whose stride is a whole number of elements go to `elem`, so that an ordinary
  access is `memref.load %m[elem + const / size]`; only an array of narrower scalars than the
  memref's (bytes in a word buffer) needs `byte`.
* `SplitBlock`: a Block struct whose members are memrefs of their own (members of different
  scalar types); an OpAccessChain picks a member first.
* `ValuePointer`: a read-only object whose value is known (the push-constant block: its members
  are kernel arguments).
* `VarPointer`: a Function or Private variable, or an element of one (`path`: member and element
  indices, ints or i32 SSA values); its value lives in the lifter's variable map.
* `BuiltinPointer` / `BuiltinVector`: an input builtin (WorkgroupId, ...) or its loaded vector,
  whose components become `gpu` id ops where they are used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from xdsl.dialects.builtin import AnyFloat, IntegerType, VectorType
from xdsl.ir import Attribute, Operation, SSAValue

from coopdialect.dialects import coop, spirv, spirv_nv2
from coopdialect.dialects import tensor_addr as ta


class Refuse(Exception):
    """What cannot be lifted: `message` about `op` (located at its instruction)."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op
        self.message = message


def refuse(op: Operation, message: str) -> NoReturn:
    raise Refuse(op, message)


@dataclass(frozen=True, eq=False)
class Composite:
    """A vector, array or struct value: one lifted value per component, element or member."""

    parts: tuple


@dataclass(frozen=True, eq=False)
class BuiltinVector:
    """A loaded 3-component builtin (WorkgroupId, ...): its components become gpu id ops."""

    name: str


@dataclass(frozen=True, eq=False)
class BuiltinPointer:
    name: str
    component: int | None  # an OpAccessChain to one component, or the whole vector


@dataclass(frozen=True, eq=False)
class BufferPointer:
    buffer: SSAValue
    elem: SSAValue | None
    byte: SSAValue | None
    const: int
    pointee: Attribute


@dataclass(frozen=True, eq=False)
class SplitBlock:
    members: tuple  # one memref argument per member of `struct`
    struct: spirv.StructType


@dataclass(frozen=True, eq=False)
class ValuePointer:
    value: object


@dataclass(frozen=True, eq=False)
class VarPointer:
    key: object
    path: tuple
    pointee: Attribute


def scalar_type(t: Attribute) -> Attribute:
    """SPIR-V scalar types as `arith` wants them: integers signless."""
    if isinstance(t, IntegerType):
        return IntegerType(t.width.data)
    return t


_USES = {"MatrixAKHR": coop.Use.MatrixA, "MatrixBKHR": coop.Use.MatrixB, "MatrixAccumulatorKHR": coop.Use.MatrixAcc}


def coop_type(t: Attribute) -> Attribute:
    """The kernel IR type of a SPIR-V scalar, cooperative-matrix or tensor type."""
    if isinstance(t, spirv.CooperativeMatrixType):
        # KHR: signedness is in the MulAdd's Matrix*SignedComponents operands, so components are
        # signless like every scalar (NV keeps OpTypeInt's signedness, its only source)
        return coop.MatrixType(t.rows.data, t.columns.data, scalar_type(t.element_type), t.scope.data,
                               _USES[t.use.data])
    if isinstance(t, spirv.NVCooperativeMatrixType):
        return coop.MatrixType(t.rows.data, t.columns.data, t.element_type, t.scope.data)
    if isinstance(t, spirv_nv2.TensorLayoutType):
        return ta.TensorLayoutType(t.dim.data, t.clamp_mode.data)
    if isinstance(t, spirv_nv2.TensorViewType):
        return ta.TensorViewType(t.dim.data, bool(t.has_dimensions.data), t.perm)
    return scalar_type(t)


def is_scalar(t: Attribute) -> bool:
    return isinstance(t, IntegerType | AnyFloat)


def scalar_bytes(t: Attribute) -> int:
    return (t.width.data if isinstance(t, IntegerType) else t.bitwidth) // 8


def byte_size(t: Attribute) -> int:
    """Bytes an object of type `t` spans in a buffer (explicit layout: Offset, ArrayStride)."""
    if is_scalar(t):
        return scalar_bytes(t)
    if isinstance(t, VectorType):
        return t.get_shape()[0] * byte_size(t.element_type)
    if isinstance(t, spirv.ArrayType):
        return t.length.data * (t.stride.data or byte_size(t.element_type))
    if isinstance(t, spirv.RuntimeArrayType):
        return t.stride.data or byte_size(t.element_type)  # one element
    if isinstance(t, spirv.StructType):
        return max((max(o.data, 0) + byte_size(m) for o, m in zip(t.offsets, t.members)), default=0)
    raise ValueError(f"{t} has no buffer layout")


def member_offset(t: spirv.StructType, k: int) -> int:
    """Byte offset of member `k` (its Offset decoration; members without one follow each other)."""
    off = t.offsets.data[k].data
    if off >= 0:
        return off
    return sum(byte_size(m) for m in t.members.data[:k])


def element_stride(t: Attribute) -> int:
    """Bytes between consecutive elements of an array (its ArrayStride) or vector components."""
    if isinstance(t, VectorType):
        return byte_size(t.element_type)
    assert isinstance(t, spirv.ArrayType | spirv.RuntimeArrayType)
    return t.stride.data or byte_size(t.element_type)


def leaves(t: Attribute, base: int = 0):
    """(byte offset, scalar type) of every scalar of an object of type `t` (one element of a
    runtime array): what a memref must hold for the object to live in it."""
    if is_scalar(t):
        yield base, t
    elif isinstance(t, VectorType | spirv.ArrayType | spirv.RuntimeArrayType):
        n = t.get_shape()[0] if isinstance(t, VectorType) else (
            t.length.data if isinstance(t, spirv.ArrayType) else 1)
        stride = element_stride(t)
        for i in range(n):
            yield from leaves(t.element_type, base + i * stride)
    elif isinstance(t, spirv.StructType):
        for k, m in enumerate(t.members.data):
            yield from leaves(m, base + member_offset(t, k))
    else:
        raise ValueError(f"{t} cannot be held in a buffer")


def same_kind(a: Attribute, b: Attribute) -> bool:
    """Scalars of one kind (integer or float) and width: one memref element type holds both."""
    return isinstance(a, IntegerType) == isinstance(b, IntegerType) and scalar_bytes(a) == scalar_bytes(b)


def components(t: Attribute) -> list[Attribute]:
    """The member types of an aggregate or vector type (one entry per part of its Composite)."""
    if isinstance(t, VectorType):
        return [t.element_type] * t.get_shape()[0]
    if isinstance(t, spirv.ArrayType):
        return [t.element_type] * t.length.data
    if isinstance(t, spirv.StructType):
        return list(t.members.data)
    raise ValueError(f"{t} is not a vector, array or struct")


def is_aggregate(t: Attribute) -> bool:
    return isinstance(t, VectorType | spirv.ArrayType | spirv.StructType)
