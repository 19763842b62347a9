"""The `coop` dialect: target-neutral cooperative matrices.

One dialect for the semantics of SPV_KHR_cooperative_matrix (rev 10) and SPV_NV_cooperative_matrix
(rev 2). A matrix type with a `Use` is a KHR matrix; a matrix type without one is an NV matrix.
Names follow the extension texts and MLIR's SPIR-V dialect (`Subgroup`, `MatrixA`, `RowMajor`,
`ASigned`, ...). Every "must" of the two texts' validation and instruction sections that can be
checked on the IR is a verifier rule here; the message names the rule's source.

Memory model of the load/store ops: the `pointer` operand is a memref whose elements are the
array the SPIR-V pointer points into (storage buffer by default, workgroup memory with
`#gpu.address_space<workgroup>`); `offset` is a linear element index into the memref (row-major
flattening of its shape) and `stride` is counted in elements of the memref's element type, as the
specs define Stride (in elements of the pointee type).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    Signedness,
    StringAttr,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.dialects.utils.bit_enum_attribute import BitEnumAttribute
from xdsl.ir import (
    Attribute,
    Operation,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import NoMemoryEffect, Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from coopdialect.dialects.op_family import op_class

KHR = "SPV_KHR_cooperative_matrix"
NV = "SPV_NV_cooperative_matrix"


# --------------------------------------------------------------------------------------------
# Enums
# --------------------------------------------------------------------------------------------


class Scope(StrEnum):
    """Execution scope of a cooperative matrix (SPIR-V `Scope`, as MLIR's SPIR-V dialect spells it)."""

    Subgroup = "Subgroup"
    Workgroup = "Workgroup"


class Use(StrEnum):
    """`Cooperative Matrix Use` (SPV_KHR_cooperative_matrix 3.X)."""

    MatrixA = "MatrixA"
    MatrixB = "MatrixB"
    MatrixAcc = "MatrixAcc"


class Layout(StrEnum):
    """`Cooperative Matrix Layout` (SPV_KHR_cooperative_matrix 3.X; NV's ColumnMajor boolean).

    RowBlockedInterleavedARM / ColumnBlockedInterleavedARM come from
    SPV_ARM_cooperative_matrix_layouts (KHR matrices only; rules in `_check_arm_layout`,
    addressing in docs/arm-layouts.md and `coopdialect.interpreter.arm_layouts`)."""

    RowMajor = "RowMajor"
    ColumnMajor = "ColumnMajor"
    RowBlockedInterleavedARM = "RowBlockedInterleavedARM"
    ColumnBlockedInterleavedARM = "ColumnBlockedInterleavedARM"


ARM_LAYOUTS = (Layout.RowBlockedInterleavedARM, Layout.ColumnBlockedInterleavedARM)


class MatrixOperand(StrEnum):
    """`Cooperative Matrix Operands` of OpCooperativeMatrixMulAddKHR (MLIR spellings)."""

    ASigned = "ASigned"
    BSigned = "BSigned"
    CSigned = "CSigned"
    ResultSigned = "ResultSigned"
    SaturatingAccumulation = "SaturatingAccumulation"


class MemoryAccess(StrEnum):
    """The `Memory Operand` bits that apply to cooperative-matrix loads and stores."""

    Volatile = "Volatile"
    Aligned = "Aligned"
    Nontemporal = "Nontemporal"
    MakePointerAvailable = "MakePointerAvailable"
    MakePointerVisible = "MakePointerVisible"
    NonPrivatePointer = "NonPrivatePointer"


class StorageClass(StrEnum):
    """Where a memref used by a load or store lives (the SPIR-V Storage Class of its Pointer)."""

    StorageBuffer = "StorageBuffer"
    Workgroup = "Workgroup"


class MemoryScope(StrEnum):
    """Scopes a MakePointerAvailable/Visible memory operand may name."""

    CrossDevice = "CrossDevice"
    Device = "Device"
    QueueFamily = "QueueFamily"
    Workgroup = "Workgroup"
    Subgroup = "Subgroup"


@irdl_attr_definition
class ScopeAttr(EnumAttribute[Scope], SpacedOpaqueSyntaxAttribute):
    name = "coop.scope"


@irdl_attr_definition
class UseAttr(EnumAttribute[Use], SpacedOpaqueSyntaxAttribute):
    name = "coop.use"


@irdl_attr_definition
class LayoutAttr(EnumAttribute[Layout], SpacedOpaqueSyntaxAttribute):
    name = "coop.layout"


@irdl_attr_definition
class StorageClassAttr(EnumAttribute[StorageClass]):
    """Memory space of a memref: `memref<256xf16, #coop.storage_class<Workgroup>>`; none = StorageBuffer.

    Prints as `#coop.storage_class<Workgroup>`; the opaque spelling `#coop<storage_class Workgroup>`
    is still read."""

    name = "coop.storage_class"

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data.value}>")

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> StorageClass:
        if parser.parse_optional_punctuation("<") is None:  # the opaque form: a bare name
            return parser.parse_str_enum(StorageClass)
        value = parser.parse_str_enum(StorageClass)
        parser.parse_punctuation(">")
        return value


@irdl_attr_definition
class MatrixOperandsAttr(BitEnumAttribute[MatrixOperand]):
    """`<ASigned|BSigned|...>`; `<None>` (or leaving the attribute off) is NoneKHR."""

    name = "coop.matrix_operands"
    none_value = "None"
    separator_value = "|"


# --------------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------------


MAX_MATRIX_ELEMENTS = 1 << 20
"""Most elements of one cooperative matrix (Rows·Columns), an implementation limit: the specs
allow any 32-bit Rows and Columns, but no device has a larger matrix (VK_NV_cooperative_matrix2's
flexible maximum dimension is 1024 on the H200), and the interpreter, legalize-coop-sizes and
convert-coop-to-ptx are linear in it (a 4096×4096 matrix is refused at once rather than unrolled
or multiplied for minutes)."""


def is_integer(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data > 1


def is_float(t: Attribute) -> bool:
    return isinstance(t, AnyFloat)


def is_signed_type(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.SIGNED


def is_unsigned_type(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def bit_width(t: Attribute) -> int:
    if isinstance(t, IntegerType):
        return t.width.data
    if isinstance(t, AnyFloat):
        return t.bitwidth
    raise ValueError(f"{t} is not a numerical scalar type")


def _check_component(t: Attribute) -> str | None:
    """None if `t` is a scalar numerical type (OpTypeCooperativeMatrix* 'Component Type')."""
    if is_integer(t) and bit_width(t) in (8, 16, 32, 64):
        return None
    if is_float(t):
        return None
    return f"Component Type must be a scalar numerical type, got {t}"


@irdl_attr_definition
class MatrixType(ParametrizedAttribute, TypeAttribute):
    """A cooperative matrix: `!coop.matrix<RxCxT, Scope, Use>` (KHR) or `!coop.matrix<RxCxT, Scope>` (NV).

    Rows and columns are element counts (> 0); the component type is a scalar numerical type
    (integers of 8/16/32/64 bits, signless/si/ui, or a float type). OpTypeCooperativeMatrixKHR /
    OpTypeCooperativeMatrixNV (3.32.6 / 3.42.6).
    """

    name = "coop.matrix"
    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    scope: ScopeAttr
    use: UseAttr | NoneAttr

    def __init__(
        self,
        rows: int,
        columns: int,
        element_type: Attribute,
        scope: Scope | str = Scope.Subgroup,
        use: Use | str | None = None,
    ):
        super().__init__(
            ArrayAttr([IntAttr(rows), IntAttr(columns)]),
            element_type,
            ScopeAttr(Scope(scope)),
            UseAttr(Use(use)) if use is not None else NoneAttr(),
        )

    @property
    def rows(self) -> int:
        return self.shape.data[0].data

    @property
    def columns(self) -> int:
        return self.shape.data[1].data

    def get_shape(self) -> tuple[int, int]:
        return (self.rows, self.columns)

    @property
    def scope_value(self) -> Scope:
        return self.scope.data

    @property
    def use_value(self) -> Use | None:
        return None if isinstance(self.use, NoneAttr) else self.use.data

    @property
    def is_nv(self) -> bool:
        """True for an SPV_NV_cooperative_matrix type (no Use)."""
        return isinstance(self.use, NoneAttr)

    def with_element_type(self, element_type: Attribute) -> MatrixType:
        return MatrixType(self.rows, self.columns, element_type, self.scope_value, self.use_value)

    def verify(self) -> None:
        if len(self.shape.data) != 2:
            raise VerifyException("coop.matrix must have exactly two dimensions (Rows, Columns)")
        for what, d in zip(("Rows", "Columns"), self.shape.data):
            if not 0 < d.data < 2**32:
                raise VerifyException(
                    f"{what} must be a positive 32-bit integer constant, got {d.data}"
                )
        if (msg := _check_component(self.element_type)) is not None:
            raise VerifyException(msg)
        rows, columns = (d.data for d in self.shape.data)
        if rows * columns > MAX_MATRIX_ELEMENTS:
            raise VerifyException(f"a {rows}x{columns} matrix has more than MAX_MATRIX_ELEMENTS = "
                                  f"{MAX_MATRIX_ELEMENTS} elements (coopdialect's limit)")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            start = parser.pos
            shape, element_type = parser.parse_ranked_shape()
            if len(shape) != 2:
                parser.raise_error(
                    "coop.matrix must have exactly two dimensions (Rows, Columns)", start, parser.pos
                )
            for d in shape:
                if d <= 0:
                    parser.raise_error(
                        "Rows and Columns must be positive constants", start, parser.pos
                    )
                if d >= 2**32:
                    parser.raise_error(f"Rows and Columns must be 32-bit integer constants, got {d}",
                                       start, parser.pos)
            if len(shape) == 2 and shape[0] * shape[1] > MAX_MATRIX_ELEMENTS:
                # here, at the type, rather than in verify() where no location is known
                parser.raise_error(f"a {shape[0]}x{shape[1]} matrix has more than MAX_MATRIX_ELEMENTS = "
                                   f"{MAX_MATRIX_ELEMENTS} elements (coopdialect's limit)", start, parser.pos)
            if (msg := _check_component(element_type)) is not None:
                parser.raise_error(msg, start, parser.pos)
            parser.parse_punctuation(",")
            scope = parser.parse_str_enum(Scope)
            use: Attribute = NoneAttr()
            if parser.parse_optional_punctuation(","):
                use = UseAttr(parser.parse_str_enum(Use))
        return (ArrayAttr(IntAttr(d) for d in shape), element_type, ScopeAttr(scope), use)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.rows}x{self.columns}x")
            printer.print_attribute(self.element_type)
            printer.print_string(f", {self.scope_value.value}")
            if (use := self.use_value) is not None:
                printer.print_string(f", {use.value}")


@irdl_attr_definition
class MemoryAccessAttr(ParametrizedAttribute):
    """A `Memory Operand`: `#coop.memory_access<Volatile|Aligned 16|MakePointerAvailable Device|...>`.

    `alignment` is in bytes (0 when Aligned is absent); `scope` is the Scope <id> operand of
    MakePointerAvailable/MakePointerVisible (NoneAttr otherwise). SPIR-V 3.26 Memory Operands.
    """

    name = "coop.memory_access"
    flags: ArrayAttr
    alignment: IntAttr
    scope: NoneAttr | StringAttr

    def __init__(
        self,
        flags: Sequence[MemoryAccess | str],
        alignment: int = 0,
        scope: MemoryScope | str | None = None,
    ):
        ordered = [f for f in MemoryAccess if f in {MemoryAccess(x) for x in flags}]
        super().__init__(
            ArrayAttr([StringAttr(f.value) for f in ordered]),
            IntAttr(alignment),
            StringAttr(MemoryScope(scope).value) if scope is not None else NoneAttr(),
        )

    @property
    def flag_set(self) -> frozenset[MemoryAccess]:
        return frozenset(MemoryAccess(f.data) for f in self.flags.data)

    @property
    def scope_name(self) -> str | None:
        return None if isinstance(self.scope, NoneAttr) else self.scope.data

    def verify(self) -> None:
        flags = self.flag_set
        align = self.alignment.data
        if MemoryAccess.Aligned in flags:
            if align <= 0 or align & (align - 1):
                raise VerifyException(
                    f"Aligned memory operand needs a power-of-two literal alignment, got {align}"
                )
        elif align != 0:
            raise VerifyException("an alignment is given but the Aligned bit is not set")
        needs_scope = flags & {MemoryAccess.MakePointerAvailable, MemoryAccess.MakePointerVisible}
        if needs_scope and self.scope_name is None:
            raise VerifyException("MakePointerAvailable/MakePointerVisible need a memory scope")
        if not needs_scope and self.scope_name is not None:
            raise VerifyException(
                "a memory scope is only allowed with MakePointerAvailable or MakePointerVisible"
            )
        if needs_scope and MemoryAccess.NonPrivatePointer not in flags:
            raise VerifyException(
                "MakePointerAvailable/MakePointerVisible require NonPrivatePointer "
                "(SPIR-V 3.26 Memory Operands)"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        flags: list[MemoryAccess] = []
        align = 0
        scope: Attribute = NoneAttr()
        with parser.in_angle_brackets():
            while True:
                flag = parser.parse_str_enum(MemoryAccess)
                flags.append(flag)
                if flag == MemoryAccess.Aligned:
                    align = parser.parse_integer(allow_negative=False, allow_boolean=False)
                elif flag in (MemoryAccess.MakePointerAvailable, MemoryAccess.MakePointerVisible):
                    scope = StringAttr(parser.parse_str_enum(MemoryScope).value)
                if not parser.parse_optional_punctuation("|"):
                    break
        ordered = [f for f in MemoryAccess if f in flags]
        return (ArrayAttr([StringAttr(f.value) for f in ordered]), IntAttr(align), scope)

    def print_parameters(self, printer: Printer) -> None:
        parts = []
        for f in MemoryAccess:
            if f not in self.flag_set:
                continue
            if f == MemoryAccess.Aligned:
                parts.append(f"Aligned {self.alignment.data}")
            elif f in (MemoryAccess.MakePointerAvailable, MemoryAccess.MakePointerVisible):
                parts.append(f"{f.value} {self.scope_name}")
            else:
                parts.append(f.value)
        printer.print_string("<" + "|".join(parts) + ">")


# --------------------------------------------------------------------------------------------
# Helpers for verifiers
# --------------------------------------------------------------------------------------------


def constant_int(value: SSAValue) -> int | None:
    """The value of `value` if an `arith.constant` defines it, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _matrix(value: SSAValue) -> MatrixType:
    assert isinstance(value.type, MatrixType)
    return value.type


def _check_pointer(op: Operation, pointer: SSAValue, matrix: MatrixType, inst: str) -> None:
    mem = pointer.type
    assert isinstance(mem, MemRefType)
    space = mem.memory_space
    if not isinstance(space, NoneAttr | StorageClassAttr):
        raise VerifyException(
            f"The storage class of Pointer must be Workgroup or StorageBuffer (the default), got "
            f"memory space {space} ({inst})"
        )
    if not (is_integer(mem.element_type) or is_float(mem.element_type)):
        raise VerifyException(
            f"Pointer must point to a scalar type, got element type {mem.element_type} ({inst})"
        )
    if mem.element_type != matrix.element_type:
        # The specs let the pointee differ (stride then counts pointee elements); coopdialect
        # keeps them equal so that offsets and strides have one unit everywhere.
        raise VerifyException(
            f"memref element type {mem.element_type} must equal the matrix Component Type "
            f"{matrix.element_type}"
        )


def _check_memory_access(op: Operation, access: MemoryAccessAttr | None, is_load: bool, inst: str) -> None:
    if access is None:
        return
    flags = access.flag_set
    if is_load and MemoryAccess.MakePointerAvailable in flags:
        raise VerifyException(f"MakePointerAvailable is not valid with {inst}")
    if not is_load and MemoryAccess.MakePointerVisible in flags:
        raise VerifyException(f"MakePointerVisible is not valid with {inst}")


ARM = "SPV_ARM_cooperative_matrix_layouts"
ARM_STRIDES = (1, 2, 4)
"""Stride values the current registry text allows with the Arm layouts (SPIRV-Registry PR #372,
2025-11-12, after revision 1 of the seed text)."""


def arm_block_columns(component: Attribute) -> int:
    """Columns of one 64-byte block of an Arm blocked layout: 16 / sizeof(Component Type)."""
    return 16 // (bit_width(component) // 8)


def _check_arm_layout(matrix: MatrixType, stride: SSAValue, layout: Layout, inst: str) -> None:
    """The validation rules of SPV_ARM_cooperative_matrix_layouts (2.16.1 additions).

    Rev 1 (the seed): Rows a multiple of 4 and Columns a multiple of 16/sizeof(Component Type);
    RowBlockedInterleavedARM: Columns a multiple of 16/sizeof * Stride; ColumnBlockedInterleavedARM:
    Rows a multiple of 4 * Stride. Current registry text (tightened after rev 1): Stride must be
    present and a constant instruction whose value is 1, 2 or 4."""
    if matrix.is_nv:
        raise VerifyException(
            f"MemoryLayout {layout.value} needs a KHR matrix (with a Use): {ARM} extends "
            "OpCooperativeMatrixLoadKHR/StoreKHR only"
        )
    s = constant_int(stride)
    if s is None:
        raise VerifyException(
            f"Stride must be a constant instruction when MemoryLayout is {layout.value} ({ARM}, "
            f"current registry text; {inst})"
        )
    if s not in ARM_STRIDES:
        raise VerifyException(
            f"Stride must be 1, 2 or 4 when MemoryLayout is {layout.value}, got {s} ({ARM}, "
            f"current registry text; {inst})"
        )
    cols = arm_block_columns(matrix.element_type)
    if matrix.rows % 4 or matrix.columns % cols:
        raise VerifyException(
            f"with MemoryLayout {layout.value} Rows must be a multiple of 4 and Columns a multiple "
            f"of 16 / sizeof({matrix.element_type}) = {cols}, got {matrix.rows}x{matrix.columns} "
            f"({ARM}; {inst})"
        )
    if layout == Layout.RowBlockedInterleavedARM and matrix.columns % (cols * s):
        raise VerifyException(
            f"with MemoryLayout RowBlockedInterleavedARM Columns must be a multiple of "
            f"16 / sizeof({matrix.element_type}) * Stride = {cols * s}, got {matrix.columns} "
            f"({ARM}; {inst})"
        )
    if layout == Layout.ColumnBlockedInterleavedARM and matrix.rows % (4 * s):
        raise VerifyException(
            f"with MemoryLayout ColumnBlockedInterleavedARM Rows must be a multiple of "
            f"4 * Stride = {4 * s}, got {matrix.rows} ({ARM}; {inst})"
        )


def _inst_name(matrix: MatrixType, khr: str, nv: str) -> str:
    return nv if matrix.is_nv else khr


# --------------------------------------------------------------------------------------------
# Memory instructions
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Load a cooperative matrix from memory (OpCooperativeMatrixLoadKHR / OpCooperativeMatrixLoadNV).

    `coop.load %buf[%offset], %stride, RowMajor : memref<4096xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>`

    With RowMajor, element (r, c) is read from `buf[offset + r*stride + c]`; with ColumnMajor,
    from `buf[offset + c*stride + r]` (offset and stride in elements of the memref's element type,
    the memref flattened row-major). Stride must be >= 0 (checked when it is a constant).
    With RowBlockedInterleavedARM / ColumnBlockedInterleavedARM the matrix is R*C contiguous
    elements from `offset` in 64-byte blocks interleaved in groups of Stride (1, 2 or 4, a
    constant); see docs/arm-layouts.md.
    """

    name = "coop.load"
    pointer = operand_def(MemRefType)
    offset = operand_def(IndexType)
    stride = operand_def(IndexType)
    layout = prop_def(LayoutAttr)
    memory_access = opt_prop_def(MemoryAccessAttr)
    result = result_def(MatrixType)
    assembly_format = (
        "$pointer `[` $offset `]` `,` $stride `,` $layout (`,` $memory_access^)? attr-dict "
        "`:` type($pointer) `->` type($result)"
    )

    def __init__(
        self,
        pointer: SSAValue,
        offset: SSAValue,
        stride: SSAValue,
        layout: Layout | str,
        result_type: MatrixType,
        memory_access: MemoryAccessAttr | None = None,
    ):
        super().__init__(
            operands=[pointer, offset, stride],
            result_types=[result_type],
            properties={"layout": LayoutAttr(Layout(layout)), "memory_access": memory_access},
        )

    def verify_(self) -> None:
        m = _matrix(self.result)
        inst = _inst_name(m, "OpCooperativeMatrixLoadKHR", "OpCooperativeMatrixLoadNV")
        _check_pointer(self, self.pointer, m, inst)
        _check_memory_access(self, self.memory_access, True, inst)
        if self.layout.data in ARM_LAYOUTS:
            _check_arm_layout(m, self.stride, self.layout.data, inst)
        s = constant_int(self.stride)
        if s is not None and s < 0:
            raise VerifyException(
                f"Stride must be greater than or equal to 0 when passed to {inst}, got {s}"
            )


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Store a cooperative matrix to memory (OpCooperativeMatrixStoreKHR / OpCooperativeMatrixStoreNV).

    `coop.store %m, %buf[%offset], %stride, RowMajor : !coop.matrix<...>, memref<4096xf32>`

    Element (r, c) goes to `buf[offset + r*stride + c]` (RowMajor) or `buf[offset + c*stride + r]`
    (ColumnMajor), in elements. Stride must be > 0 (checked when it is a constant). The Arm
    blocked layouts are as for `coop.load` (docs/arm-layouts.md).
    """

    name = "coop.store"
    object = operand_def(MatrixType)
    pointer = operand_def(MemRefType)
    offset = operand_def(IndexType)
    stride = operand_def(IndexType)
    layout = prop_def(LayoutAttr)
    memory_access = opt_prop_def(MemoryAccessAttr)
    assembly_format = (
        "$object `,` $pointer `[` $offset `]` `,` $stride `,` $layout (`,` $memory_access^)? "
        "attr-dict `:` type($object) `,` type($pointer)"
    )

    def __init__(
        self,
        obj: SSAValue,
        pointer: SSAValue,
        offset: SSAValue,
        stride: SSAValue,
        layout: Layout | str,
        memory_access: MemoryAccessAttr | None = None,
    ):
        super().__init__(
            operands=[obj, pointer, offset, stride],
            properties={"layout": LayoutAttr(Layout(layout)), "memory_access": memory_access},
        )

    def verify_(self) -> None:
        m = _matrix(self.object)
        inst = _inst_name(m, "OpCooperativeMatrixStoreKHR", "OpCooperativeMatrixStoreNV")
        _check_pointer(self, self.pointer, m, inst)
        _check_memory_access(self, self.memory_access, False, inst)
        if self.layout.data in ARM_LAYOUTS:
            _check_arm_layout(m, self.stride, self.layout.data, inst)
        s = constant_int(self.stride)
        if s is not None and s <= 0:
            raise VerifyException(f"Stride must be greater than 0 when passed to {inst}, got {s}")


# --------------------------------------------------------------------------------------------
# Multiply-add and length
# --------------------------------------------------------------------------------------------

_SIGN_FLAGS = (
    ("A", MatrixOperand.ASigned),
    ("B", MatrixOperand.BSigned),
    ("C", MatrixOperand.CSigned),
    ("Result", MatrixOperand.ResultSigned),
)


@irdl_op_definition
class MulAddOp(IRDLOperation):
    """`Result = A × B + C` (OpCooperativeMatrixMulAddKHR / OpCooperativeMatrixMulAddNV).

    `coop.mul_add %a, %b, %c <ASigned|BSigned> : !A, !B, !C -> !R`

    A is M×K, B is K×N, C and Result are M×N. Integer components are signed when the
    matching `*Signed` operand is present or the component type is `siN`, unsigned otherwise;
    `SaturatingAccumulation` saturates the final addition of C to the signedness of Result.
    """

    name = "coop.mul_add"
    a = operand_def(MatrixType)
    b = operand_def(MatrixType)
    c = operand_def(MatrixType)
    matrix_operands = opt_prop_def(MatrixOperandsAttr)
    result = result_def(MatrixType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> MulAddOp:
        names = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            names.append(parser.parse_unresolved_operand())
        props = {}
        if parser._current_token.text == "<":  # optional operand mask
            props["matrix_operands"] = MatrixOperandsAttr.new(
                MatrixOperandsAttr.parse_parameter(parser)
            )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = [parser.parse_type()]
        for _ in range(2):
            parser.parse_punctuation(",")
            types.append(parser.parse_type())
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        op = cls.build(
            operands=[parser.resolve_operand(n, t) for n, t in zip(names, types)],
            result_types=[result_type],
            properties=props,
        )
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        if self.matrix_operands is not None and self.matrix_operands.data:
            printer.print_string(" ")
            self.matrix_operands.print_parameter(printer)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([v.type for v in self.operands], printer.print_attribute)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        result_type: Attribute,
        matrix_operands: Sequence[MatrixOperand | str] = (),
    ):
        props = {}
        if matrix_operands:
            props["matrix_operands"] = MatrixOperandsAttr([MatrixOperand(f) for f in matrix_operands])
        super().__init__(operands=[a, b, c], result_types=[result_type], properties=props)

    @property
    def operand_flags(self) -> frozenset[MatrixOperand]:
        return frozenset() if self.matrix_operands is None else self.matrix_operands.data

    def is_signed(self, which: str) -> bool:
        """Whether the components of matrix `which` ('A', 'B', 'C', 'Result') are signed."""
        flag = dict(_SIGN_FLAGS)[which]
        value = {"A": self.a, "B": self.b, "C": self.c, "Result": self.result}[which]
        return flag in self.operand_flags or is_signed_type(_matrix(value).element_type)

    def verify_(self) -> None:
        a, b, c, r = (_matrix(v) for v in (self.a, self.b, self.c, self.result))
        nv = [t.is_nv for t in (a, b, c, r)]
        if any(nv) and not all(nv):
            raise VerifyException(
                "A, B, C and Result must all be KHR matrices (with a Use) or all NV matrices (without)"
            )
        inst = "OpCooperativeMatrixMulAddNV" if nv[0] else "OpCooperativeMatrixMulAddKHR"
        if not nv[0]:
            for name, t, want in (("A", a, Use.MatrixA), ("B", b, Use.MatrixB),
                                  ("C", c, Use.MatrixAcc), ("Result Type", r, Use.MatrixAcc)):
                if t.use_value != want:
                    raise VerifyException(
                        f"{name} must have Use {want.value}, got {t.use_value.value} ({inst})"
                    )
        (m, k), (k2, n) = a.get_shape(), b.get_shape()
        if k != k2 or c.get_shape() != (m, n) or r.get_shape() != (m, n):
            raise VerifyException(
                f"M, N and K must be consistent: A is {m}x{k}, B is {k2}x{n}, C is "
                f"{c.rows}x{c.columns}, Result is {r.rows}x{r.columns} ({inst})"
            )
        if len({t.scope_value for t in (a, b, c, r)}) != 1:
            raise VerifyException(f"A, B, C and Result Type must have the same scope ({inst})")
        flags = self.operand_flags
        if nv[0] and flags:
            raise VerifyException(
                "Cooperative Matrix Operands need SPV_KHR_cooperative_matrix; NV matrices take "
                "their signedness from the component type (OpCooperativeMatrixMulAddNV)"
            )
        for name, flag in _SIGN_FLAGS:
            t = {"A": a, "B": b, "C": c, "Result": r}[name]
            if flag in flags:
                if not is_integer(t.element_type):
                    raise VerifyException(
                        f"Matrix{name}SignedComponentsKHR can only be used when the type of matrix "
                        f"{name} is an integer type, got {t.element_type}"
                    )
                if is_unsigned_type(t.element_type):
                    raise VerifyException(
                        f"Matrix{name}SignedComponentsKHR contradicts the unsigned component type "
                        f"{t.element_type} of matrix {name}"
                    )
        if MatrixOperand.SaturatingAccumulation in flags and not is_integer(r.element_type):
            raise VerifyException(
                "SaturatingAccumulationKHR applies to integer accumulation; Result Type has "
                f"component type {r.element_type}"
            )
        if is_integer(a.element_type) != is_integer(b.element_type) or is_integer(
            c.element_type
        ) != is_integer(r.element_type):
            raise VerifyException(
                "A and B must both be integer or both be float, and so must C and Result Type"
            )


@irdl_op_definition
class LengthOp(IRDLOperation):
    """Components of a matrix type held by one invocation (OpCooperativeMatrixLengthKHR/NV).

    `%n = coop.length : !coop.matrix<16x16xf16, Subgroup, MatrixA>` gives an `i32`. The number is
    implementation-dependent; the interpreter's choice is documented in coopdialect.interpreter.
    """

    name = "coop.length"
    matrix_type = prop_def(MatrixType)
    result = result_def(IntegerType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> LengthOp:
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls(parser.parse_type())
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.matrix_type)

    def __init__(self, matrix_type: MatrixType):
        super().__init__(properties={"matrix_type": matrix_type}, result_types=[IntegerType(32)])

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, IntegerType)
        if t.width.data != 32 or t.signedness.data == Signedness.SIGNED:
            raise VerifyException(
                f"Result Type must be a 32-bit integer with 0 Signedness, got {t} "
                "(OpCooperativeMatrixLengthKHR)"
            )


# --------------------------------------------------------------------------------------------
# Composite construction and element access
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class CompositeConstructOp(IRDLOperation):
    """A matrix with every component equal to one scalar (OpCompositeConstruct with one Constituent).

    `%m = coop.composite_construct %x : f32 -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>`
    """

    name = "coop.composite_construct"
    constituent = operand_def()
    result = result_def(MatrixType)
    traits = traits_def(Pure())
    assembly_format = "$constituent attr-dict `:` type($constituent) `->` type($result)"

    def __init__(self, constituent: SSAValue, result_type: MatrixType):
        super().__init__(operands=[constituent], result_types=[result_type])

    def verify_(self) -> None:
        m = _matrix(self.result)
        if self.constituent.type != m.element_type:
            raise VerifyException(
                "there must be only one Constituent, with scalar type matching the cooperative "
                f"matrix Component Type {m.element_type}, got {self.constituent.type} "
                "(OpCompositeConstruct)"
            )


def _parse_index(parser: Parser) -> int:
    parser.parse_punctuation("[")
    index = parser.parse_integer(allow_boolean=False)
    parser.parse_punctuation("]")
    return index


class _ElementIndexMixin:
    def _check_index(self, m: MatrixType, index: int, inst: str) -> None:
        if index < 0:
            raise VerifyException(f"Indexes must be non-negative literals, got {index} ({inst})")


@irdl_op_definition
class ExtractOp(IRDLOperation, _ElementIndexMixin):
    """One component of the invocation's share of a matrix (OpCompositeExtract).

    `%x = coop.extract %m[3] : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>` gives an f32. Index is
    a literal, in `[0, coop.length)`; which matrix element it names is implementation-dependent.
    """

    name = "coop.extract"
    matrix = operand_def(MatrixType)
    index = prop_def(IntAttr)
    result = result_def()
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> ExtractOp:
        name = parser.parse_unresolved_operand()
        index = _parse_index(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls(parser.resolve_operand(name, parser.parse_type()), index)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.matrix)
        printer.print_string(f"[{self.index.data}]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.matrix.type)

    def __init__(self, matrix: SSAValue, index: int):
        t = _matrix(matrix)
        super().__init__(
            operands=[matrix],
            result_types=[t.element_type],
            properties={"index": IntAttr(index)},
        )

    def verify_(self) -> None:
        m = _matrix(self.matrix)
        self._check_index(m, self.index.data, "OpCompositeExtract")
        if self.result.type != m.element_type:
            raise VerifyException(
                f"Result Type must be the Component Type {m.element_type} (OpCompositeExtract)"
            )


@irdl_op_definition
class InsertOp(IRDLOperation, _ElementIndexMixin):
    """A copy of a matrix with one component of the invocation's share replaced (OpCompositeInsert).

    `%n = coop.insert %x, %m[3] : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>`
    """

    name = "coop.insert"
    object = operand_def()
    matrix = operand_def(MatrixType)
    index = prop_def(IntAttr)
    result = result_def(MatrixType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> InsertOp:
        obj = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        name = parser.parse_unresolved_operand()
        index = _parse_index(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        element = t.element_type if isinstance(t, MatrixType) else t
        op = cls(parser.resolve_operand(obj, element), parser.resolve_operand(name, t), index)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.object)
        printer.print_string(", ")
        printer.print_operand(self.matrix)
        printer.print_string(f"[{self.index.data}]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.matrix.type)

    def __init__(self, obj: SSAValue, matrix: SSAValue, index: int):
        super().__init__(
            operands=[obj, matrix],
            result_types=[matrix.type],
            properties={"index": IntAttr(index)},
        )

    def verify_(self) -> None:
        m = _matrix(self.matrix)
        self._check_index(m, self.index.data, "OpCompositeInsert")
        if self.object.type != m.element_type:
            raise VerifyException(
                f"Object must have the Component Type {m.element_type}, got {self.object.type} "
                "(OpCompositeInsert)"
            )
        if self.result.type != m:
            raise VerifyException("Result Type must be the type of Composite (OpCompositeInsert)")


# --------------------------------------------------------------------------------------------
# Element-wise arithmetic
# --------------------------------------------------------------------------------------------

# (needs float components, SPIR-V instruction, KHR only)
_ARITH_RULES = {
    "float": ("a floating-point type", is_float),
    "int": ("an integer type", is_integer),
}


def _parse_same_typed(cls, parser: Parser, count: int):
    """`%x, %y {attrs} : T` — every operand and the result have type T (the verifier checks it)."""
    names = [parser.parse_unresolved_operand()]
    for _ in range(count - 1):
        parser.parse_punctuation(",")
        names.append(parser.parse_unresolved_operand())
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    t = parser.parse_type()
    op = cls.build(operands=[parser.resolve_operand(n, t) for n in names], result_types=[t])
    op.attributes |= attrs
    return op


def _print_same_typed(op: IRDLOperation, printer: Printer) -> None:
    printer.print_string(" ")
    printer.print_list(op.operands, printer.print_operand)
    printer.print_op_attributes(op.attributes)
    printer.print_string(" : ")
    printer.print_attribute(op.result_types[0])


class _UnaryArith(IRDLOperation):
    KIND: ClassVar[str]
    SPIRV_NAME: ClassVar[str]
    operand = operand_def(MatrixType)
    result = result_def(MatrixType)
    traits = traits_def(Pure())

    def __init__(self, operand: SSAValue):
        super().__init__(operands=[operand], result_types=[operand.type])

    @classmethod
    def parse(cls, parser: Parser):
        return _parse_same_typed(cls, parser, 1)

    def print(self, printer: Printer) -> None:
        _print_same_typed(self, printer)

    def verify_(self) -> None:
        _verify_elementwise(self, [self.operand], self.result)


class _BinaryArith(IRDLOperation):
    KIND: ClassVar[str]
    SPIRV_NAME: ClassVar[str]
    KHR_ONLY: ClassVar[bool] = False
    lhs = operand_def(MatrixType)
    rhs = operand_def(MatrixType)
    result = result_def(MatrixType)
    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])

    @classmethod
    def parse(cls, parser: Parser):
        return _parse_same_typed(cls, parser, 2)

    def print(self, printer: Printer) -> None:
        _print_same_typed(self, printer)

    def verify_(self) -> None:
        _verify_elementwise(self, [self.lhs, self.rhs], self.result)


def _verify_elementwise(op, operands: Sequence[SSAValue], result: SSAValue) -> None:
    desc, pred = _ARITH_RULES[op.KIND]
    r = _matrix(result)
    for v in operands:
        if v.type != r:
            raise VerifyException(
                f"binary arithmetic instructions operate on cooperative matrices whose type must "
                f"match: {v.type} vs {r} ({op.SPIRV_NAME})"
            )
    if not pred(r.element_type):
        raise VerifyException(
            f"{op.SPIRV_NAME} can only be used with cooperative matrix types whose Component Type "
            f"is {desc}, got {r.element_type}"
        )
    if getattr(op, "KHR_ONLY", False) and r.is_nv:
        raise VerifyException(
            f"{op.SPIRV_NAME} on cooperative matrices needs SPV_KHR_cooperative_matrix "
            "(a matrix type with a Use); SPV_NV_cooperative_matrix does not allow it"
        )


def _op_class(name: str, base: type, op_name: str, doc: str, **consts) -> type[IRDLOperation]:
    """Define one op of a family; `consts` become the ClassVar constants IRDL allows."""
    return op_class(name, base, op_name, doc, __name__, **consts)


def _unary(name: str, kind: str, spirv_name: str, doc: str) -> type[IRDLOperation]:
    return _op_class(name, _UnaryArith, f"coop.{spirv_name[2:].lower()}", doc, KIND=kind,
                     SPIRV_NAME=spirv_name)


def _binary(name: str, kind: str, spirv_name: str, doc: str, khr_only: bool = False) -> type[IRDLOperation]:
    return _op_class(name, _BinaryArith, f"coop.{spirv_name[2:].lower()}", doc, KIND=kind,
                     SPIRV_NAME=spirv_name, KHR_ONLY=khr_only)


SNegateOp = _unary("SNegateOp", "int", "OpSNegate", "Element-wise two's-complement negation (`coop.snegate`).")
FNegateOp = _unary("FNegateOp", "float", "OpFNegate", "Element-wise float negation (`coop.fnegate`).")
IAddOp = _binary("IAddOp", "int", "OpIAdd", "Element-wise integer addition, wrapping (`coop.iadd`).")
FAddOp = _binary("FAddOp", "float", "OpFAdd", "Element-wise float addition (`coop.fadd`).")
ISubOp = _binary("ISubOp", "int", "OpISub", "Element-wise integer subtraction, wrapping (`coop.isub`).")
FSubOp = _binary("FSubOp", "float", "OpFSub", "Element-wise float subtraction (`coop.fsub`).")
IMulOp = _binary("IMulOp", "int", "OpIMul", "Element-wise integer multiplication, wrapping; KHR only (`coop.imul`).", True)
FMulOp = _binary("FMulOp", "float", "OpFMul", "Element-wise float multiplication; KHR only (`coop.fmul`).", True)
FDivOp = _binary("FDivOp", "float", "OpFDiv", "Element-wise float division (`coop.fdiv`).")
SDivOp = _binary("SDivOp", "int", "OpSDiv", "Element-wise signed division, rounding toward 0 (`coop.sdiv`).")
UDivOp = _binary("UDivOp", "int", "OpUDiv", "Element-wise unsigned division (`coop.udiv`).")


@irdl_op_definition
class MatrixTimesScalarOp(IRDLOperation):
    """Every component times a scalar (OpMatrixTimesScalar on a cooperative matrix).

    `%r = coop.matrix_times_scalar %m, %s : !M, f16 -> !M`
    """

    name = "coop.matrix_times_scalar"
    matrix = operand_def(MatrixType)
    scalar = operand_def()
    result = result_def(MatrixType)
    traits = traits_def(Pure())
    assembly_format = (
        "$matrix `,` $scalar attr-dict `:` type($matrix) `,` type($scalar) `->` type($result)"
    )

    def __init__(self, matrix: SSAValue, scalar: SSAValue):
        super().__init__(operands=[matrix, scalar], result_types=[matrix.type])

    def verify_(self) -> None:
        m = _matrix(self.matrix)
        if self.result.type != m:
            raise VerifyException("Result Type must be the type of Matrix (OpMatrixTimesScalar)")
        if not is_float(m.element_type):
            raise VerifyException(
                f"OpMatrixTimesScalar needs a floating-point Component Type, got {m.element_type}"
            )
        if self.scalar.type != m.element_type:
            raise VerifyException(
                f"Scalar must have the same type as the Component Type {m.element_type}, got "
                f"{self.scalar.type} (OpMatrixTimesScalar)"
            )


# --------------------------------------------------------------------------------------------
# Conversions
# --------------------------------------------------------------------------------------------


class _Conversion(IRDLOperation):
    SPIRV_NAME: ClassVar[str]
    FROM_KIND: ClassVar[str]
    TO_KIND: ClassVar[str]
    WIDTH_MUST_DIFFER: ClassVar[bool] = False
    operand = operand_def(MatrixType)
    result = result_def(MatrixType)
    traits = traits_def(Pure())
    assembly_format = "$operand attr-dict `:` type($operand) `->` type($result)"

    def __init__(self, operand: SSAValue, result_type: MatrixType):
        super().__init__(operands=[operand], result_types=[result_type])

    def verify_(self) -> None:
        src, dst = _matrix(self.operand), _matrix(self.result)
        inst = self.SPIRV_NAME
        if (src.scope_value, src.rows, src.columns) != (dst.scope_value, dst.rows, dst.columns):
            raise VerifyException(
                f"the result type and value type must have the same Scope, number of Rows and "
                f"number of Columns ({inst})"
            )
        if src.use_value != dst.use_value:
            raise VerifyException(f"the result type and value type must have the same Use ({inst})")
        for what, t, kind in (("value", src, self.FROM_KIND), ("result", dst, self.TO_KIND)):
            desc, pred = _ARITH_RULES[kind]
            if not pred(t.element_type):
                raise VerifyException(
                    f"{inst} needs a {what} Component Type that is {desc}, got {t.element_type}"
                )
        sw, dw = bit_width(src.element_type), bit_width(dst.element_type)
        if self.WIDTH_MUST_DIFFER and sw == dw:
            raise VerifyException(
                f"the component width of the value ({sw}) cannot equal the component width in "
                f"Result Type ({inst})"
            )
        if inst == "OpUConvert" and is_signed_type(dst.element_type):
            raise VerifyException("OpUConvert needs a Result Type with 0 Signedness")
        if inst == "OpBitcast" and sw != dw:
            raise VerifyException(
                "OpBitcast on cooperative matrices needs integer Component Types of the same Width"
            )


def _conversion(name: str, spirv_name: str, from_kind: str, to_kind: str, differ: bool, doc: str):
    op_name = {
        "OpConvertFToU": "convert_f_to_u", "OpConvertFToS": "convert_f_to_s",
        "OpConvertSToF": "convert_s_to_f", "OpConvertUToF": "convert_u_to_f",
        "OpUConvert": "u_convert", "OpSConvert": "s_convert", "OpFConvert": "f_convert",
        "OpBitcast": "bitcast",
    }[spirv_name]
    return _op_class(name, _Conversion, f"coop.{op_name}", doc, SPIRV_NAME=spirv_name,
                     FROM_KIND=from_kind, TO_KIND=to_kind, WIDTH_MUST_DIFFER=differ)


ConvertFToUOp = _conversion("ConvertFToUOp", "OpConvertFToU", "float", "int", False,
                            "Float to unsigned integer, rounding toward 0 (`coop.convert_f_to_u`).")
ConvertFToSOp = _conversion("ConvertFToSOp", "OpConvertFToS", "float", "int", False,
                            "Float to signed integer, rounding toward 0 (`coop.convert_f_to_s`).")
ConvertSToFOp = _conversion("ConvertSToFOp", "OpConvertSToF", "int", "float", False,
                            "Signed integer to float, round to nearest even (`coop.convert_s_to_f`).")
ConvertUToFOp = _conversion("ConvertUToFOp", "OpConvertUToF", "int", "float", False,
                            "Unsigned integer to float, round to nearest even (`coop.convert_u_to_f`).")
UConvertOp = _conversion("UConvertOp", "OpUConvert", "int", "int", True,
                         "Zero-extend or truncate integer components (`coop.u_convert`).")
SConvertOp = _conversion("SConvertOp", "OpSConvert", "int", "int", True,
                         "Sign-extend or truncate integer components (`coop.s_convert`).")
FConvertOp = _conversion("FConvertOp", "OpFConvert", "float", "float", True,
                         "Float width conversion, round to nearest even (`coop.f_convert`).")
BitcastOp = _conversion("BitcastOp", "OpBitcast", "int", "int", False,
                        "Reinterpret integer components of the same width (`coop.bitcast`; KHR).")


ELEMENTWISE_UNARY = (SNegateOp, FNegateOp)
ELEMENTWISE_BINARY = (IAddOp, FAddOp, ISubOp, FSubOp, IMulOp, FMulOp, FDivOp, SDivOp, UDivOp)
CONVERSIONS = (ConvertFToUOp, ConvertFToSOp, ConvertSToFOp, ConvertUToFOp, UConvertOp, SConvertOp,
               FConvertOp, BitcastOp)
