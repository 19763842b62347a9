"""The types of the `spirv` dialect (OpTypeVoid/Pointer/RuntimeArray/Array/Struct and the
cooperative-matrix types), the enum-operand strings of its ops (`"Aligned(16)|Nontemporal"`), and
the Vulkan buffer layout rules of Block structs (Vulkan spec "Offset and Stride Assignment").
Below `spirv.py` (the ops) and `spirv_rules.py` (the extensions' rules), which use them.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import AnyFloat, ArrayAttr, IntAttr, IntegerType, StringAttr, VectorType
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from coopdialect.spirv.grammar_tables import ENUMS

# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------


def _check_enumerant(kind: str, name: str) -> None:
    if name not in ENUMS[kind]:
        raise VerifyException(f"'{name}' is not a SPIR-V {kind} enumerant")


def _parse_enum_name(parser: AttrParser, kind: str) -> str:
    pos = parser.pos
    name = parser.parse_identifier()
    if name not in ENUMS[kind]:
        parser.raise_error(f"'{name}' is not a SPIR-V {kind} enumerant", pos, parser.pos)
    return name


@irdl_attr_definition
class VoidType(ParametrizedAttribute, TypeAttribute):
    """`!spirv.void` (OpTypeVoid), the return type of a function returning nothing."""

    name = "spirv.void"


@irdl_attr_definition
class PointerType(ParametrizedAttribute, TypeAttribute):
    """`!spirv.ptr<T, StorageBuffer>` (OpTypePointer); the storage class is a grammar name."""

    name = "spirv.ptr"
    pointee: Attribute
    storage_class: StringAttr

    def __init__(self, pointee: Attribute, storage_class: str | StringAttr):
        if isinstance(storage_class, str):
            storage_class = StringAttr(storage_class)
        super().__init__(pointee, storage_class)

    def verify(self) -> None:
        _check_enumerant("StorageClass", self.storage_class.data)
        if self.storage_class.data == "PhysicalStorageBuffer" and isinstance(self.pointee, StructType) \
                and self.pointee.block.data:
            check_block_layout(self.pointee, "PhysicalStorageBuffer", "pointee")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            pointee = parser.parse_type()
            parser.parse_punctuation(",")
            sc = _parse_enum_name(parser, "StorageClass")
        return (pointee, StringAttr(sc))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.pointee)
            printer.print_string(f", {self.storage_class.data}")


def _parse_stride(parser: AttrParser) -> int:
    if parser.parse_optional_punctuation(","):
        parser.parse_keyword("stride")
        parser.parse_punctuation("=")
        return parser.parse_integer(allow_negative=False)
    return 0


@irdl_attr_definition
class RuntimeArrayType(ParametrizedAttribute, TypeAttribute):
    """`!spirv.rtarray<T, stride=4>` (OpTypeRuntimeArray); stride (bytes) 0 means no ArrayStride."""

    name = "spirv.rtarray"
    element_type: Attribute
    stride: IntAttr

    def __init__(self, element_type: Attribute, stride: int = 0):
        super().__init__(element_type, IntAttr(stride))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            elem = parser.parse_type()
            stride = _parse_stride(parser)
        return (elem, IntAttr(stride))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element_type)
            if self.stride.data:
                printer.print_string(f", stride={self.stride.data}")


@irdl_attr_definition
class ArrayType(ParametrizedAttribute, TypeAttribute):
    """`!spirv.array<N x T, stride=4>` (OpTypeArray); the length becomes an i32 OpConstant."""

    name = "spirv.array"
    length: IntAttr
    element_type: Attribute
    stride: IntAttr

    def __init__(self, length: int, element_type: Attribute, stride: int = 0):
        super().__init__(IntAttr(length), element_type, IntAttr(stride))

    def verify(self) -> None:
        if self.length.data < 1:
            raise VerifyException("spirv.array length must be at least 1")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            n = parser.parse_integer(allow_negative=False)
            parser.parse_keyword("x")
            elem = parser.parse_type()
            stride = _parse_stride(parser)
        return (IntAttr(n), elem, IntAttr(stride))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.length.data} x ")
            printer.print_attribute(self.element_type)
            if self.stride.data:
                printer.print_string(f", stride={self.stride.data}")


@irdl_attr_definition
class StructType(ParametrizedAttribute, TypeAttribute):
    """`!spirv.struct<(T [0], U [16] "NonWritable"), Block>` (OpTypeStruct) with member Offsets
    (bytes, -1 = none), an optional Block decoration, and per member further decorations without
    <id> parameters (`"NonWritable|NonReadable"`, "" = none; e.g. glslang's readonly buffers)."""

    name = "spirv.struct"
    members: ArrayAttr[Attribute]
    offsets: ArrayAttr[IntAttr]
    block: IntAttr
    member_decorations: ArrayAttr[StringAttr]

    def __init__(self, members: Sequence[Attribute], offsets: Sequence[int] | None = None, block: bool = False,
                 member_decorations: Sequence[str] | None = None):
        offsets = [-1] * len(members) if offsets is None else list(offsets)
        decos = [""] * len(members) if member_decorations is None else list(member_decorations)
        super().__init__(ArrayAttr(members), ArrayAttr(IntAttr(o) for o in offsets), IntAttr(int(block)),
                         ArrayAttr(StringAttr(d) for d in decos))

    def verify(self) -> None:
        if len(self.members) != len(self.offsets):
            raise VerifyException("spirv.struct needs one offset per member")
        if len(self.members) != len(self.member_decorations):
            raise VerifyException("spirv.struct needs one decoration string per member")
        if not self.block.data and any(isinstance(m, RuntimeArrayType) for m in self.members):
            raise VerifyException("a struct containing a runtime array must be decorated Block "
                                  "(VUID-StandaloneSpirv-OpTypeRuntimeArray-04680)")
        for d in self.member_decorations:
            if d.data:
                names = [n for n, _ in parse_enum_operand("Decoration", d.data)]
                if len(set(names)) != len(names):
                    raise VerifyException("a decoration may be applied to a struct member only once")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        members: list[Attribute] = []
        offsets: list[int] = []
        decos: list[str] = []

        def member() -> None:
            members.append(parser.parse_type())
            if parser.parse_optional_punctuation("["):
                offsets.append(parser.parse_integer(allow_negative=False))
                parser.parse_punctuation("]")
            else:
                offsets.append(-1)
            decos.append(parser.parse_optional_str_literal() or "")

        with parser.in_angle_brackets():
            parser.parse_punctuation("(")
            if not parser.parse_optional_punctuation(")"):
                member()
                while parser.parse_optional_punctuation(","):
                    member()
                parser.parse_punctuation(")")
            block = False
            if parser.parse_optional_punctuation(","):
                parser.parse_keyword("Block")
                block = True
        return (ArrayAttr(members), ArrayAttr(IntAttr(o) for o in offsets), IntAttr(int(block)),
                ArrayAttr(StringAttr(d) for d in decos))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("(")
            for i, (m, o, d) in enumerate(zip(self.members, self.offsets, self.member_decorations)):
                if i:
                    printer.print_string(", ")
                printer.print_attribute(m)
                if o.data >= 0:
                    printer.print_string(f" [{o.data}]")
                if d.data:
                    printer.print_string(f' "{d.data}"')
            printer.print_string(")")
            if self.block.data:
                printer.print_string(", Block")


_USE_SHORT = {"MatrixAKHR": "MatrixA", "MatrixBKHR": "MatrixB", "MatrixAccumulatorKHR": "MatrixAcc"}
_USE_LONG = {v: k for k, v in _USE_SHORT.items()}


def _parse_matrix_shape(parser: AttrParser) -> tuple[int, int, Attribute]:
    pos = parser.pos
    shape, elem = parser.parse_ranked_shape()
    if len(shape) != 2 or min(shape) < 1:
        parser.raise_error("cooperative matrix shape must be RxC", pos, parser.pos)
    return shape[0], shape[1], elem


@irdl_attr_definition
class CooperativeMatrixType(ParametrizedAttribute, TypeAttribute):
    """`!spirv.coopmatrix<16x16xf16, Subgroup, MatrixA>` (OpTypeCooperativeMatrixKHR).

    `use` holds the grammar enumerant (MatrixAKHR, MatrixBKHR, MatrixAccumulatorKHR); the text form
    is MatrixA / MatrixB / MatrixAcc as in MLIR. Scope, rows, columns and use become i32 constants.
    """

    name = "spirv.coopmatrix"
    rows: IntAttr
    columns: IntAttr
    element_type: Attribute
    scope: StringAttr
    use: StringAttr

    def __init__(self, rows: int, columns: int, element_type: Attribute, scope: str, use: str):
        use = _USE_LONG.get(use, use)
        super().__init__(IntAttr(rows), IntAttr(columns), element_type, StringAttr(scope), StringAttr(use))

    def verify(self) -> None:
        _check_enumerant("Scope", self.scope.data)
        _check_enumerant("CooperativeMatrixUse", self.use.data)
        _check_component(self.element_type, "OpTypeCooperativeMatrixKHR")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            r, c, elem = _parse_matrix_shape(parser)
            parser.parse_punctuation(",")
            scope = _parse_enum_name(parser, "Scope")
            parser.parse_punctuation(",")
            pos = parser.pos
            use = parser.parse_identifier()
            use = _USE_LONG.get(use, use)
            if use not in ENUMS["CooperativeMatrixUse"]:
                parser.raise_error("expected MatrixA, MatrixB or MatrixAcc", pos, parser.pos)
        return (IntAttr(r), IntAttr(c), elem, StringAttr(scope), StringAttr(use))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.rows.data}x{self.columns.data}x")
            printer.print_attribute(self.element_type)
            printer.print_string(f", {self.scope.data}, {_USE_SHORT.get(self.use.data, self.use.data)}")


@irdl_attr_definition
class NVCooperativeMatrixType(ParametrizedAttribute, TypeAttribute):
    """`!spirv.NV.coopmatrix<16x16xf16, Subgroup>` (OpTypeCooperativeMatrixNV)."""

    name = "spirv.NV.coopmatrix"
    rows: IntAttr
    columns: IntAttr
    element_type: Attribute
    scope: StringAttr

    def __init__(self, rows: int, columns: int, element_type: Attribute, scope: str):
        super().__init__(IntAttr(rows), IntAttr(columns), element_type, StringAttr(scope))

    def verify(self) -> None:
        _check_enumerant("Scope", self.scope.data)
        _check_component(self.element_type, "OpTypeCooperativeMatrixNV")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            r, c, elem = _parse_matrix_shape(parser)
            parser.parse_punctuation(",")
            scope = _parse_enum_name(parser, "Scope")
        return (IntAttr(r), IntAttr(c), elem, StringAttr(scope))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.rows.data}x{self.columns.data}x")
            printer.print_attribute(self.element_type)
            printer.print_string(f", {self.scope.data}")


COOP_MATRIX_TYPES = (CooperativeMatrixType, NVCooperativeMatrixType)


def _check_component(t: Attribute, inst: str) -> None:
    if not (isinstance(t, IntegerType) and t.width.data != 1) and not isinstance(t, AnyFloat):
        raise VerifyException(f"{inst}: Component Type must be a scalar numerical type, got {t}")

# ---------------------------------------------------------------------------------------------
# Enum operand strings: "Name|Name(param)" <-> [(name, [params])]
# ---------------------------------------------------------------------------------------------


# Parameter kinds an enum property may carry: literals, and a Scope <id> (MakePointerAvailable /
# MakePointerVisible of MemoryAccess), written as the Scope's name ("Workgroup"): the writer
# emits the constant, the reader reads it back from the constant the <id> names.
PARAM_KINDS = ("LiteralInteger", "IdScope")


def _param(p: str) -> int:
    return ENUMS["Scope"][p][0] if p in ENUMS["Scope"] else int(p, 0)


def parse_enum_operand(kind: str, text: str) -> list[tuple[str, list[int]]]:
    """Split an enum property (`"Aligned(16)|Nontemporal"`,
    `"MakePointerAvailable(Workgroup)|NonPrivatePointer"`) into (enumerant, params): literals,
    and Scope values for IdScope parameters.

    Raises VerifyException for a name that is not an enumerant of `kind` or a wrong parameter count.
    """
    out: list[tuple[str, list[int]]] = []
    for part in text.split("|"):
        part = part.strip()
        params: list[int] = []
        if "(" in part:
            if not part.endswith(")"):
                raise VerifyException(f"malformed {kind} operand '{text}'")
            part, _, rest = part.partition("(")
            try:
                params = [_param(p.strip()) for p in rest[:-1].split(",") if p.strip()]
            except (ValueError, KeyError):
                raise VerifyException(f"malformed {kind} operand '{text}'") from None
        if part not in ENUMS[kind]:
            raise VerifyException(f"'{part}' is not a SPIR-V {kind} enumerant")
        expected = ENUMS[kind][part][3]
        if len(expected) != len(params) or any(k not in PARAM_KINDS for k, _ in expected):
            raise VerifyException(f"{kind} '{part}' takes {len(expected)} parameter(s) of kinds "
                                  f"{[k for k, _ in expected]}; only literal and scope "
                                  "parameters are supported")
        out.append((part, params))
    return out


def format_enum_operand(items: Sequence[tuple[str, Sequence[int]]]) -> str:
    """Inverse of `parse_enum_operand`."""
    return "|".join(name + (f"({', '.join(map(str, ps))})" if ps else "") for name, ps in items)

def _fail(msg: str, inst: str) -> VerifyException:
    return VerifyException(f"{msg} ({inst})")


# -- Vulkan buffer layout (Vulkan spec "Offset and Stride Assignment"; relaxed block layout, core
#    in Vulkan 1.1, which spirv-val checks for --target-env vulkan1.3) ---------------------------

def _size_align(t) -> tuple[int | None, int]:
    """(size in bytes or None for a runtime array, base alignment in bytes) of an explicitly laid out type."""
    if isinstance(t, IntegerType):
        n = max(1, t.width.data // 8)
        return n, n
    if isinstance(t, AnyFloat):
        n = t.bitwidth // 8
        return n, n
    if isinstance(t, VectorType):
        n, a = _size_align(t.element_type)
        return n * t.get_shape()[0], a  # relaxed layout: a vector aligns to its component
    if isinstance(t, PointerType):  # a PhysicalStorageBuffer pointer (64-bit)
        return 8, 8
    if isinstance(t, ArrayType | RuntimeArrayType):
        _, a = _size_align(t.element_type)
        n = None if isinstance(t, RuntimeArrayType) else t.stride.data * t.length.data
        return n, a
    if isinstance(t, StructType):
        align, end = 1, 0
        for m, off in zip(t.members, t.offsets):
            size, a = _size_align(m)
            align = max(align, a)
            end = max(end, off.data + (size or 0))
        return end, align
    raise VerifyException(f"type {t} has no explicit layout")


def check_block_layout(struct, storage_class: str, where: str) -> None:
    """A Block struct in StorageBuffer / Uniform / PushConstant / PhysicalStorageBuffer storage:
    every member has an Offset aligned to its base alignment, members do not overlap and are in
    increasing order, only the last member may be a runtime array, every array has an ArrayStride
    that is a multiple of its element's alignment and at least the element's size (recursively)."""
    inst = f"{storage_class} {where}"
    end = 0
    n = len(struct.members)
    for i, (m, off) in enumerate(zip(struct.members, struct.offsets)):
        o = off.data
        if o < 0:
            raise _fail(f"member {i} of a Block struct needs an Offset decoration (Vulkan layout)", inst)
        size, align = _size_align(m)
        if o % align:
            raise _fail(f"member {i} at Offset {o} is not aligned to {align} bytes (Vulkan layout)", inst)
        if o < end:
            raise _fail(f"member {i} at Offset {o} overlaps the previous member (Vulkan layout)", inst)
        if isinstance(m, RuntimeArrayType) and i != n - 1:
            raise _fail("only the last member of a Block struct may be a runtime array", inst)
        _check_array_strides(m, inst)
        if isinstance(m, StructType):
            check_block_layout(m, storage_class, where)
        end = o + (size or 0)


def _check_array_strides(t, inst: str) -> None:
    if isinstance(t, ArrayType | RuntimeArrayType):
        size, align = _size_align(t.element_type)
        s = t.stride.data
        if s <= 0 or s % align or (size is not None and s < size):
            raise _fail(f"an array of {t.element_type} needs an ArrayStride that is a positive multiple of "
                        f"{align} and at least {size} bytes, got {s} (Vulkan layout)", inst)
        _check_array_strides(t.element_type, inst)
    elif isinstance(t, StructType):
        for m in t.members:
            _check_array_strides(m, inst)
