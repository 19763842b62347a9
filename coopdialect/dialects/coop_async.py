"""The staged form of the `coop` dialect: workgroup buffers and asynchronous copies into them.

Added to the `Coop` dialect's op list (coopdialect/dialects/coop_dialect.py), like `coop_nv2`. The ops are
target-neutral: `pipeline-coop-loads` produces them and each backend maps them to its machinery
(PTX: cp.async / cp.async.bulk.tensor + mbarrier; SPIR-V: loads/stores of Workgroup storage and
OpControlBarrier). Syntax:

```
%w = coop.alloc_workgroup : memref<24576xf16, #coop.storage_class<Workgroup>>
coop.async_copy %A[%aoff], %lda -> %w[%doff], %c64, rows 128, cols 64
    : memref<8192x8192xf16> -> memref<24576xf16, #coop.storage_class<Workgroup>>
coop.async_commit_group
coop.async_wait_group 2
```

Semantics (the interpreter, `coopdialect.interpreter.coop_async`, is exact about them):

* `coop.alloc_workgroup`: one zero-filled buffer per workgroup, shared by all its invocations,
  addressed like a kernel argument (row-major flattening, element offsets). Static shape.
* `coop.async_copy`: the rows x cols box `src[src_off + i*src_stride + j]` (i < rows, j < cols)
  is copied to `dst[dst_off + i*dst_stride + j]`. Offsets and strides count elements. The op is
  workgroup-collective: every invocation of the workgroup reaches it with the same operands, and
  it executes once per workgroup. The source is read when the copy is issued; the destination is
  written at some moment before the `coop.async_wait_group` that retires the copy's group, so
  reading or writing a destination element in between is an error (a data race on a GPU).
* `coop.async_commit_group`: closes the group of copies issued since the previous commit (an
  empty group is allowed); workgroup-collective.
* `coop.async_wait_group N`: workgroup-collective; on return every copy of all but the N most
  recently committed groups is complete and visible to every invocation of the workgroup. It
  implies the workgroup barrier (a backend inserts one), so accesses before and after it are
  ordered between the invocations of the workgroup.

These mirror PTX's cp.async.commit_group / cp.async.wait_group N (PTX ISA, "Data Movement and
Conversion Instructions: cp.async") and
MLIR's nvgpu.device_async_copy / device_async_create_group / device_async_wait, lifted to whole
2-D boxes and to workgroup-collective execution.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, IntAttr, MemRefType, NoneAttr
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from coopdialect.dialects.coop import (
    StorageClass,
    StorageClassAttr,
    constant_int,
    is_float,
    is_integer,
)


def workgroup_memref(shape: list[int], element_type: Attribute) -> MemRefType:
    """`memref<shape x element_type, #coop.storage_class<Workgroup>>`."""
    return MemRefType(element_type, shape, memory_space=WORKGROUP)


def is_workgroup(t: Attribute) -> bool:
    """Whether `t` is a memref in `#coop.storage_class<Workgroup>` storage."""
    return isinstance(t, MemRefType) and t.memory_space == WORKGROUP


def _enclosing_func(op: Operation) -> func.FuncOp | None:
    p = op.parent_op()
    while p is not None and not isinstance(p, func.FuncOp):
        p = p.parent_op()
    return p


def _check_elements(t: MemRefType, what: str) -> None:
    if not (is_integer(t.element_type) or is_float(t.element_type)):
        raise VerifyException(f"{what} must have a scalar numerical element type, got "
                              f"{t.element_type}")


def _check_copy(op: Operation, st: MemRefType, dt: MemRefType, rows: int, cols: int) -> None:
    """The rules every asynchronous copy follows (its docstring): a positive box, a Workgroup
    destination, a kernel argument in global memory as source, equal numerical element types."""
    if rows <= 0 or cols <= 0:
        raise VerifyException(f"rows and cols must be > 0, got rows {rows}, cols {cols}")
    if not is_workgroup(dt):
        raise VerifyException(
            f"the destination must be a memref in #coop.storage_class<Workgroup> memory, got {dt}")
    if not isinstance(st.memory_space, NoneAttr) and st.memory_space != StorageClassAttr(
            StorageClass.StorageBuffer):
        raise VerifyException(
            f"the source must be global memory (a kernel argument, StorageBuffer), got {st}")
    f = _enclosing_func(op)
    source = op.operands[0]
    if not (isinstance(source, BlockArgument) and f is not None and source.owner is f.body.block):
        raise VerifyException("the source must be a kernel argument (an argument of the "
                              "enclosing func.func)")
    if st.element_type != dt.element_type:
        raise VerifyException(f"the source and destination element types must be equal, got "
                              f"{st.element_type} and {dt.element_type}")
    _check_elements(st, "the source")


def _check_box(what: str, mem: MemRefType, off: SSAValue, stride: SSAValue, rows: int,
               cols: int) -> None:
    """Constant offset and stride >= 0, and a constant box inside a static memref."""
    o, s = constant_int(off), constant_int(stride)
    if s is not None and s < 0:
        raise VerifyException(f"the {what} stride must be >= 0, got {s}")
    if o is not None and o < 0:
        raise VerifyException(f"the {what} offset must be >= 0, got {o}")
    if o is not None and s is not None and mem.has_static_shape():
        size = 1
        for d in mem.get_shape():
            size *= d
        last = o + (rows - 1) * s + cols - 1
        if last >= size:
            raise VerifyException(
                f"the {rows}x{cols} box reaches element {last} of the {what}, which has "
                f"{size} elements (offset {o}, stride {s})")


@irdl_op_definition
class AllocWorkgroupOp(IRDLOperation):
    """A buffer in workgroup memory, one per workgroup (zero-filled in the interpreter).

    `%w = coop.alloc_workgroup : memref<24576xf16, #coop.storage_class<Workgroup>>`

    Verifier: static shape, `#coop.storage_class<Workgroup>` memory space, numerical elements.
    SPIR-V: an OpVariable in the Workgroup storage class; PTX: `.shared` memory.
    """

    name = "coop.alloc_workgroup"
    result = result_def(MemRefType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: MemRefType):
        super().__init__(result_types=[result_type])

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, MemRefType)
        if not is_workgroup(t):
            raise VerifyException(
                f"the result must be a memref in #coop.storage_class<Workgroup> memory, got {t}")
        if not t.has_static_shape():
            raise VerifyException(f"workgroup memory has a static size, got {t}")
        _check_elements(t, "the buffer")


@irdl_op_definition
class AsyncCopyOp(IRDLOperation):
    """Asynchronous workgroup-collective copy of a rows x cols box into workgroup memory.

    `coop.async_copy %src[%soff], %sstride -> %dst[%doff], %dstride, rows R, cols C : S -> D`

    For i < rows, j < cols: `dst[dst_offset + i*dst_stride + j] = src[src_offset + i*src_stride
    + j]`, offsets and strides in elements of the (equal) element types, memrefs flattened
    row-major. The source is a kernel argument (global memory, StorageBuffer); the destination a
    `#coop.storage_class<Workgroup>` memref. Part of the group closed by the next
    `coop.async_commit_group`; complete after the `coop.async_wait_group` that retires that group.
    Verifier: the rules above, rows/cols > 0, constant strides >= 0, constant offsets >= 0, and
    (when offset and stride are constants) the box inside a statically shaped memref.
    """

    name = "coop.async_copy"
    source = operand_def(MemRefType)
    source_offset = operand_def(IndexType)
    source_stride = operand_def(IndexType)
    destination = operand_def(MemRefType)
    destination_offset = operand_def(IndexType)
    destination_stride = operand_def(IndexType)
    rows = prop_def(IntAttr)
    cols = prop_def(IntAttr)

    def __init__(self, source: SSAValue, source_offset: SSAValue, source_stride: SSAValue,
                 destination: SSAValue, destination_offset: SSAValue,
                 destination_stride: SSAValue, rows: int, cols: int):
        super().__init__(
            operands=[source, source_offset, source_stride, destination, destination_offset,
                      destination_stride],
            properties={"rows": IntAttr(rows), "cols": IntAttr(cols)},
        )

    @classmethod
    def parse(cls, parser: Parser) -> AsyncCopyOp:
        def addressed() -> tuple[UnresolvedOperand, UnresolvedOperand, UnresolvedOperand]:
            mem = parser.parse_unresolved_operand()
            parser.parse_punctuation("[")
            off = parser.parse_unresolved_operand()
            parser.parse_punctuation("]")
            parser.parse_punctuation(",")
            return mem, off, parser.parse_unresolved_operand()

        src, soff, sstride = addressed()
        parser.parse_punctuation("->")
        dst, doff, dstride = addressed()
        sizes = {}
        for key in ("rows", "cols"):
            parser.parse_punctuation(",")
            parser.parse_keyword(key)
            sizes[key] = parser.parse_integer(allow_boolean=False)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        st = parser.parse_type()
        parser.parse_punctuation("->")
        dt = parser.parse_type()
        index = IndexType()
        op = cls(parser.resolve_operand(src, st), parser.resolve_operand(soff, index),
                 parser.resolve_operand(sstride, index), parser.resolve_operand(dst, dt),
                 parser.resolve_operand(doff, index), parser.resolve_operand(dstride, index),
                 sizes["rows"], sizes["cols"])
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        def addressed(mem: SSAValue, off: SSAValue, stride: SSAValue) -> None:
            printer.print_operand(mem)
            printer.print_string("[")
            printer.print_operand(off)
            printer.print_string("], ")
            printer.print_operand(stride)

        printer.print_string(" ")
        addressed(self.source, self.source_offset, self.source_stride)
        printer.print_string(" -> ")
        addressed(self.destination, self.destination_offset, self.destination_stride)
        printer.print_string(f", rows {self.rows.data}, cols {self.cols.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.destination.type)

    @property
    def box(self) -> tuple[int, int]:
        """(rows, cols) of the copied box, in elements."""
        return (self.rows.data, self.cols.data)

    def verify_(self) -> None:
        st, dt = self.source.type, self.destination.type
        assert isinstance(st, MemRefType) and isinstance(dt, MemRefType)
        rows, cols = self.box
        _check_copy(self, st, dt, rows, cols)
        for what, mem, off, stride in (
                ("source", st, self.source_offset, self.source_stride),
                ("destination", dt, self.destination_offset, self.destination_stride)):
            _check_box(what, mem, off, stride, rows, cols)


@irdl_op_definition
class AsyncCopyTensorOp(IRDLOperation):
    """Asynchronous workgroup-collective copy of a rows x cols matrix read through a tensor layout.

    `coop.async_copy_tensor %src, %layout -> %dst[%doff], %dstride, rows R, cols C
        : memref<?x?xf16>, !tensor_addr.layout<2, Constant> -> memref<..., Workgroup>`

    For i < rows, j < cols: `dst[dst_offset + i*dst_stride + j]` = element (i, j) of the
    rows x cols matrix that `OpCooperativeMatrixLoadTensorNV` (SPV_NV_cooperative_matrix2) loads
    from `src` through `layout` with no tensor view and no DecodeFunc: the element
    matrixCoordToTensorElement(layout, i, j, cols) (SPV_NV_tensor_addressing 3.X), with the
    layout's clamp mode applied — Constant: clampValue's bit pattern for an out-of-bounds
    element, ClampToEdge / Repeat / MirrorRepeat: the clamped element, Undefined: out of bounds
    is undefined behaviour. Offsets and strides count elements. Like `coop.async_copy` the op is
    workgroup-collective, reads its source when issued, writes its destination before the
    `coop.async_wait_group` that retires its group, and its source is a kernel argument in global
    memory. This is the bulk tensor copy (PTX `cp.async.bulk.tensor`) when the layout is a plain
    box: out-of-bounds elements of a Constant-0 layout are the hardware's zero fill.

    Verifier: rows/cols > 0; a Workgroup destination with the source's element type; a kernel
    argument source; a constant destination offset/stride >= 0 and the box inside the
    destination when both are constants.
    """

    name = "coop.async_copy_tensor"
    source = operand_def(MemRefType)
    layout = operand_def()
    destination = operand_def(MemRefType)
    destination_offset = operand_def(IndexType)
    destination_stride = operand_def(IndexType)
    rows = prop_def(IntAttr)
    cols = prop_def(IntAttr)

    def __init__(self, source: SSAValue, layout: SSAValue, destination: SSAValue,
                 destination_offset: SSAValue, destination_stride: SSAValue, rows: int,
                 cols: int):
        super().__init__(
            operands=[source, layout, destination, destination_offset, destination_stride],
            properties={"rows": IntAttr(rows), "cols": IntAttr(cols)},
        )

    @classmethod
    def parse(cls, parser: Parser) -> AsyncCopyTensorOp:
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        layout = parser.parse_unresolved_operand()
        parser.parse_punctuation("->")
        dst = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        doff = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        parser.parse_punctuation(",")
        dstride = parser.parse_unresolved_operand()
        sizes = {}
        for key in ("rows", "cols"):
            parser.parse_punctuation(",")
            parser.parse_keyword(key)
            sizes[key] = parser.parse_integer(allow_boolean=False)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        st = parser.parse_type()
        parser.parse_punctuation(",")
        lt = parser.parse_type()
        parser.parse_punctuation("->")
        dt = parser.parse_type()
        index = IndexType()
        op = cls(parser.resolve_operand(src, st), parser.resolve_operand(layout, lt),
                 parser.resolve_operand(dst, dt), parser.resolve_operand(doff, index),
                 parser.resolve_operand(dstride, index), sizes["rows"], sizes["cols"])
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string(", ")
        printer.print_operand(self.layout)
        printer.print_string(" -> ")
        printer.print_operand(self.destination)
        printer.print_string("[")
        printer.print_operand(self.destination_offset)
        printer.print_string("], ")
        printer.print_operand(self.destination_stride)
        printer.print_string(f", rows {self.rows.data}, cols {self.cols.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(", ")
        printer.print_attribute(self.layout.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.destination.type)

    @property
    def box(self) -> tuple[int, int]:
        """(rows, cols) of the copied matrix, in elements."""
        return (self.rows.data, self.cols.data)

    def verify_(self) -> None:
        from coopdialect.dialects.tensor_addr import TensorLayoutType

        st, dt = self.source.type, self.destination.type
        assert isinstance(st, MemRefType) and isinstance(dt, MemRefType)
        if not isinstance(self.layout.type, TensorLayoutType):
            raise VerifyException(f"the layout must be a !tensor_addr.layout, got "
                                  f"{self.layout.type}")
        rows, cols = self.box
        _check_copy(self, st, dt, rows, cols)
        _check_box("destination", dt, self.destination_offset, self.destination_stride, rows,
                   cols)


@irdl_op_definition
class AsyncCommitGroupOp(IRDLOperation):
    """Close the group of `coop.async_copy` ops issued since the previous commit (may be empty).

    `coop.async_commit_group` — workgroup-collective (cp.async.commit_group, lifted)."""

    name = "coop.async_commit_group"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class AsyncWaitGroupOp(IRDLOperation):
    """Wait until at most `pending` of the most recently committed groups are incomplete.

    `coop.async_wait_group 2` — workgroup-collective; every copy of the other (older) groups is
    then complete and visible to every invocation of the workgroup. Implies the workgroup
    barrier. `pending` >= 0 (cp.async.wait_group N, lifted)."""

    name = "coop.async_wait_group"
    pending = prop_def(IntAttr)

    def __init__(self, pending: int):
        super().__init__(properties={"pending": IntAttr(pending)})

    @classmethod
    def parse(cls, parser: Parser) -> AsyncWaitGroupOp:
        n = parser.parse_integer(allow_boolean=False)
        op = cls(n)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.pending.data}")
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        if self.pending.data < 0:
            raise VerifyException(f"the number of pending groups must be >= 0, got "
                                  f"{self.pending.data}")


ASYNC_OPS = (AllocWorkgroupOp, AsyncCopyOp, AsyncCopyTensorOp, AsyncCommitGroupOp,
             AsyncWaitGroupOp)


WORKGROUP = StorageClassAttr(StorageClass.Workgroup)
"""The memory space of a workgroup memref: `#coop.storage_class<Workgroup>`."""
