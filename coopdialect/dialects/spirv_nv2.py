"""SPIR-V ops and types of SPV_NV_tensor_addressing and SPV_NV_cooperative_matrix2, part of the
`spirv` dialect (registered by `coopdialect.dialects.spirv`).

Types (their operands are `<id>`s of constants in the binary, literals here):

* `!spirv.NV.tensor_layout<Dim, ClampMode>`: OpTypeTensorLayoutNV; ClampMode a TensorClampMode
  enumerant name. Dim and ClampMode become 32-bit integer constants.
* `!spirv.NV.tensor_view<Dim, HasDimensions, p0, ..., p<Dim-1>>`: OpTypeTensorViewNV;
  HasDimensions becomes a boolean constant, p<i> 32-bit integer constants.

Instructions: OpCreateTensorLayoutNV / OpCreateTensorViewNV and the eight OpTensor{Layout,View}Set*
/ Slice instructions (`spirv.NV.TensorLayoutSetDimension %l, %d0, %d1 : ...`), and the
cooperative-matrix-2 instructions OpCooperativeMatrixLoadTensorNV / StoreTensorNV (Memory Operand
and Tensor Addressing Operands: TensorView `<id>`, DecodeFunc function), ReduceNV, ConvertNV,
TransposeNV, PerElementOpNV. Function operands (CombineFunc, Func, DecodeFunc) are symbol
references to `spirv.func`s; the writer encodes them as the function's result id.

Tensor Addressing Operands' parameters are `<id>`s, which the generic enum encoding (literal
parameters only) cannot express: `coopdialect.spirv.tensor_operands` (the codec) encodes and
decodes the operand words of the two tensor memory ops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from coopdialect.dialects import spirv_rules
from coopdialect.dialects.op_family import op_class
from coopdialect.dialects.spirv import SpirvInstruction
from coopdialect.dialects.spirv_types import (
    CooperativeMatrixType,
    PointerType,
    _check_enumerant,
    _parse_enum_name,
    parse_enum_operand,
)

MAX_DIM = 5

# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------


def _check_dim(dim: int, what: str) -> None:
    if not 1 <= dim <= MAX_DIM:
        raise VerifyException(f"{what} Dim must be in [1, {MAX_DIM}], got {dim}")


@irdl_attr_definition
class TensorLayoutType(ParametrizedAttribute, TypeAttribute):
    """`!spirv.NV.tensor_layout<2, ClampToEdge>` (OpTypeTensorLayoutNV)."""

    name = "spirv.NV.tensor_layout"
    dim: IntAttr
    clamp_mode: StringAttr

    def __init__(self, dim: int, clamp_mode: str):
        super().__init__(IntAttr(dim), StringAttr(clamp_mode))

    def verify(self) -> None:
        _check_dim(self.dim.data, "OpTypeTensorLayoutNV")
        _check_enumerant("TensorClampMode", self.clamp_mode.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dim = parser.parse_integer(allow_negative=False, allow_boolean=False)
            parser.parse_punctuation(",")
            mode = _parse_enum_name(parser, "TensorClampMode")
        return (IntAttr(dim), StringAttr(mode))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.dim.data}, {self.clamp_mode.data}>")


@irdl_attr_definition
class TensorViewType(ParametrizedAttribute, TypeAttribute):
    """`!spirv.NV.tensor_view<2, false, 1, 0>` (OpTypeTensorViewNV): Dim, HasDimensions, then the
    permutation p0..p<Dim-1>."""

    name = "spirv.NV.tensor_view"
    dim: IntAttr
    has_dimensions: IntAttr
    permutation: ArrayAttr[IntAttr]

    def __init__(self, dim: int, has_dimensions: bool, permutation: Sequence[int]):
        super().__init__(IntAttr(dim), IntAttr(int(bool(has_dimensions))),
                         ArrayAttr([IntAttr(p) for p in permutation]))

    @property
    def perm(self) -> tuple[int, ...]:
        return tuple(p.data for p in self.permutation.data)

    def verify(self) -> None:
        _check_dim(self.dim.data, "OpTypeTensorViewNV")
        if sorted(self.perm) != list(range(self.dim.data)):
            raise VerifyException(f"OpTypeTensorViewNV p0..p{self.dim.data - 1} must be a permutation "
                                  f"of [0,{self.dim.data}), got {list(self.perm)}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dim = parser.parse_integer(allow_negative=False, allow_boolean=False)
            parser.parse_punctuation(",")
            has = parser.parse_boolean()
            perm: list[int] = []
            while parser.parse_optional_punctuation(","):
                perm.append(parser.parse_integer(allow_negative=False, allow_boolean=False))
        return (IntAttr(dim), IntAttr(int(has)), ArrayAttr([IntAttr(p) for p in perm]))

    def print_parameters(self, printer: Printer) -> None:
        perm = "".join(f", {p}" for p in self.perm)
        printer.print_string(f"<{self.dim.data}, {'true' if self.has_dimensions.data else 'false'}{perm}>")


TENSOR_TYPES = (TensorLayoutType, TensorViewType)

# ---------------------------------------------------------------------------------------------
# Tensor layout / view instructions
# ---------------------------------------------------------------------------------------------

_GENERIC_FORMAT = "operands attr-dict `:` functional-type(operands, results)"


class _Create(SpirvInstruction):
    result = result_def()
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: Attribute):
        super().__init__(result_types=[result_type])


class _Set(SpirvInstruction):
    """`%r = spirv.NV.TensorLayoutSetDimension %l, %v0, %v1 : (...) -> T`: a copy of the layout or
    view with some state replaced (32-bit integer operands)."""

    input = operand_def()
    values = var_operand_def()
    result = result_def()
    assembly_format = _GENERIC_FORMAT

    def __init__(self, input: SSAValue, values: Sequence[SSAValue]):
        super().__init__(operands=[input, list(values)], result_types=[input.type])

    def verify_(self) -> None:
        if not isinstance(self.input.type, TensorLayoutType | TensorViewType):
            raise VerifyException(f"{self.OPNAME}: the input must be a tensor layout or view")
        spirv_rules.check_tensor_set(self)


def _op(cls_name: str, base: type, opname: str) -> type:
    short = opname[2:-2]  # OpTensorLayoutSetDimensionNV -> TensorLayoutSetDimension
    return op_class(cls_name, base, f"spirv.NV.{short}", f"`spirv.NV.{short}`: {opname}.", __name__,
                    OPNAME=opname)


CreateTensorLayoutOp = _op("CreateTensorLayoutOp", _Create, "OpCreateTensorLayoutNV")
CreateTensorViewOp = _op("CreateTensorViewOp", _Create, "OpCreateTensorViewNV")
TensorLayoutSetDimensionOp = _op("TensorLayoutSetDimensionOp", _Set, "OpTensorLayoutSetDimensionNV")
TensorLayoutSetStrideOp = _op("TensorLayoutSetStrideOp", _Set, "OpTensorLayoutSetStrideNV")
TensorLayoutSliceOp = _op("TensorLayoutSliceOp", _Set, "OpTensorLayoutSliceNV")
TensorLayoutSetClampValueOp = _op("TensorLayoutSetClampValueOp", _Set, "OpTensorLayoutSetClampValueNV")
TensorLayoutSetBlockSizeOp = _op("TensorLayoutSetBlockSizeOp", _Set, "OpTensorLayoutSetBlockSizeNV")
TensorViewSetDimensionOp = _op("TensorViewSetDimensionOp", _Set, "OpTensorViewSetDimensionNV")
TensorViewSetStrideOp = _op("TensorViewSetStrideOp", _Set, "OpTensorViewSetStrideNV")
TensorViewSetClipOp = _op("TensorViewSetClipOp", _Set, "OpTensorViewSetClipNV")

TENSOR_SET_OPS = (TensorLayoutSetDimensionOp, TensorLayoutSetStrideOp, TensorLayoutSliceOp,
                  TensorLayoutSetClampValueOp, TensorLayoutSetBlockSizeOp, TensorViewSetDimensionOp,
                  TensorViewSetStrideOp, TensorViewSetClipOp)

# ---------------------------------------------------------------------------------------------
# Cooperative-matrix-2 instructions
# ---------------------------------------------------------------------------------------------

class _TensorMemory(SpirvInstruction):
    """Shared operands of OpCooperativeMatrixLoadTensorNV / StoreTensorNV: Pointer, Object,
    TensorLayout, an optional TensorView; `memory_operand` and `decode_func` properties (their
    words: `coopdialect.spirv.tensor_operands`)."""

    ENUM_PROPS: ClassVar[tuple[tuple[str, str], ...]] = (("memory_operand", "MemoryAccess"),)

    def spirv_features(self) -> list[tuple[str, str]]:
        """Enumerants the generic ENUM_PROPS scan cannot see (requirements.py)."""
        out = []
        if self.view is not None:
            out.append(("TensorAddressingOperands", "TensorView"))
        if self.properties.get("decode_func") is not None:
            out.append(("TensorAddressingOperands", "DecodeFunc"))
        return out

    def verify_(self) -> None:
        super().verify_()
        if not isinstance(self.layout.type, TensorLayoutType):
            raise VerifyException(f"{self.OPNAME}: TensorLayout must be an OpTypeTensorLayoutNV value")
        if self.view is not None and not isinstance(self.view.type, TensorViewType):
            raise VerifyException(f"{self.OPNAME}: the TensorView operand must be an OpTypeTensorViewNV value")


@irdl_op_definition
class CooperativeMatrixLoadTensorOp(_TensorMemory):
    """`spirv.NV.CooperativeMatrixLoadTensor %ptr, %obj, %layout[, %view] {decode_func = @f,
    memory_operand = "..."}`: OpCooperativeMatrixLoadTensorNV."""

    name = "spirv.NV.CooperativeMatrixLoadTensor"
    OPNAME: ClassVar[str] = "OpCooperativeMatrixLoadTensorNV"
    pointer = operand_def(PointerType)
    object = operand_def(CooperativeMatrixType)
    layout = operand_def()
    view = opt_operand_def()
    result = result_def(CooperativeMatrixType)
    memory_operand = opt_prop_def(StringAttr)
    decode_func = opt_prop_def(SymbolRefAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _GENERIC_FORMAT

    def __init__(self, pointer: SSAValue, obj: SSAValue, layout: SSAValue, view: SSAValue | None = None,
                 memory_operand: str | None = None, decode_func: str | None = None):
        props: dict[str, Attribute] = {}
        if memory_operand is not None:
            props["memory_operand"] = StringAttr(memory_operand)
        if decode_func is not None:
            props["decode_func"] = SymbolRefAttr(decode_func)
        super().__init__(operands=[pointer, obj, layout, view], result_types=[obj.type], properties=props)

    def verify_(self) -> None:
        super().verify_()
        if self.result.type != self.object.type:
            raise VerifyException("OpCooperativeMatrixLoadTensorNV: Object must have the same type as Result Type")
        if self.decode_func is not None:
            spirv_rules.check_decode_func(self)


@irdl_op_definition
class CooperativeMatrixStoreTensorOp(_TensorMemory):
    """`spirv.NV.CooperativeMatrixStoreTensor %ptr, %obj, %layout[, %view]`:
    OpCooperativeMatrixStoreTensorNV."""

    name = "spirv.NV.CooperativeMatrixStoreTensor"
    OPNAME: ClassVar[str] = "OpCooperativeMatrixStoreTensorNV"
    pointer = operand_def(PointerType)
    object = operand_def(CooperativeMatrixType)
    layout = operand_def()
    view = opt_operand_def()
    memory_operand = opt_prop_def(StringAttr)
    decode_func = opt_prop_def(SymbolRefAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` type(operands)"

    def __init__(self, pointer: SSAValue, obj: SSAValue, layout: SSAValue, view: SSAValue | None = None,
                 memory_operand: str | None = None):
        props = {} if memory_operand is None else {"memory_operand": StringAttr(memory_operand)}
        super().__init__(operands=[pointer, obj, layout, view], properties=props)

    def verify_(self) -> None:
        super().verify_()
        if self.decode_func is not None:
            raise VerifyException("DecodeFunc is not allowed with OpCooperativeMatrixStoreTensorNV")


@irdl_op_definition
class CooperativeMatrixReduceOp(SpirvInstruction):
    """`spirv.NV.CooperativeMatrixReduce %m {reduce = "Row|Column", combine_func = @f}`:
    OpCooperativeMatrixReduceNV (`reduce` a CooperativeMatrixReduce mask)."""

    name = "spirv.NV.CooperativeMatrixReduce"
    OPNAME: ClassVar[str] = "OpCooperativeMatrixReduceNV"
    ENUM_PROPS: ClassVar[tuple[tuple[str, str], ...]] = (("reduce", "CooperativeMatrixReduce"),)
    matrix = operand_def(CooperativeMatrixType)
    result = result_def(CooperativeMatrixType)
    reduce = prop_def(StringAttr)
    combine_func = prop_def(SymbolRefAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _GENERIC_FORMAT

    def __init__(self, matrix: SSAValue, reduce: str, combine_func: str, result_type: Attribute):
        super().__init__(operands=[matrix], result_types=[result_type],
                         properties={"reduce": StringAttr(reduce), "combine_func": SymbolRefAttr(combine_func)})

    def spirv_operands(self) -> list[object]:
        return [self.matrix, ("enum", "CooperativeMatrixReduce", self.reduce.data), self.combine_func]

    @classmethod
    def from_spirv(cls, result_types: list[Attribute], items: list[object]):
        if len(items) != 3 or not isinstance(items[0], SSAValue) or not isinstance(items[1], tuple) \
                or not isinstance(items[2], SymbolRefAttr):
            raise ValueError("expected Matrix, Reduce and a CombineFunc function")
        return cls.build(operands=[items[0]], result_types=result_types,
                         properties={"reduce": StringAttr(items[1][2]), "combine_func": items[2]})

    def verify_(self) -> None:
        super().verify_()
        names = {n for n, _ in parse_enum_operand("CooperativeMatrixReduce", self.reduce.data)}
        spirv_rules.check_reduce(self, names)


class _MatrixUnary(SpirvInstruction):
    """`spirv.NV.CooperativeMatrixConvert|Transpose %acc : (...) -> T`: one matrix in, one out."""

    matrix = operand_def(CooperativeMatrixType)
    result = result_def(CooperativeMatrixType)
    assembly_format = _GENERIC_FORMAT

    def __init__(self, matrix: SSAValue, result_type: Attribute):
        super().__init__(operands=[matrix], result_types=[result_type])

    def verify_(self) -> None:
        check = spirv_rules.check_convert if self.OPNAME == "OpCooperativeMatrixConvertNV" else spirv_rules.check_transpose
        check(self.matrix.type, self.result.type)


CooperativeMatrixConvertOp = _op("CooperativeMatrixConvertOp", _MatrixUnary, "OpCooperativeMatrixConvertNV")
CooperativeMatrixTransposeOp = _op("CooperativeMatrixTransposeOp", _MatrixUnary,
                                   "OpCooperativeMatrixTransposeNV")


@irdl_op_definition
class CooperativeMatrixPerElementOpOp(SpirvInstruction):
    """`spirv.NV.CooperativeMatrixPerElementOp %m, %extra... {func = @f}`:
    OpCooperativeMatrixPerElementOpNV."""

    name = "spirv.NV.CooperativeMatrixPerElementOp"
    OPNAME: ClassVar[str] = "OpCooperativeMatrixPerElementOpNV"
    matrix = operand_def(CooperativeMatrixType)
    extra = var_operand_def()
    result = result_def(CooperativeMatrixType)
    func = prop_def(SymbolRefAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _GENERIC_FORMAT

    def __init__(self, matrix: SSAValue, func: str, extra: Sequence[SSAValue] = ()):
        super().__init__(operands=[matrix, list(extra)], result_types=[matrix.type],
                         properties={"func": SymbolRefAttr(func)})

    def spirv_operands(self) -> list[object]:
        return [self.matrix, self.func, *self.extra]

    @classmethod
    def from_spirv(cls, result_types: list[Attribute], items: list[object]):
        if len(items) < 2 or not isinstance(items[0], SSAValue) or not isinstance(items[1], SymbolRefAttr) \
                or not all(isinstance(i, SSAValue) for i in items[2:]):
            raise ValueError("expected Matrix, a Func function and value operands")
        return cls.build(operands=[items[0], list(items[2:])], result_types=result_types,
                         properties={"func": items[1]})

    def verify_(self) -> None:
        spirv_rules.check_per_element(self)


NV2_INSTRUCTION_OPS = [
    CreateTensorLayoutOp, CreateTensorViewOp, *TENSOR_SET_OPS, CooperativeMatrixLoadTensorOp,
    CooperativeMatrixStoreTensorOp, CooperativeMatrixReduceOp, CooperativeMatrixConvertOp,
    CooperativeMatrixTransposeOp, CooperativeMatrixPerElementOpOp,
]
NV2_TYPES = [TensorLayoutType, TensorViewType]
