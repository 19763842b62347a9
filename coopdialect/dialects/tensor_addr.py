"""The `tensor_addr` dialect: tensor layouts and tensor views (SPV_NV_tensor_addressing, rev 1).

Types (spec 3.49.6):

* `!tensor_addr.layout<Dim, ClampMode>` — OpTypeTensorLayoutNV; Dim in [1, 5]; ClampMode one of
  `Undefined`, `Constant`, `ClampToEdge`, `Repeat`, `RepeatMirrored` (Tensor Clamp Mode).
* `!tensor_addr.view<Dim, HasDimensions, p0, ..., p<Dim-1>>` — OpTypeTensorViewNV; the p's form a
  permutation of [0, Dim) (left out: the identity).

Ops (spec 3.X Tensor Layout and View Instructions). Values are immutable structs: every op returns
a copy of its input with some state replaced. Operands are scalar 32-bit integers (`i32`, `si32`,
`ui32`); the custom syntax types them `i32` and the result as the input's type:

```
%l0 = tensor_addr.create_layout : !tensor_addr.layout<2, Constant>
%l1 = tensor_addr.layout_set_dimension %l0, %rows, %cols : !tensor_addr.layout<2, Constant>
%l2 = tensor_addr.layout_set_stride %l1, %s0, %s1 : !tensor_addr.layout<2, Constant>
%l3 = tensor_addr.layout_set_block_size %l2, %b0, %b1 : !tensor_addr.layout<2, Constant>
%l4 = tensor_addr.layout_slice %l3, %off0, %span0, %off1, %span1 : !tensor_addr.layout<2, Constant>
%l5 = tensor_addr.layout_set_clamp_value %l4, %bits : !tensor_addr.layout<2, Constant>
%v0 = tensor_addr.create_view : !tensor_addr.view<2, true, 1, 0>
%v1 = tensor_addr.view_set_dimension %v0, %d0, %d1 : !tensor_addr.view<2, true, 1, 0>
%v2 = tensor_addr.view_set_stride %v1, %s0, %s1 : !tensor_addr.view<2, true, 1, 0>
%v3 = tensor_addr.view_set_clip %v2, %ro, %rs, %co, %cs : !tensor_addr.view<2, true, 1, 0>
```

The slice operands are interleaved `Offset0, Span0, ..., Offset<Dim-1>, Span<Dim-1>` as in
OpTensorLayoutSliceNV. `constant_layout_state(value)` / `constant_view_state(value)` evaluate a
chain whose operands are all `arith.constant`s (used by verifiers and by fold-tensor-views).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, IntAttr, IntegerAttr, IntegerType
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
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
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from coopdialect.dialects.op_family import op_class

EXT = "SPV_NV_tensor_addressing"
MAX_DIM = 5
CLIP_SPAN_DEFAULT = 0xFFFFFFFF


class ClampMode(StrEnum):
    """Tensor Clamp Mode (SPV_NV_tensor_addressing 3.X)."""

    Undefined = "Undefined"
    Constant = "Constant"
    ClampToEdge = "ClampToEdge"
    Repeat = "Repeat"
    RepeatMirrored = "RepeatMirrored"


@irdl_attr_definition
class ClampModeAttr(EnumAttribute[ClampMode], SpacedOpaqueSyntaxAttribute):
    name = "tensor_addr.clamp_mode"


def _dim_error(dim: int) -> str | None:
    if not 1 <= dim <= MAX_DIM:
        return f"Dim must be greater than zero and less than or equal to {MAX_DIM}, got {dim}"
    return None


def _perm_error(dim: int, perm: Sequence[int]) -> str | None:
    if len(perm) != dim:
        return f"a tensor view of Dim {dim} needs {dim} permutation values p0..p{dim - 1}, got {len(perm)}"
    if sorted(perm) != list(range(dim)):
        return f"p0..p{dim - 1} must form a valid permutation of the range [0,{dim}), got {list(perm)}"
    return None


@irdl_attr_definition
class TensorLayoutType(ParametrizedAttribute, TypeAttribute):
    """`!tensor_addr.layout<Dim, ClampMode>` (OpTypeTensorLayoutNV)."""

    name = "tensor_addr.layout"
    dim: IntAttr
    clamp_mode: ClampModeAttr

    def __init__(self, dim: int, clamp_mode: ClampMode | str = ClampMode.Undefined):
        super().__init__(IntAttr(dim), ClampModeAttr(ClampMode(clamp_mode)))

    @property
    def rank(self) -> int:
        return self.dim.data

    @property
    def mode(self) -> ClampMode:
        return self.clamp_mode.data

    def verify(self) -> None:
        if (msg := _dim_error(self.dim.data)) is not None:
            raise VerifyException(msg + " (OpTypeTensorLayoutNV)")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            start = parser.pos
            dim = parser.parse_integer(allow_boolean=False)
            if (msg := _dim_error(dim)) is not None:
                parser.raise_error(msg + " (OpTypeTensorLayoutNV)", start, parser.pos)
            mode = ClampMode.Undefined
            if parser.parse_optional_punctuation(","):
                mode = parser.parse_str_enum(ClampMode)
        return (IntAttr(dim), ClampModeAttr(mode))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.rank}, {self.mode.value}>")


@irdl_attr_definition
class TensorViewType(ParametrizedAttribute, TypeAttribute):
    """`!tensor_addr.view<Dim, HasDimensions, p0, ..., p<Dim-1>>` (OpTypeTensorViewNV)."""

    name = "tensor_addr.view"
    dim: IntAttr
    has_dimensions: IntAttr
    permutation: ArrayAttr[IntAttr]

    def __init__(self, dim: int, has_dimensions: bool, permutation: Sequence[int] | None = None):
        perm = list(range(dim)) if permutation is None else list(permutation)
        super().__init__(IntAttr(dim), IntAttr(int(bool(has_dimensions))),
                         ArrayAttr([IntAttr(p) for p in perm]))

    @property
    def rank(self) -> int:
        return self.dim.data

    @property
    def has_dims(self) -> bool:
        return bool(self.has_dimensions.data)

    @property
    def perm(self) -> tuple[int, ...]:
        return tuple(p.data for p in self.permutation.data)

    def verify(self) -> None:
        if (msg := _dim_error(self.dim.data)) is not None:
            raise VerifyException(msg + " (OpTypeTensorViewNV)")
        if (msg := _perm_error(self.rank, self.perm)) is not None:
            raise VerifyException(msg + " (OpTypeTensorViewNV)")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            start = parser.pos
            dim = parser.parse_integer(allow_boolean=False)
            if (msg := _dim_error(dim)) is not None:
                parser.raise_error(msg + " (OpTypeTensorViewNV)", start, parser.pos)
            parser.parse_punctuation(",")
            has = parser.parse_boolean()
            perm: list[int] = []
            pstart = parser.pos
            while parser.parse_optional_punctuation(","):
                perm.append(parser.parse_integer(allow_boolean=False))
            if not perm:
                perm = list(range(dim))
            if (msg := _perm_error(dim, perm)) is not None:
                parser.raise_error(msg + " (OpTypeTensorViewNV)", pstart, parser.pos)
        return (IntAttr(dim), IntAttr(int(has)), ArrayAttr([IntAttr(p) for p in perm]))

    def print_parameters(self, printer: Printer) -> None:
        perm = ", ".join(str(p) for p in self.perm)
        printer.print_string(f"<{self.rank}, {'true' if self.has_dims else 'false'}, {perm}>")


# --------------------------------------------------------------------------------------------
# Ops
# --------------------------------------------------------------------------------------------


def is_i32(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 32


class _Create(IRDLOperation):
    """`%r = tensor_addr.create_* : !T`."""

    SPIRV_NAME: ClassVar[str]
    RESULT: ClassVar[type]
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, result_type: Attribute):
        super().__init__(result_types=[result_type])

    @classmethod
    def parse(cls, parser: Parser):
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls(parser.parse_type())
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        if not isinstance(self.result.type, self.RESULT):
            kind = "OpTypeTensorLayoutNV" if self.RESULT is TensorLayoutType else "OpTypeTensorViewNV"
            raise VerifyException(f"Result Type must be {kind} ({self.SPIRV_NAME})")


class _Set(IRDLOperation):
    """`%r = tensor_addr.<op> %in, %v0, ... : !T` — a copy of `%in` with some state replaced."""

    SPIRV_NAME: ClassVar[str]
    INPUT: ClassVar[str]  # "TensorLayout" or "TensorView"
    OPERANDS: ClassVar[str]  # operand name in the spec, e.g. "Dim"
    COUNT: ClassVar[str]  # "dim", "2dim", "1", "4"
    input = operand_def()
    values = var_operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, values: Sequence[SSAValue]):
        super().__init__(operands=[input, list(values)], result_types=[input.type])

    @classmethod
    def parse(cls, parser: Parser):
        src = parser.parse_unresolved_operand()
        names = []
        while parser.parse_optional_punctuation(","):
            names.append(parser.parse_unresolved_operand())
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        i32 = IntegerType(32)
        op = cls(parser.resolve_operand(src, t), [parser.resolve_operand(n, i32) for n in names])
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list([self.input, *self.values], printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def expected_count(self, rank: int) -> int:
        return {"dim": rank, "2dim": 2 * rank, "1": 1, "4": 4}[self.COUNT]

    def verify_(self) -> None:
        inst = self.SPIRV_NAME
        want = TensorLayoutType if self.INPUT == "TensorLayout" else TensorViewType
        rt = self.result.type
        if not isinstance(rt, want):
            raise VerifyException(
                f"Result Type must be {'OpTypeTensorLayoutNV' if want is TensorLayoutType else 'OpTypeTensorViewNV'} ({inst})"
            )
        if self.input.type != rt:
            raise VerifyException(
                f"The type of {self.INPUT} must be Result Type: {self.input.type} vs {rt} ({inst})"
            )
        n = self.expected_count(rt.rank)
        if len(self.values) != n:
            what = {"dim": f"The number of {self.OPERANDS} operands must match the dimension of "
                           f"Result Type ({rt.rank})",
                    "2dim": f"The number of Offset and Span operands must each match the "
                            f"dimension of Result Type ({rt.rank} pairs)",
                    "1": "exactly one Value operand is needed",
                    "4": "four Clip operands are needed (ClipRowOffset, ClipRowSpan, "
                         "ClipColOffset, ClipColSpan)"}[self.COUNT]
            raise VerifyException(f"{what}, got {len(self.values)} ({inst})")
        for i, v in enumerate(self.values):
            if not is_i32(v.type):
                raise VerifyException(
                    f"The {self.OPERANDS} operands must each be a scalar 32-bit integer type, "
                    f"operand {i} has type {v.type} ({inst})"
                )
        self.verify_rules()

    def verify_rules(self) -> None:
        """Op-specific rules on constant operands (overridden)."""


def _op(name: str, base: type, op_name: str, doc: str, **consts) -> type[IRDLOperation]:
    return op_class(name, base, op_name, doc, __name__, **consts)


CreateLayoutOp = _op(
    "CreateLayoutOp", _Create, "tensor_addr.create_layout",
    "A tensor layout with layoutDimension, stride, span and offset 0, blockSize 1, clampValue 0 "
    "(OpCreateTensorLayoutNV).", SPIRV_NAME="OpCreateTensorLayoutNV", RESULT=TensorLayoutType)
CreateViewOp = _op(
    "CreateViewOp", _Create, "tensor_addr.create_view",
    "A tensor view with viewDimension and viewStride 0, clip offsets 0 and clip spans 0xFFFFFFFF "
    "(OpCreateTensorViewNV).", SPIRV_NAME="OpCreateTensorViewNV", RESULT=TensorViewType)


class _StrideRuleBase(_Set):
    def verify_rules(self) -> None:
        consts = [const_u32(v) for v in self.values]
        state = constant_layout_state(self.input)
        if state is None or any(c is None for c in consts):
            return
        if (msg := stride_rule_error(self.name, state, consts)) is not None:  # type: ignore[arg-type]
            raise VerifyException(f"{msg} ({self.SPIRV_NAME})")


LayoutSetDimensionOp = _op(
    "LayoutSetDimensionOp", _Set, "tensor_addr.layout_set_dimension",
    "Copy with layoutDimension = span = Dim<i>, offset 0, stride[LDim-1] = 1 and stride[i] = "
    "stride[i+1] * ceiling(Dim<i+1> / blockSize[i+1]) (OpTensorLayoutSetDimensionNV).",
    SPIRV_NAME="OpTensorLayoutSetDimensionNV", INPUT="TensorLayout", OPERANDS="Dim", COUNT="dim")
LayoutSetStrideOp = _op(
    "LayoutSetStrideOp", _StrideRuleBase, "tensor_addr.layout_set_stride",
    "Copy with stride = Stride<i> (OpTensorLayoutSetStrideNV).",
    SPIRV_NAME="OpTensorLayoutSetStrideNV", INPUT="TensorLayout", OPERANDS="Stride", COUNT="dim")
LayoutSetBlockSizeOp = _op(
    "LayoutSetBlockSizeOp", _Set, "tensor_addr.layout_set_block_size",
    "Copy with blockSize = BlockSize<i>; strides then count blocks (OpTensorLayoutSetBlockSizeNV).",
    SPIRV_NAME="OpTensorLayoutSetBlockSizeNV", INPUT="TensorLayout", OPERANDS="BlockSize",
    COUNT="dim")
LayoutSliceOp = _op(
    "LayoutSliceOp", _StrideRuleBase, "tensor_addr.layout_slice",
    "Copy with offset[i] += Offset<i> and span[i] = Span<i>; operands interleaved Offset0, Span0, "
    "... (OpTensorLayoutSliceNV).",
    SPIRV_NAME="OpTensorLayoutSliceNV", INPUT="TensorLayout", OPERANDS="Offset and Span",
    COUNT="2dim")
LayoutSetClampValueOp = _op(
    "LayoutSetClampValueOp", _Set, "tensor_addr.layout_set_clamp_value",
    "Copy with clampValue = Value, the bit pattern Constant-mode loads return "
    "(OpTensorLayoutSetClampValueNV).",
    SPIRV_NAME="OpTensorLayoutSetClampValueNV", INPUT="TensorLayout", OPERANDS="Value", COUNT="1")
ViewSetDimensionOp = _op(
    "ViewSetDimensionOp", _Set, "tensor_addr.view_set_dimension",
    "Copy with viewDimension = Dim<i>, viewStride[VDim-1] = 1, viewStride[i] = product of Dim<i+1> "
    "to Dim<VDim-1> (OpTensorViewSetDimensionNV).",
    SPIRV_NAME="OpTensorViewSetDimensionNV", INPUT="TensorView", OPERANDS="Dim", COUNT="dim")
ViewSetStrideOp = _op(
    "ViewSetStrideOp", _Set, "tensor_addr.view_set_stride",
    "Copy with viewStride = Stride<i> (OpTensorViewSetStrideNV).",
    SPIRV_NAME="OpTensorViewSetStrideNV", INPUT="TensorView", OPERANDS="Stride", COUNT="dim")
ViewSetClipOp = _op(
    "ViewSetClipOp", _Set, "tensor_addr.view_set_clip",
    "Copy with clipRowOffset, clipRowSpan, clipColOffset, clipColSpan (OpTensorViewSetClipNV).",
    SPIRV_NAME="OpTensorViewSetClipNV", INPUT="TensorView", OPERANDS="Clip", COUNT="4")

LAYOUT_SET_OPS = (LayoutSetDimensionOp, LayoutSetStrideOp, LayoutSetBlockSizeOp, LayoutSliceOp,
                  LayoutSetClampValueOp)
VIEW_SET_OPS = (ViewSetDimensionOp, ViewSetStrideOp, ViewSetClipOp)


# --------------------------------------------------------------------------------------------
# Logical state (spec 3.X Tensor Layout and View) and its constant evaluation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayoutState:
    """`tensorLayoutNV` state: tuples of Dim uint32 (offset int32), clampValue uint32."""

    block_size: tuple[int, ...]
    dimension: tuple[int, ...]
    stride: tuple[int, ...]
    offset: tuple[int, ...]
    span: tuple[int, ...]
    clamp_value: int

    @staticmethod
    def create(dim: int) -> LayoutState:
        z = (0,) * dim
        return LayoutState((1,) * dim, z, z, z, z, 0)


@dataclass(frozen=True)
class ViewState:
    """`tensorViewNV` state: viewDimension, viewStride (uint32) and the four clip values."""

    dimension: tuple[int, ...]
    stride: tuple[int, ...]
    clip: tuple[int, int, int, int]  # rowOffset, rowSpan, colOffset, colSpan

    @staticmethod
    def create(dim: int) -> ViewState:
        z = (0,) * dim
        return ViewState(z, z, (0, CLIP_SPAN_DEFAULT, 0, CLIP_SPAN_DEFAULT))


def u32(v: int) -> int:
    return int(v) & 0xFFFFFFFF


def s32(v: int) -> int:
    v = u32(v)
    return v - (1 << 32) if v >> 31 else v


def apply_layout(op_name: str, s: LayoutState, vals: Sequence[int]) -> LayoutState:
    """One layout op applied to state `s` with operand values `vals` (Python ints, any sign)."""
    dim = len(s.dimension)
    if op_name == LayoutSetDimensionOp.name:
        d = tuple(u32(v) for v in vals)
        stride = [0] * dim
        stride[dim - 1] = 1
        for i in range(dim - 2, -1, -1):
            bs = s.block_size[i + 1]
            if bs == 0:
                raise ZeroDivisionError(f"blockSize[{i + 1}] is 0 in OpTensorLayoutSetDimensionNV")
            stride[i] = u32(stride[i + 1] * -(-d[i + 1] // bs))
        return replace(s, dimension=d, span=d, offset=(0,) * dim, stride=tuple(stride))
    if op_name == LayoutSetStrideOp.name:
        return replace(s, stride=tuple(u32(v) for v in vals))
    if op_name == LayoutSetBlockSizeOp.name:
        return replace(s, block_size=tuple(u32(v) for v in vals))
    if op_name == LayoutSliceOp.name:
        offs = tuple(s32(s.offset[i] + s32(vals[2 * i])) for i in range(dim))
        spans = tuple(u32(vals[2 * i + 1]) for i in range(dim))
        return replace(s, offset=offs, span=spans)
    if op_name == LayoutSetClampValueOp.name:
        return replace(s, clamp_value=u32(vals[0]))
    raise KeyError(op_name)


def apply_view(op_name: str, s: ViewState, vals: Sequence[int]) -> ViewState:
    """One view op applied to state `s` with operand values `vals`."""
    dim = len(s.dimension)
    if op_name == ViewSetDimensionOp.name:
        d = tuple(u32(v) for v in vals)
        stride = [0] * dim
        stride[dim - 1] = 1
        for i in range(dim - 2, -1, -1):
            stride[i] = u32(stride[i + 1] * d[i + 1])
        return replace(s, dimension=d, stride=tuple(stride))
    if op_name == ViewSetStrideOp.name:
        return replace(s, stride=tuple(u32(v) for v in vals))
    if op_name == ViewSetClipOp.name:
        return replace(s, clip=tuple(u32(v) for v in vals))  # type: ignore[arg-type]
    raise KeyError(op_name)


def stride_rule_error(op_name: str, s: LayoutState, vals: Sequence[int]) -> str | None:
    """The stride ordering rule of OpTensorLayoutSetStrideNV / OpTensorLayoutSliceNV on input
    state `s` and operand values `vals`, as a message, or None when it holds.

    SetStride: Stride<i> >= Stride<i+1> * ceiling(layoutDimension[i+1] / blockSize[i+1]). Slice:
    the text says "Stride<i> must be at least Stride<i+1> times layoutDimension[i+1]" but the
    instruction has no Stride operands, so the rule reads on the layout's strides; it is checked
    with blocks counted as SetStride does (identical when every blockSize is 1), so the strides
    that OpTensorLayoutSetDimensionNV sets always satisfy it."""
    if op_name == LayoutSetStrideOp.name:
        strides, rule = [u32(v) for v in vals], ("Stride<i> must be at least Stride<i+1> * "
                                                 "ceiling(layoutDimension[i+1] / blockSize[i+1])")
    elif op_name == LayoutSliceOp.name:
        strides, rule = list(s.stride), ("Stride<i> must be at least Stride<i+1> times "
                                         "layoutDimension[i+1] (in blocks)")
    else:
        return None
    for i in range(len(strides) - 1):
        bs = s.block_size[i + 1]
        if bs == 0:
            continue
        need = strides[i + 1] * -(-s.dimension[i + 1] // bs)
        if strides[i] < need:
            return (f"{rule}: stride[{i}] = {strides[i]} is less than stride[{i + 1}] * "
                    f"ceiling({s.dimension[i + 1]} / {bs}) = {need}")
    return None


def const_u32(v: SSAValue) -> int | None:
    """The value of an `arith.constant` integer operand, else None."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def constant_layout_state(v: SSAValue, _depth: int = 0) -> LayoutState | None:
    """The state of layout value `v` when its whole chain back to create_layout is constant."""
    owner = v.owner
    if isinstance(owner, LayoutConstantOp):
        return owner.state
    if isinstance(owner, CreateLayoutOp):
        t = owner.result.type
        return LayoutState.create(t.rank) if isinstance(t, TensorLayoutType) else None
    if not isinstance(owner, LAYOUT_SET_OPS) or _depth > 10000:
        return None
    vals = [const_u32(x) for x in owner.values]
    if any(x is None for x in vals):
        return None
    base = constant_layout_state(owner.input, _depth + 1)
    if base is None or not isinstance(owner.input.type, TensorLayoutType):
        return None
    if len(vals) != _Set.expected_count(owner, owner.input.type.rank):
        return None
    try:
        return apply_layout(owner.name, base, vals)  # type: ignore[arg-type]
    except ZeroDivisionError:
        return None


def constant_view_state(v: SSAValue) -> ViewState | None:
    """The state of view value `v` when its whole chain back to create_view is constant."""
    owner = v.owner
    if isinstance(owner, ViewConstantOp):
        return owner.state
    if isinstance(owner, CreateViewOp):
        t = owner.result.type
        return ViewState.create(t.rank) if isinstance(t, TensorViewType) else None
    if not isinstance(owner, VIEW_SET_OPS):
        return None
    vals = [const_u32(x) for x in owner.values]
    if any(x is None for x in vals):
        return None
    base = constant_view_state(owner.input)
    if base is None or not isinstance(owner.input.type, TensorViewType):
        return None
    if len(vals) != _Set.expected_count(owner, owner.input.type.rank):
        return None
    return apply_view(owner.name, base, vals)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Constant values (what fold-tensor-views turns a fully-constant chain into)
# --------------------------------------------------------------------------------------------

_LAYOUT_FIELDS = ("block_size", "dimension", "stride", "offset", "span")
_VIEW_FIELDS = ("dimension", "stride", "clip")


class _ConstantBase(IRDLOperation):
    """`%r = tensor_addr.<x>_constant field [v, ...] ... : !T` — a whole state as one op.

    Not a SPIR-V instruction: convert-coop-to-spirv expands it into the shortest chain of
    OpCreate*/OpTensor*Set* instructions that builds the same state (`layout_chain`/`view_chain`).
    """

    FIELDS: ClassVar[tuple[str, ...]]
    SCALARS: ClassVar[tuple[str, ...]] = ()
    result = result_def()
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        props: dict[str, Attribute] = {}
        for f in cls.FIELDS:
            start = parser.pos
            if parser.parse_identifier() != f:
                parser.raise_error(f"expected `{f}`", start, parser.pos)
            vals = parser.parse_comma_separated_list(parser.Delimiter.SQUARE,
                                                     lambda: parser.parse_integer(allow_boolean=False))
            props[f] = ArrayAttr([IntAttr(v) for v in vals])
        for f in cls.SCALARS:
            start = parser.pos
            if parser.parse_identifier() != f:
                parser.raise_error(f"expected `{f}`", start, parser.pos)
            props[f] = IntAttr(parser.parse_integer(allow_boolean=False))
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls.build(result_types=[parser.parse_type()], properties=props)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        for f in self.FIELDS:
            vals = ", ".join(str(v.data) for v in self.properties[f].data)
            printer.print_string(f" {f} [{vals}]")
        for f in self.SCALARS:
            printer.print_string(f" {f} {self.properties[f].data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def _ints(self, f: str) -> tuple[int, ...]:
        return tuple(v.data for v in self.properties[f].data)


@irdl_op_definition
class LayoutConstantOp(_ConstantBase):
    """A tensor layout with the given state (uint32 values; offset int32)."""

    name = "tensor_addr.layout_constant"
    FIELDS: ClassVar[tuple[str, ...]] = _LAYOUT_FIELDS
    SCALARS: ClassVar[tuple[str, ...]] = ("clamp_value",)
    block_size = prop_def(ArrayAttr[IntAttr])
    dimension = prop_def(ArrayAttr[IntAttr])
    stride = prop_def(ArrayAttr[IntAttr])
    offset = prop_def(ArrayAttr[IntAttr])
    span = prop_def(ArrayAttr[IntAttr])
    clamp_value = prop_def(IntAttr)

    @staticmethod
    def from_state(state: LayoutState, t: TensorLayoutType) -> LayoutConstantOp:
        props = {f: ArrayAttr([IntAttr(v) for v in getattr(state, f)]) for f in _LAYOUT_FIELDS}
        props["clamp_value"] = IntAttr(state.clamp_value)
        return LayoutConstantOp.build(result_types=[t], properties=props)

    @property
    def state(self) -> LayoutState:
        return LayoutState(*(self._ints(f) for f in _LAYOUT_FIELDS), self.clamp_value.data)

    def verify_(self) -> None:
        t = self.result.type
        if not isinstance(t, TensorLayoutType):
            raise VerifyException("Result Type must be OpTypeTensorLayoutNV")
        for f in _LAYOUT_FIELDS:
            vals = self._ints(f)
            if len(vals) != t.rank:
                raise VerifyException(f"{f} needs {t.rank} values (the layout's Dim), got {len(vals)}")
            lo, hi = (-(2**31), 2**31 - 1) if f == "offset" else (0, U32_MAX)
            if any(not lo <= v <= hi for v in vals):
                raise VerifyException(f"{f} values must be {'int32' if f == 'offset' else 'uint32'}")
        if not 0 <= self.clamp_value.data <= U32_MAX:
            raise VerifyException("clamp_value must be a uint32")


@irdl_op_definition
class ViewConstantOp(_ConstantBase):
    """A tensor view with the given state (uint32 values; clip = rowOffset, rowSpan, colOffset,
    colSpan)."""

    name = "tensor_addr.view_constant"
    FIELDS: ClassVar[tuple[str, ...]] = _VIEW_FIELDS
    dimension = prop_def(ArrayAttr[IntAttr])
    stride = prop_def(ArrayAttr[IntAttr])
    clip = prop_def(ArrayAttr[IntAttr])

    @staticmethod
    def from_state(state: ViewState, t: TensorViewType) -> ViewConstantOp:
        props = {f: ArrayAttr([IntAttr(v) for v in getattr(state, f)]) for f in _VIEW_FIELDS}
        return ViewConstantOp.build(result_types=[t], properties=props)

    @property
    def state(self) -> ViewState:
        return ViewState(self._ints("dimension"), self._ints("stride"), self._ints("clip"))  # type: ignore[arg-type]

    def verify_(self) -> None:
        t = self.result.type
        if not isinstance(t, TensorViewType):
            raise VerifyException("Result Type must be OpTypeTensorViewNV")
        for f, n in (("dimension", t.rank), ("stride", t.rank), ("clip", 4)):
            vals = self._ints(f)
            if len(vals) != n:
                raise VerifyException(f"{f} needs {n} values, got {len(vals)}")
            if any(not 0 <= v <= U32_MAX for v in vals):
                raise VerifyException(f"{f} values must be uint32")


U32_MAX = 0xFFFFFFFF


def layout_chain(state: LayoutState) -> list[tuple[str, tuple[int, ...]]]:
    """The shortest sequence of set ops (name, operand values) that builds `state` from
    create_layout: block size, dimension, stride, slice, clamp value — each only when needed."""
    dim = len(state.dimension)
    s = LayoutState.create(dim)
    out: list[tuple[str, tuple[int, ...]]] = []

    def step(name: str, vals: tuple[int, ...]) -> None:
        nonlocal s
        s = apply_layout(name, s, vals)
        out.append((name, vals))

    if state.block_size != s.block_size:
        step(LayoutSetBlockSizeOp.name, state.block_size)
    if state.dimension != s.dimension:
        step(LayoutSetDimensionOp.name, state.dimension)
    if state.stride != s.stride:
        step(LayoutSetStrideOp.name, state.stride)
    if state.offset != s.offset or state.span != s.span:
        pairs = tuple(v for i in range(dim)
                      for v in (s32(state.offset[i] - s.offset[i]), state.span[i]))
        step(LayoutSliceOp.name, pairs)
    if state.clamp_value != s.clamp_value:
        step(LayoutSetClampValueOp.name, (state.clamp_value,))
    assert s == state, (s, state)
    return out


def view_chain(state: ViewState) -> list[tuple[str, tuple[int, ...]]]:
    """The shortest sequence of view set ops that builds `state` from create_view."""
    s = ViewState.create(len(state.dimension))
    out: list[tuple[str, tuple[int, ...]]] = []
    if state.dimension != s.dimension:
        s = apply_view(ViewSetDimensionOp.name, s, state.dimension)
        out.append((ViewSetDimensionOp.name, state.dimension))
    if state.stride != s.stride:
        s = apply_view(ViewSetStrideOp.name, s, state.stride)
        out.append((ViewSetStrideOp.name, state.stride))
    if state.clip != s.clip:
        s = apply_view(ViewSetClipOp.name, s, state.clip)
        out.append((ViewSetClipOp.name, state.clip))
    assert s == state
    return out


TensorAddr = Dialect(
    "tensor_addr",
    [CreateLayoutOp, *LAYOUT_SET_OPS, CreateViewOp, *VIEW_SET_OPS, LayoutConstantOp,
     ViewConstantOp],
    [ClampModeAttr, TensorLayoutType, TensorViewType],
)
