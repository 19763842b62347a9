"""The `spirv` target dialect: one op per SPIR-V instruction used by the cooperative-matrix kernels.

Op names follow MLIR's SPIR-V dialect (`spirv.IAdd`, `spirv.KHR.CooperativeMatrixLoad`, ...). Every
instruction op declares its SPIR-V opname (`OPNAME`); opcodes, operand layouts, capabilities and
extensions come from `coopdialect.spirv.grammar_tables` (SPIR-V spec 2.2, 3.x; the binary writer
and reader in `coopdialect.spirv` are driven by them). Enum operands (MemoryAccess, LoopControl,
Cooperative Matrix Operands, ...) are string properties holding grammar enumerant names joined by
`|`; a literal parameter follows its enumerant in parentheses, e.g. `"Aligned(16)|Nontemporal"`.

Structure: `spirv.module` holds `spirv.GlobalVariable`, `spirv.EntryPoint`, `spirv.ExecutionMode`,
`spirv.Constant` and `spirv.func`. Functions use SPIR-V's own CFG: block arguments stand for OpPhi,
`spirv.LoopMerge` / `spirv.SelectionMerge` sit just before the header block's branch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    FunctionType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    i32,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import (
    Attribute,
    Block,
    Operation,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    successor_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, IsTerminator, NoTerminator, SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from coopdialect.dialects.op_family import op_class
# the dialect's types (spirv_types.py), also named here: `spirv.PointerType`, like its ops
from coopdialect.dialects.spirv_types import (  # noqa: F401
    COOP_MATRIX_TYPES,
    ArrayType,
    CooperativeMatrixType,
    NVCooperativeMatrixType,
    PointerType,
    RuntimeArrayType,
    StructType,
    VoidType,
    _check_enumerant,
    check_block_layout,
    format_enum_operand,
    parse_enum_operand,
)
from coopdialect.spirv.grammar_tables import ENUMS

# ---------------------------------------------------------------------------------------------
# Op bases
# ---------------------------------------------------------------------------------------------


class SpirvInstruction(IRDLOperation):
    """Base of ops that are one SPIR-V instruction.

    `OPNAME` names the instruction in the grammar. The writer encodes: result type, result id,
    then `spirv_operands()`; the reader rebuilds the op with `from_spirv`. `ENUM_PROPS` lists
    (property, grammar operand kind) of trailing enum operands in grammar order.
    """

    OPNAME: ClassVar[str]
    ENUM_PROPS: ClassVar[tuple[tuple[str, str], ...]] = ()

    def spirv_operands(self) -> list[object]:
        """Operands after the result id, in grammar order: SSAValue, Block, type Attribute (for an
        `<id>` naming a type), int (literal), or ("enum", kind, text)."""
        items: list[object] = list(self.operands)
        for prop, kind in self.ENUM_PROPS:
            value = self.properties.get(prop)
            if value is not None:
                assert isinstance(value, StringAttr)
                items.append(("enum", kind, value.data))
        return items

    @classmethod
    def from_spirv(cls, result_types: list[Attribute], items: list[object]) -> SpirvInstruction:
        """Build the op from decoded operands (same item kinds as `spirv_operands`, enums as
        ("enum", kind, text)). Raises ValueError when the operands do not fit the op."""
        operands = [i for i in items if isinstance(i, SSAValue)]
        enums = [i for i in items if isinstance(i, tuple)]
        if len(operands) + len(enums) != len(items):
            raise ValueError(f"unexpected operand kinds for {cls.OPNAME}")
        props: dict[str, Attribute] = {}
        for (prop, kind), (_, ekind, text) in zip(cls.ENUM_PROPS, enums):
            if kind != ekind:
                raise ValueError(f"unexpected {ekind} operand for {cls.OPNAME}")
            props[prop] = StringAttr(text)
        if len(enums) > len(cls.ENUM_PROPS):
            raise ValueError(f"too many enum operands for {cls.OPNAME}")
        return cls.build(operands=_group_operands(cls, operands), result_types=result_types, properties=props)

    def verify_(self) -> None:
        for prop, kind in self.ENUM_PROPS:
            value = self.properties.get(prop)
            if value is not None:
                parse_enum_operand(kind, value.data)


def _group_operands(cls: type[IRDLOperation], flat: list[SSAValue]) -> list[SSAValue | list[SSAValue] | None]:
    """Distribute a flat operand list over the op's operand defs (at most one variadic/optional)."""
    from xdsl.irdl import OptOperandDef, VarOperandDef

    defs = cls.get_irdl_definition().operands
    n_fixed = sum(1 for _, d in defs if not isinstance(d, VarOperandDef))
    n_var = len(flat) - n_fixed
    if n_var < 0:
        raise ValueError(f"{cls.name}: too few operands")
    out: list[SSAValue | list[SSAValue] | None] = []
    i = 0
    for _, d in defs:
        if isinstance(d, OptOperandDef):
            if n_var > 1:
                raise ValueError(f"{cls.name}: too many operands")
            out.append(flat[i] if n_var else None)
            i += n_var
        elif isinstance(d, VarOperandDef):
            out.append(flat[i : i + n_var])
            i += n_var
        else:
            out.append(flat[i])
            i += 1
    return out


def _fast_init(op: IRDLOperation, operands: Sequence[object], result_types: Sequence[object] = (),
               properties: dict[str, Attribute] | None = None) -> bool:
    """Build `op` straight through `Operation.__init__` when `operands` are plain SSA values (one
    per operand, variadics flattened, absent optionals left out) and `result_types` attributes:
    for ops without segment-size options this is what `IRDLOperation.__init__` builds, minus its
    generic argument grouping, the main cost of creating an op. Returns False (nothing done) for
    anything else, so that the caller takes the generic path and its error messages."""
    for o in operands:
        if not isinstance(o, SSAValue):
            return False
    for t in result_types:
        if not isinstance(t, Attribute):
            return False
    Operation.__init__(op, operands=operands, result_types=result_types,
                       properties=properties if properties is not None else {})
    return True


_GENERIC_FORMAT = "operands attr-dict `:` functional-type(operands, results)"
_NO_RESULT_FORMAT = "operands attr-dict `:` type(operands)"


class _Binary(SpirvInstruction):
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    assembly_format = _GENERIC_FORMAT

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute | None = None):
        if not _fast_init(self, [lhs, rhs], [result_type or lhs.type]):
            super().__init__(operands=[lhs, rhs], result_types=[result_type or lhs.type])

    def verify_(self) -> None:
        from coopdialect.dialects.spirv_rules import check_arithmetic

        check_arithmetic(self)


class _Unary(SpirvInstruction):
    operand = operand_def()
    result = result_def()
    assembly_format = _GENERIC_FORMAT

    def __init__(self, operand: SSAValue, result_type: Attribute | None = None):
        if not _fast_init(self, [operand], [result_type or operand.type]):
            super().__init__(operands=[operand], result_types=[result_type or operand.type])

    def verify_(self) -> None:
        from coopdialect.dialects.spirv_rules import check_arithmetic, check_conversion

        check_arithmetic(self)
        check_conversion(self)


class _Compare(_Binary):
    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute | None = None):
        super().__init__(lhs, rhs, result_type or IntegerType(1))

    def verify_(self) -> None:
        from coopdialect.dialects.spirv_rules import check_compare

        check_compare(self)


def _binary(cls_name: str, opname: str, base: type = _Binary) -> type:
    return op_class(cls_name + "Op", base, f"spirv.{opname[2:]}", f"`spirv.{opname[2:]}`: {opname}.",
                    __name__, OPNAME=opname)


IAddOp = _binary("IAdd", "OpIAdd")
ISubOp = _binary("ISub", "OpISub")
IMulOp = _binary("IMul", "OpIMul")
SDivOp = _binary("SDiv", "OpSDiv")
UDivOp = _binary("UDiv", "OpUDiv")
SRemOp = _binary("SRem", "OpSRem")
SModOp = _binary("SMod", "OpSMod")
UModOp = _binary("UMod", "OpUMod")
FAddOp = _binary("FAdd", "OpFAdd")
FSubOp = _binary("FSub", "OpFSub")
FMulOp = _binary("FMul", "OpFMul")
FDivOp = _binary("FDiv", "OpFDiv")
BitwiseAndOp = _binary("BitwiseAnd", "OpBitwiseAnd")
BitwiseOrOp = _binary("BitwiseOr", "OpBitwiseOr")
BitwiseXorOp = _binary("BitwiseXor", "OpBitwiseXor")
ShiftLeftLogicalOp = _binary("ShiftLeftLogical", "OpShiftLeftLogical")
ShiftRightLogicalOp = _binary("ShiftRightLogical", "OpShiftRightLogical")
ShiftRightArithmeticOp = _binary("ShiftRightArithmetic", "OpShiftRightArithmetic")
LogicalAndOp = _binary("LogicalAnd", "OpLogicalAnd")
LogicalOrOp = _binary("LogicalOr", "OpLogicalOr")
MatrixTimesScalarOp = _binary("MatrixTimesScalar", "OpMatrixTimesScalar")
_COMPARES = ["IEqual", "INotEqual", "SLessThan", "SLessThanEqual", "SGreaterThan", "SGreaterThanEqual",
             "ULessThan", "ULessThanEqual", "UGreaterThan", "UGreaterThanEqual", "FOrdEqual",
             "FOrdNotEqual", "FOrdLessThan", "FOrdLessThanEqual", "FOrdGreaterThan",
             "FOrdGreaterThanEqual", "LogicalEqual", "LogicalNotEqual"]
COMPARE_OPS = [_binary(n, "Op" + n, _Compare) for n in _COMPARES]
(IEqualOp, INotEqualOp, SLessThanOp, SLessThanEqualOp, SGreaterThanOp, SGreaterThanEqualOp,
 ULessThanOp, ULessThanEqualOp, UGreaterThanOp, UGreaterThanEqualOp, FOrdEqualOp, FOrdNotEqualOp,
 FOrdLessThanOp, FOrdLessThanEqualOp, FOrdGreaterThanOp, FOrdGreaterThanEqualOp, LogicalEqualOp,
 LogicalNotEqualOp) = COMPARE_OPS

SNegateOp = _binary("SNegate", "OpSNegate", _Unary)
FNegateOp = _binary("FNegate", "OpFNegate", _Unary)
NotOp = _binary("Not", "OpNot", _Unary)
LogicalNotOp = _binary("LogicalNot", "OpLogicalNot", _Unary)
ConvertFToUOp = _binary("ConvertFToU", "OpConvertFToU", _Unary)
ConvertFToSOp = _binary("ConvertFToS", "OpConvertFToS", _Unary)
ConvertSToFOp = _binary("ConvertSToF", "OpConvertSToF", _Unary)
ConvertUToFOp = _binary("ConvertUToF", "OpConvertUToF", _Unary)
UConvertOp = _binary("UConvert", "OpUConvert", _Unary)
SConvertOp = _binary("SConvert", "OpSConvert", _Unary)
FConvertOp = _binary("FConvert", "OpFConvert", _Unary)
BitcastOp = _binary("Bitcast", "OpBitcast", _Unary)


@irdl_op_definition
class SelectOp(SpirvInstruction):
    """`spirv.Select %cond, %a, %b`: OpSelect."""

    name = "spirv.Select"
    OPNAME: ClassVar[str] = "OpSelect"
    condition = operand_def()
    true_value = operand_def()
    false_value = operand_def()
    result = result_def()
    assembly_format = _GENERIC_FORMAT

    def __init__(self, cond: SSAValue, a: SSAValue, b: SSAValue):
        super().__init__(operands=[cond, a, b], result_types=[a.type])


@irdl_op_definition
class CompositeConstructOp(SpirvInstruction):
    """`spirv.CompositeConstruct %a, %b, ...`: OpCompositeConstruct."""

    name = "spirv.CompositeConstruct"
    OPNAME: ClassVar[str] = "OpCompositeConstruct"
    constituents = var_operand_def()
    result = result_def()
    assembly_format = _GENERIC_FORMAT

    def __init__(self, constituents: Sequence[SSAValue], result_type: Attribute):
        super().__init__(operands=[list(constituents)], result_types=[result_type])


class _IndexedComposite(SpirvInstruction):
    indices = prop_def(DenseArrayBase)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _GENERIC_FORMAT

    def spirv_operands(self) -> list[object]:
        return [*self.operands, *self.indices.get_values()]

    @classmethod
    def from_spirv(cls, result_types: list[Attribute], items: list[object]) -> SpirvInstruction:
        ids = [i for i in items if isinstance(i, SSAValue)]
        lits = [i for i in items if isinstance(i, int)]
        if len(ids) + len(lits) != len(items) or items[: len(ids)] != ids:
            raise ValueError(f"unexpected operands for {cls.OPNAME}")
        return cls.build(operands=ids, result_types=result_types,
                         properties={"indices": DenseArrayBase.from_list(i32, lits)})


@irdl_op_definition
class CompositeExtractOp(_IndexedComposite):
    """`spirv.CompositeExtract %v {indices = array<i32: 0>}`: OpCompositeExtract (literal indices)."""

    name = "spirv.CompositeExtract"
    OPNAME: ClassVar[str] = "OpCompositeExtract"
    composite = operand_def()
    result = result_def()

    def __init__(self, composite: SSAValue, indices: Sequence[int], result_type: Attribute):
        super().__init__(operands=[composite], result_types=[result_type],
                         properties={"indices": DenseArrayBase.from_list(i32, list(indices))})

    def verify_(self) -> None:
        from coopdialect.dialects.spirv_rules import check_composite_indices

        check_composite_indices(self.composite.type, list(self.indices.get_values()), self.result.type, self.OPNAME)


@irdl_op_definition
class CompositeInsertOp(_IndexedComposite):
    """`spirv.CompositeInsert %obj, %v {indices = ...}`: OpCompositeInsert."""

    name = "spirv.CompositeInsert"
    OPNAME: ClassVar[str] = "OpCompositeInsert"
    object = operand_def()
    composite = operand_def()
    result = result_def()

    def __init__(self, obj: SSAValue, composite: SSAValue, indices: Sequence[int]):
        super().__init__(operands=[obj, composite], result_types=[composite.type],
                         properties={"indices": DenseArrayBase.from_list(i32, list(indices))})

    def verify_(self) -> None:
        from coopdialect.dialects.spirv_rules import check_composite_indices, same_type

        if not same_type(self.result.type, self.composite.type):
            raise VerifyException("Result Type must be the type of Composite (OpCompositeInsert)")
        check_composite_indices(self.composite.type, list(self.indices.get_values()), self.object.type, self.OPNAME)


@irdl_op_definition
class UndefOp(SpirvInstruction):
    """`spirv.Undef : T`: OpUndef (module level or in a function)."""

    name = "spirv.Undef"
    OPNAME: ClassVar[str] = "OpUndef"
    result = result_def()
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: Attribute):
        super().__init__(result_types=[result_type])


# ---- memory -----------------------------------------------------------------------------------


@irdl_op_definition
class LoadOp(SpirvInstruction):
    """`spirv.Load %ptr {memory_access = "Aligned(4)"}`: OpLoad."""

    name = "spirv.Load"
    OPNAME: ClassVar[str] = "OpLoad"
    ENUM_PROPS: ClassVar[tuple[tuple[str, str], ...]] = (("memory_access", "MemoryAccess"),)
    pointer = operand_def(PointerType)
    result = result_def()
    memory_access = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _GENERIC_FORMAT

    def __init__(self, pointer: SSAValue, memory_access: str | None = None):
        assert isinstance(pointer.type, PointerType)
        props = _props(memory_access=memory_access)
        if not _fast_init(self, [pointer], [pointer.type.pointee], props):
            super().__init__(operands=[pointer], result_types=[pointer.type.pointee], properties=props)

    def verify_(self) -> None:
        super().verify_()
        from coopdialect.dialects.spirv_rules import same_type

        if not same_type(self.result.type, self.pointer.type.pointee):
            raise VerifyException("Result Type must be the type Pointer points to (OpLoad)")


@irdl_op_definition
class StoreOp(SpirvInstruction):
    """`spirv.Store %ptr, %value`: OpStore."""

    name = "spirv.Store"
    OPNAME: ClassVar[str] = "OpStore"
    ENUM_PROPS: ClassVar[tuple[tuple[str, str], ...]] = (("memory_access", "MemoryAccess"),)
    pointer = operand_def(PointerType)
    value = operand_def()
    memory_access = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _NO_RESULT_FORMAT

    def __init__(self, pointer: SSAValue, value: SSAValue, memory_access: str | None = None):
        props = _props(memory_access=memory_access)
        if not _fast_init(self, [pointer, value], (), props):
            super().__init__(operands=[pointer, value], properties=props)

    def verify_(self) -> None:
        super().verify_()
        from coopdialect.dialects.spirv_rules import same_type

        if not same_type(self.value.type, self.pointer.type.pointee):
            raise VerifyException("Object must have the type Pointer points to (OpStore)")


@irdl_op_definition
class AccessChainOp(SpirvInstruction):
    """`spirv.AccessChain %base, %i, %j`: OpAccessChain (indices are i32 SSA values)."""

    name = "spirv.AccessChain"
    OPNAME: ClassVar[str] = "OpAccessChain"
    base = operand_def(PointerType)
    indices = var_operand_def()
    result = result_def(PointerType)
    assembly_format = _GENERIC_FORMAT

    def __init__(self, base: SSAValue, indices: Sequence[SSAValue], result_type: PointerType):
        if not _fast_init(self, [base, *indices], [result_type]):
            super().__init__(operands=[base, list(indices)], result_types=[result_type])

    def verify_(self) -> None:
        from coopdialect.dialects.spirv_rules import check_access_chain

        check_access_chain(self)


def _props(**kw: str | None) -> dict[str, Attribute]:
    return {k: StringAttr(v) for k, v in kw.items() if v is not None}


# ---- cooperative matrices (SPV_KHR_cooperative_matrix, SPV_NV_cooperative_matrix) -------------


@irdl_op_definition
class KHRCooperativeMatrixLoadOp(SpirvInstruction):
    """`spirv.KHR.CooperativeMatrixLoad %ptr, %layout[, %stride]`: OpCooperativeMatrixLoadKHR.

    `layout` is an i32 constant holding a CooperativeMatrixLayout value; `memory_operand` is a
    MemoryAccess enum property."""

    name = "spirv.KHR.CooperativeMatrixLoad"
    OPNAME: ClassVar[str] = "OpCooperativeMatrixLoadKHR"
    ENUM_PROPS: ClassVar[tuple[tuple[str, str], ...]] = (("memory_operand", "MemoryAccess"),)
    pointer = operand_def(PointerType)
    layout = operand_def()
    stride = opt_operand_def()
    result = result_def(CooperativeMatrixType)
    memory_operand = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _GENERIC_FORMAT

    def __init__(self, pointer: SSAValue, layout: SSAValue, stride: SSAValue | None,
                 result_type: CooperativeMatrixType, memory_operand: str | None = None):
        props = _props(memory_operand=memory_operand)
        flat = [pointer, layout] if stride is None else [pointer, layout, stride]
        if not _fast_init(self, flat, [result_type], props):
            super().__init__(operands=[pointer, layout, stride], result_types=[result_type], properties=props)


    def verify_(self) -> None:
        super().verify_()
        from coopdialect.dialects.spirv_rules import (check_arm_layout, check_layout_operand, check_matrix_pointer,
                                                      check_stride)

        check_arm_layout(self.result.type, self.layout, self.stride, self.OPNAME)
        check_matrix_pointer(self.pointer, self.OPNAME)
        check_layout_operand(self.layout, self.OPNAME)
        check_stride(self.stride, self.OPNAME)

@irdl_op_definition
class KHRCooperativeMatrixStoreOp(SpirvInstruction):
    """`spirv.KHR.CooperativeMatrixStore %ptr, %obj, %layout[, %stride]`: OpCooperativeMatrixStoreKHR."""

    name = "spirv.KHR.CooperativeMatrixStore"
    OPNAME: ClassVar[str] = "OpCooperativeMatrixStoreKHR"
    ENUM_PROPS: ClassVar[tuple[tuple[str, str], ...]] = (("memory_operand", "MemoryAccess"),)
    pointer = operand_def(PointerType)
    object = operand_def(CooperativeMatrixType)
    layout = operand_def()
    stride = opt_operand_def()
    memory_operand = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _NO_RESULT_FORMAT

    def __init__(self, pointer: SSAValue, obj: SSAValue, layout: SSAValue, stride: SSAValue | None,
                 memory_operand: str | None = None):
        props = _props(memory_operand=memory_operand)
        flat = [pointer, obj, layout] if stride is None else [pointer, obj, layout, stride]
        if not _fast_init(self, flat, (), props):
            super().__init__(operands=[pointer, obj, layout, stride], properties=props)


    def verify_(self) -> None:
        super().verify_()
        from coopdialect.dialects.spirv_rules import (check_arm_layout, check_layout_operand, check_matrix_pointer,
                                                      check_stride)

        check_arm_layout(self.object.type, self.layout, self.stride, self.OPNAME)
        check_matrix_pointer(self.pointer, self.OPNAME)
        check_layout_operand(self.layout, self.OPNAME)
        check_stride(self.stride, self.OPNAME)

@irdl_op_definition
class KHRCooperativeMatrixMulAddOp(SpirvInstruction):
    """`spirv.KHR.CooperativeMatrixMulAdd %a, %b, %c`: OpCooperativeMatrixMulAddKHR; `matrix_operands`
    is a CooperativeMatrixOperands bitmask property (e.g. "MatrixASignedComponentsKHR|...")."""

    name = "spirv.KHR.CooperativeMatrixMulAdd"
    OPNAME: ClassVar[str] = "OpCooperativeMatrixMulAddKHR"
    ENUM_PROPS: ClassVar[tuple[tuple[str, str], ...]] = (("matrix_operands", "CooperativeMatrixOperands"),)
    a = operand_def(CooperativeMatrixType)
    b = operand_def(CooperativeMatrixType)
    c = operand_def(CooperativeMatrixType)
    result = result_def(CooperativeMatrixType)
    matrix_operands = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _GENERIC_FORMAT

    def __init__(self, a: SSAValue, b: SSAValue, c: SSAValue, matrix_operands: str | None = None,
                 result_type: Attribute | None = None):
        props = _props(matrix_operands=matrix_operands)
        if not _fast_init(self, [a, b, c], [result_type or c.type], props):
            super().__init__(operands=[a, b, c], result_types=[result_type or c.type], properties=props)


    def verify_(self) -> None:
        super().verify_()
        from coopdialect.dialects.spirv_rules import check_mul_add_khr

        check_mul_add_khr(self.a, self.b, self.c, self.result)

class _MatrixLength(SpirvInstruction):
    matrix_type = prop_def(TypeAttribute)
    result = result_def()
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, matrix_type: Attribute, result_type: Attribute = i32):
        super().__init__(result_types=[result_type], properties={"matrix_type": matrix_type})

    def spirv_operands(self) -> list[object]:
        return [self.matrix_type]

    def verify_(self) -> None:
        from coopdialect.dialects.spirv_rules import check_matrix_type_operand

        check_matrix_type_operand(self.matrix_type, self.OPNAME)

    @classmethod
    def from_spirv(cls, result_types: list[Attribute], items: list[object]) -> SpirvInstruction:
        if len(items) != 1 or not isinstance(items[0], TypeAttribute):
            raise ValueError(f"{cls.OPNAME} expects one type <id>")
        return cls.build(result_types=result_types, properties={"matrix_type": items[0]})


@irdl_op_definition
class KHRCooperativeMatrixLengthOp(_MatrixLength):
    """`spirv.KHR.CooperativeMatrixLength {matrix_type = !spirv.coopmatrix<...>} : i32`."""

    name = "spirv.KHR.CooperativeMatrixLength"
    OPNAME: ClassVar[str] = "OpCooperativeMatrixLengthKHR"


@irdl_op_definition
class NVCooperativeMatrixLoadOp(SpirvInstruction):
    """`spirv.NV.CooperativeMatrixLoad %ptr, %stride, %column_major`: OpCooperativeMatrixLoadNV
    (`column_major` is an i1 constant)."""

    name = "spirv.NV.CooperativeMatrixLoad"
    OPNAME: ClassVar[str] = "OpCooperativeMatrixLoadNV"
    ENUM_PROPS: ClassVar[tuple[tuple[str, str], ...]] = (("memory_access", "MemoryAccess"),)
    pointer = operand_def(PointerType)
    stride = operand_def()
    column_major = operand_def()
    result = result_def(NVCooperativeMatrixType)
    memory_access = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _GENERIC_FORMAT

    def __init__(self, pointer: SSAValue, stride: SSAValue, column_major: SSAValue,
                 result_type: NVCooperativeMatrixType, memory_access: str | None = None):
        props = _props(memory_access=memory_access)
        if not _fast_init(self, [pointer, stride, column_major], [result_type], props):
            super().__init__(operands=[pointer, stride, column_major], result_types=[result_type],
                             properties=props)

    def verify_(self) -> None:
        super().verify_()
        from coopdialect.dialects.spirv_rules import check_matrix_pointer, check_stride

        check_matrix_pointer(self.pointer, self.OPNAME)
        check_stride(self.stride, self.OPNAME)


@irdl_op_definition
class NVCooperativeMatrixStoreOp(SpirvInstruction):
    """`spirv.NV.CooperativeMatrixStore %ptr, %obj, %stride, %column_major`: OpCooperativeMatrixStoreNV."""

    name = "spirv.NV.CooperativeMatrixStore"
    OPNAME: ClassVar[str] = "OpCooperativeMatrixStoreNV"
    ENUM_PROPS: ClassVar[tuple[tuple[str, str], ...]] = (("memory_access", "MemoryAccess"),)
    pointer = operand_def(PointerType)
    object = operand_def(NVCooperativeMatrixType)
    stride = operand_def()
    column_major = operand_def()
    memory_access = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _NO_RESULT_FORMAT

    def __init__(self, pointer: SSAValue, obj: SSAValue, stride: SSAValue, column_major: SSAValue,
                 memory_access: str | None = None):
        props = _props(memory_access=memory_access)
        if not _fast_init(self, [pointer, obj, stride, column_major], (), props):
            super().__init__(operands=[pointer, obj, stride, column_major], properties=props)

    def verify_(self) -> None:
        super().verify_()
        from coopdialect.dialects.spirv_rules import check_matrix_pointer, check_stride

        check_matrix_pointer(self.pointer, self.OPNAME)
        check_stride(self.stride, self.OPNAME)


@irdl_op_definition
class NVCooperativeMatrixMulAddOp(SpirvInstruction):
    """`spirv.NV.CooperativeMatrixMulAdd %a, %b, %c`: OpCooperativeMatrixMulAddNV."""

    name = "spirv.NV.CooperativeMatrixMulAdd"
    OPNAME: ClassVar[str] = "OpCooperativeMatrixMulAddNV"
    a = operand_def(NVCooperativeMatrixType)
    b = operand_def(NVCooperativeMatrixType)
    c = operand_def(NVCooperativeMatrixType)
    result = result_def(NVCooperativeMatrixType)
    assembly_format = _GENERIC_FORMAT

    def __init__(self, a: SSAValue, b: SSAValue, c: SSAValue, result_type: Attribute | None = None):
        if not _fast_init(self, [a, b, c], [result_type or c.type]):
            super().__init__(operands=[a, b, c], result_types=[result_type or c.type])


    def verify_(self) -> None:
        from coopdialect.dialects.spirv_rules import check_mul_add_shapes

        check_mul_add_shapes(self.a.type, self.b.type, self.c.type, self.result.type, self.OPNAME)

@irdl_op_definition
class NVCooperativeMatrixLengthOp(_MatrixLength):
    """`spirv.NV.CooperativeMatrixLength {matrix_type = !spirv.NV.coopmatrix<...>} : i32`."""

    name = "spirv.NV.CooperativeMatrixLength"
    OPNAME: ClassVar[str] = "OpCooperativeMatrixLengthNV"


# ---- control flow -----------------------------------------------------------------------------


@irdl_op_definition
class BranchOp(SpirvInstruction):
    """`spirv.Branch ^bb(%args : T)`: OpBranch; the arguments feed the target's OpPhis."""

    name = "spirv.Branch"
    OPNAME: ClassVar[str] = "OpBranch"
    args = var_operand_def()
    target = successor_def()
    traits = traits_def(IsTerminator())
    assembly_format = "$target (`(` $args^ `:` type($args) `)`)? attr-dict"

    def __init__(self, target: Block, args: Sequence[SSAValue] = ()):
        super().__init__(operands=[list(args)], successors=[target])

    def spirv_operands(self) -> list[object]:
        return [self.target]


@irdl_op_definition
class BranchConditionalOp(SpirvInstruction):
    """`spirv.BranchConditional %c, ^t(%a : T), ^f`: OpBranchConditional (optional literal
    `branch_weights`)."""

    name = "spirv.BranchConditional"
    OPNAME: ClassVar[str] = "OpBranchConditional"
    condition = operand_def(IntegerType(1))
    true_args = var_operand_def()
    false_args = var_operand_def()
    true_target = successor_def()
    false_target = successor_def()
    branch_weights = opt_prop_def(DenseArrayBase)
    traits = traits_def(IsTerminator())
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = ("$condition `,` $true_target (`(` $true_args^ `:` type($true_args) `)`)? `,` "
                       "$false_target (`(` $false_args^ `:` type($false_args) `)`)? attr-dict")

    def __init__(self, condition: SSAValue, true_target: Block, false_target: Block,
                 true_args: Sequence[SSAValue] = (), false_args: Sequence[SSAValue] = (),
                 branch_weights: Sequence[int] | None = None):
        props = {} if branch_weights is None else {"branch_weights": DenseArrayBase.from_list(i32, list(branch_weights))}
        super().__init__(operands=[condition, list(true_args), list(false_args)],
                         successors=[true_target, false_target], properties=props)

    def verify_(self) -> None:
        # SPIR-V 2.11 (structured control flow): a conditional branch heads a selection (merge
        # instruction before it) or a loop, or leaves the innermost loop (a break to its merge
        # block, a branch to its continue target)
        prev = self.prev_op
        if isinstance(prev, _MergeOp):
            return
        region = self.parent_region()
        exits = set()
        for block in region.blocks if region is not None else ():
            for op in block.ops:
                if isinstance(op, LoopMergeOp):
                    exits.update((id(op.merge_block), id(op.continue_block)))
        if id(self.true_target) not in exits and id(self.false_target) not in exits:
            raise VerifyException("OpBranchConditional: a selection must be structured (OpSelectionMerge before "
                                  "it), unless it branches to a loop's merge block or continue target")

    def spirv_operands(self) -> list[object]:
        weights = [] if self.branch_weights is None else list(self.branch_weights.get_values())
        return [self.condition, self.true_target, self.false_target, *weights]


class _MergeOp(SpirvInstruction):
    """Merge instructions name blocks but are not terminators: xDSL only allows successors on
    a block's last op, so this op checks its own placement (just before the branch) instead."""

    def verify(self, verify_nested_ops: bool = True) -> None:
        block = self.parent_block()
        nxt = self.next_op
        if block is None or nxt is None or nxt is not block.last_op or not isinstance(
            nxt, (BranchOp, BranchConditionalOp)
        ):
            raise VerifyException(f"'{self.name}' must be immediately followed by the block's "
                                  "spirv.Branch or spirv.BranchConditional")
        for succ in self.successors:
            if succ.parent is not block.parent:
                raise VerifyException(f"'{self.name}' names a block of a different region")
        if self.successors[0] is block:  # SPIR-V 2.11: a merge block is not its own header
            raise VerifyException(f"'{self.name}': the Merge Block may not be the block containing the merge "
                                  "instruction")
        self.verify_()


@irdl_op_definition
class LoopMergeOp(_MergeOp):
    """`spirv.LoopMerge ^merge, ^continue {loop_control = "None"}`: OpLoopMerge."""

    name = "spirv.LoopMerge"
    OPNAME: ClassVar[str] = "OpLoopMerge"
    ENUM_PROPS: ClassVar[tuple[tuple[str, str], ...]] = (("loop_control", "LoopControl"),)
    merge_block = successor_def()
    continue_block = successor_def()
    loop_control = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$merge_block `,` $continue_block attr-dict"

    def __init__(self, merge_block: Block, continue_block: Block, loop_control: str | None = None):
        super().__init__(successors=[merge_block, continue_block], properties=_props(loop_control=loop_control))

    def spirv_operands(self) -> list[object]:
        ctl = self.loop_control.data if self.loop_control else "None"
        return [self.merge_block, self.continue_block, ("enum", "LoopControl", ctl)]


@irdl_op_definition
class SelectionMergeOp(_MergeOp):
    """`spirv.SelectionMerge ^merge`: OpSelectionMerge."""

    name = "spirv.SelectionMerge"
    OPNAME: ClassVar[str] = "OpSelectionMerge"
    ENUM_PROPS: ClassVar[tuple[tuple[str, str], ...]] = (("selection_control", "SelectionControl"),)
    merge_block = successor_def()
    selection_control = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$merge_block attr-dict"

    def __init__(self, merge_block: Block, selection_control: str | None = None):
        super().__init__(successors=[merge_block], properties=_props(selection_control=selection_control))

    def spirv_operands(self) -> list[object]:
        ctl = self.selection_control.data if self.selection_control else "None"
        return [self.merge_block, ("enum", "SelectionControl", ctl)]


@irdl_op_definition
class ReturnOp(SpirvInstruction):
    """`spirv.Return`: OpReturn."""

    name = "spirv.Return"
    OPNAME: ClassVar[str] = "OpReturn"
    traits = traits_def(IsTerminator())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class ReturnValueOp(SpirvInstruction):
    """`spirv.ReturnValue %v : T`: OpReturnValue."""

    name = "spirv.ReturnValue"
    OPNAME: ClassVar[str] = "OpReturnValue"
    value = operand_def()
    traits = traits_def(IsTerminator())
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value])


# ---------------------------------------------------------------------------------------------
# Module-level structure
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """`spirv.Constant 1.5 : f32`, `spirv.Constant true : i1`, `spirv.Constant 0.0 :
    !spirv.coopmatrix<...>` (a splat OpConstantComposite). `value` is an IntegerAttr/FloatAttr of
    the scalar (element) type. Lives at module level or in a function; the writer hoists it."""

    name = "spirv.Constant"
    value = prop_def(IntegerAttr | FloatAttr)
    result = result_def()

    def __init__(self, value: int | float | bool, result_type: Attribute):
        super().__init__(properties={"value": _scalar_attr(value, scalar_type(result_type))},
                         result_types=[result_type])

    def verify_(self) -> None:
        if self.value.type != scalar_type(self.result.type):
            raise VerifyException(f"spirv.Constant value type {self.value.type} does not match "
                                  f"{self.result.type}")

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        pos = parser.pos
        if parser.parse_optional_keyword("true"):
            raw: int | float = 1
        elif parser.parse_optional_keyword("false"):
            raw = 0
        else:
            raw = parser.parse_number()
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        try:
            op = cls(raw, ty)
        except (VerifyException, ValueError, TypeError) as e:
            parser.raise_error(str(e), pos, parser.pos)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        v = self.value
        if isinstance(v, IntegerAttr) and v.type == IntegerType(1):
            text = "true" if v.value.data else "false"
        elif isinstance(v, FloatAttr):
            text = repr(v.value.data)
        else:
            text = str(v.value.data)
        printer.print_string(f" {text} : ")
        printer.print_attribute(self.result.type)
        printer.print_op_attributes(self.attributes)


def scalar_type(t: Attribute) -> Attribute:
    """Element type of a cooperative matrix or vector type; the type itself for a scalar."""
    if isinstance(t, COOP_MATRIX_TYPES):
        return t.element_type
    from xdsl.dialects.builtin import VectorType

    if isinstance(t, VectorType):
        return t.element_type
    return t


def _scalar_attr(value: int | float | bool, t: Attribute) -> IntegerAttr | FloatAttr:
    if isinstance(t, IntegerType):
        if t.width.data == 1:
            return IntegerAttr(int(bool(value)), t)
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(f"integer constant expected for {t}")
        return IntegerAttr(int(value), t)
    return FloatAttr(float(value), t)  # raises for a non-float type


@irdl_op_definition
class AddressOfOp(IRDLOperation):
    """`%p = spirv.mlir.addressof @var : !spirv.ptr<...>`: a global variable as an SSA value (emits
    no instruction)."""

    name = "spirv.mlir.addressof"
    variable = prop_def(SymbolRefAttr)
    pointer = result_def(PointerType)
    assembly_format = "$variable attr-dict `:` type($pointer)"

    def __init__(self, variable: str | SymbolRefAttr, pointer_type: PointerType):
        if isinstance(variable, str):
            variable = SymbolRefAttr(variable)
        if not _fast_init(self, (), [pointer_type], {"variable": variable}):
            super().__init__(properties={"variable": variable}, result_types=[pointer_type])


@irdl_op_definition
class GlobalVariableOp(IRDLOperation):
    """`spirv.GlobalVariable @name bind(set, binding) built_in("WorkgroupId") : !spirv.ptr<T, SC>`:
    a module-level OpVariable with DescriptorSet/Binding/BuiltIn decorations."""

    name = "spirv.GlobalVariable"
    sym_name = prop_def(StringAttr)
    type = prop_def(PointerType)
    descriptor_set = opt_prop_def(IntAttr)
    binding = opt_prop_def(IntAttr)
    built_in = opt_prop_def(StringAttr)
    decorations = opt_prop_def(StringAttr)  # further decorations, "NonWritable|Restrict" (no <id> params)
    traits = traits_def(SymbolOpInterface())

    def __init__(self, sym_name: str, type: PointerType, descriptor_set: int | None = None,
                 binding: int | None = None, built_in: str | None = None, decorations: str | None = None):
        props: dict[str, Attribute] = {"sym_name": StringAttr(sym_name), "type": type}
        if decorations:
            props["decorations"] = StringAttr(decorations)
        if descriptor_set is not None:
            props["descriptor_set"] = IntAttr(descriptor_set)
        if binding is not None:
            props["binding"] = IntAttr(binding)
        if built_in is not None:
            props["built_in"] = StringAttr(built_in)
        super().__init__(properties=props)

    def verify_(self) -> None:
        if self.built_in is not None:
            _check_enumerant("BuiltIn", self.built_in.data)
        if (self.descriptor_set is None) != (self.binding is None):
            raise VerifyException("spirv.GlobalVariable needs both descriptor_set and binding, or neither")
        if self.decorations is not None:
            names = [n for n, _ in parse_enum_operand("Decoration", self.decorations.data)]
            if len(set(names)) != len(names):
                raise VerifyException("a decoration may be applied to a variable only once")
        sc = self.type.storage_class.data
        if sc in ("StorageBuffer", "Uniform", "PushConstant"):
            st = self.type.pointee
            if not isinstance(st, StructType) or not st.block.data:
                raise VerifyException(f"a {sc} variable must be a struct decorated Block (Vulkan, "
                                      "VUID-StandaloneSpirv-OpTypeRuntimeArray-04680 and 14.5.2)")
            check_block_layout(st, sc, f"@{self.sym_name.data}")

    @classmethod
    def parse(cls, parser: Parser) -> GlobalVariableOp:
        name = parser.parse_symbol_name().data
        ds = bd = None
        bi = None
        if parser.parse_optional_keyword("bind"):
            parser.parse_punctuation("(")
            ds = parser.parse_integer(allow_negative=False)
            parser.parse_punctuation(",")
            bd = parser.parse_integer(allow_negative=False)
            parser.parse_punctuation(")")
        if parser.parse_optional_keyword("built_in"):
            parser.parse_punctuation("(")
            bi = parser.parse_str_literal()
            parser.parse_punctuation(")")
        decos = None
        if parser.parse_optional_keyword("decorations"):
            parser.parse_punctuation("(")
            decos = parser.parse_str_literal()
            parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        ty = parser.parse_type()
        if not isinstance(ty, PointerType):
            parser.raise_error("spirv.GlobalVariable type must be !spirv.ptr", pos, parser.pos)
        op = cls(name, ty, ds, bd, bi, decos)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        if self.descriptor_set is not None and self.binding is not None:
            printer.print_string(f" bind({self.descriptor_set.data}, {self.binding.data})")
        if self.built_in is not None:
            printer.print_string(f' built_in("{self.built_in.data}")')
        if self.decorations is not None:
            printer.print_string(f' decorations("{self.decorations.data}")')
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.type)


@irdl_op_definition
class EntryPointOp(IRDLOperation):
    """`spirv.EntryPoint "GLCompute" @fn as "main", @var1, @var2`: OpEntryPoint with its interface.

    `entry_name` is the entry point's Name operand when it differs from the function's symbol
    (the reader keeps both: a function's OpName need not match its entry point's name); without
    it the writer uses the symbol."""

    name = "spirv.EntryPoint"
    execution_model = prop_def(StringAttr)
    fn = prop_def(SymbolRefAttr)
    interface = prop_def(ArrayAttr[SymbolRefAttr])
    entry_name = opt_prop_def(StringAttr)

    def __init__(self, execution_model: str, fn: str, interface: Sequence[str], entry_name: str | None = None):
        props: dict[str, Attribute] = {
            "execution_model": StringAttr(execution_model), "fn": SymbolRefAttr(fn),
            "interface": ArrayAttr(SymbolRefAttr(s) for s in interface)}
        if entry_name is not None and entry_name != fn:
            props["entry_name"] = StringAttr(entry_name)
        super().__init__(properties=props)

    @property
    def entry_point_name(self) -> str:
        """The Name operand of OpEntryPoint."""
        return self.entry_name.data if self.entry_name is not None else self.fn.root_reference.data

    def verify_(self) -> None:
        _check_enumerant("ExecutionModel", self.execution_model.data)
        names = [s.root_reference.data for s in self.interface]
        if len(set(names)) != len(names):
            raise VerifyException("OpEntryPoint: an Interface <id> may be listed only once")

    @classmethod
    def parse(cls, parser: Parser) -> EntryPointOp:
        model = parser.parse_str_literal()
        fn = parser.parse_symbol_name().data
        entry = parser.parse_str_literal() if parser.parse_optional_keyword("as") else None
        iface = []
        while parser.parse_optional_punctuation(","):
            iface.append(parser.parse_symbol_name().data)
        op = cls(model, fn, iface, entry)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f' "{self.execution_model.data}" ')
        printer.print_attribute(self.fn)
        if self.entry_name is not None:
            printer.print_string(" as ")
            printer.print_string_literal(self.entry_name.data)
        for s in self.interface:
            printer.print_string(", ")
            printer.print_attribute(s)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class ExecutionModeOp(IRDLOperation):
    """`spirv.ExecutionMode @main "LocalSize", 32, 1, 1`: OpExecutionMode with literal operands."""

    name = "spirv.ExecutionMode"
    fn = prop_def(SymbolRefAttr)
    execution_mode = prop_def(StringAttr)
    values = prop_def(ArrayAttr[IntAttr])

    def __init__(self, fn: str, execution_mode: str, values: Sequence[int]):
        super().__init__(properties={"fn": SymbolRefAttr(fn), "execution_mode": StringAttr(execution_mode),
                                     "values": ArrayAttr(IntAttr(v) for v in values)})

    def verify_(self) -> None:
        _check_enumerant("ExecutionMode", self.execution_mode.data)
        params = ENUMS["ExecutionMode"][self.execution_mode.data][3]
        if len(params) != len(self.values) or any(k != "LiteralInteger" for k, _ in params):
            raise VerifyException(f"ExecutionMode {self.execution_mode.data} takes {len(params)} "
                                  "literal operand(s)")
        if self.execution_mode.data in ("LocalSize", "LocalSizeHint") and 0 in [v.data for v in self.values]:
            raise VerifyException(f"{self.execution_mode.data}: the workgroup size must not have a zero dimension")

    @classmethod
    def parse(cls, parser: Parser) -> ExecutionModeOp:
        fn = parser.parse_symbol_name().data
        mode = parser.parse_str_literal()
        vals = []
        while parser.parse_optional_punctuation(","):
            vals.append(parser.parse_integer(allow_negative=False))
        op = cls(fn, mode, vals)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.fn)
        printer.print_string(f' "{self.execution_mode.data}"')
        for v in self.values:
            printer.print_string(f", {v.data}")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class ExecutionModeIdOp(IRDLOperation):
    """`spirv.ExecutionModeId @main "LocalSizeId", %x, %y, %z : i32, i32, i32`: OpExecutionModeId
    (SPIR-V 1.2), an execution mode whose operands are `<id>`s of constants or specialization
    constants (module-level values)."""

    name = "spirv.ExecutionModeId"
    fn = prop_def(SymbolRefAttr)
    execution_mode = prop_def(StringAttr)
    args = var_operand_def()

    def __init__(self, fn: str, execution_mode: str, args: Sequence[SSAValue]):
        super().__init__(operands=[list(args)],
                         properties={"fn": SymbolRefAttr(fn), "execution_mode": StringAttr(execution_mode)})

    def verify_(self) -> None:
        _check_enumerant("ExecutionMode", self.execution_mode.data)
        params = ENUMS["ExecutionMode"][self.execution_mode.data][3]
        if len(params) != len(self.args) or any(k != "IdRef" for k, _ in params):
            raise VerifyException(f"OpExecutionModeId: ExecutionMode {self.execution_mode.data} does not take "
                                  f"{len(self.args)} <id> operand(s) (use spirv.ExecutionMode for literal ones)")

    @classmethod
    def parse(cls, parser: Parser) -> ExecutionModeIdOp:
        fn = parser.parse_symbol_name().data
        mode = parser.parse_str_literal()
        args = []
        while parser.parse_optional_punctuation(","):
            args.append(parser.parse_operand())
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        if args:  # the operands' types, printed for readability (the operands carry them)
            parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        op = cls(fn, mode, args)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.fn)
        printer.print_string(f' "{self.execution_mode.data}"')
        for a in self.args:
            printer.print_string(", ")
            printer.print_operand(a)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([a.type for a in self.args], printer.print_attribute)


@irdl_op_definition
class FuncOp(IRDLOperation):
    """`spirv.func @main() -> () { ... }`: OpFunction; entry block arguments are
    OpFunctionParameters, other block arguments OpPhis. `function_control` is a FunctionControl
    enum string (default "None"). `param_decorations` (optional) holds one Decoration name per
    parameter, "" for none: "Aliased" / "Restrict", which a PhysicalStorageBuffer pointer
    parameter must carry exactly one of (SPV_KHR_physical_storage_buffer)."""

    name = "spirv.func"
    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    function_control = opt_prop_def(StringAttr)
    param_decorations = opt_prop_def(ArrayAttr[StringAttr])
    body = region_def()
    traits = traits_def(SymbolOpInterface())

    def __init__(self, sym_name: str, function_type: FunctionType, body: Region | None = None,
                 function_control: str | None = None):
        if body is None:
            body = Region(Block(arg_types=function_type.inputs))
        super().__init__(properties={"sym_name": StringAttr(sym_name), "function_type": function_type,
                                     **_props(function_control=function_control)},
                         regions=[body])

    def verify_(self) -> None:
        if len(self.function_type.outputs) > 1:
            raise VerifyException("spirv.func returns at most one value")
        if not self.body.blocks:
            raise VerifyException("spirv.func needs a body")
        if tuple(a.type for a in self.body.blocks[0].args) != tuple(self.function_type.inputs):
            raise VerifyException("spirv.func entry block arguments must match the function type")
        if self.function_control is not None:
            parse_enum_operand("FunctionControl", self.function_control.data)
        if self.param_decorations is not None:
            decos = [d.data for d in self.param_decorations]
            if len(decos) != len(self.function_type.inputs) or not set(decos) <= {"", "Aliased", "Restrict"}:
                raise VerifyException("spirv.func param_decorations: one of \"\", \"Aliased\", "
                                      "\"Restrict\" per parameter")
        for i, t in enumerate(self.function_type.inputs):
            if isinstance(t, PointerType) and t.storage_class.data == "PhysicalStorageBuffer" and (
                    self.param_decorations is None or not self.param_decorations.data[i].data):
                raise VerifyException(f"spirv.func parameter {i} is a PhysicalStorageBuffer pointer: it must "
                                      "be decorated with exactly one of Aliased or Restrict")

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name, inputs, outputs, region, extra, _, _ = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type"))
        op = cls(name, FunctionType.from_lists(inputs, outputs), region)
        if extra is not None:
            for k, v in extra.data.items():
                if k in ("function_control", "param_decorations"):
                    op.properties[k] = v
                else:
                    op.attributes[k] = v
        return op

    def print(self, printer: Printer) -> None:
        attrs = dict(self.attributes)
        if self.function_control is not None:
            attrs["function_control"] = self.function_control
        if self.param_decorations is not None:
            attrs["param_decorations"] = self.param_decorations
        print_func_op_like(printer, self.sym_name, self.function_type, self.body, attrs,
                           reserved_attr_names=("sym_name", "function_type"))


@irdl_op_definition
class ModuleOp(IRDLOperation):
    """`spirv.module Logical Vulkan requires ["Shader"] extensions [] version "1.6" { ... }`.

    Capabilities/extensions are grammar names; `version` (major.minor, default "1.6") sets the
    header. `coopdialect.spirv.requirements.derive_requirements` fills the two lists."""

    name = "spirv.module"
    addressing_model = prop_def(StringAttr)
    memory_model = prop_def(StringAttr)
    capabilities = prop_def(ArrayAttr[StringAttr])
    extensions = prop_def(ArrayAttr[StringAttr])
    version = opt_prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), SymbolTable(), IsolatedFromAbove())

    def __init__(self, ops: Sequence[Operation] = (), addressing_model: str = "Logical",
                 memory_model: str = "Vulkan", capabilities: Sequence[str] = (),
                 extensions: Sequence[str] = (), version: str | None = None):
        props: dict[str, Attribute] = {
            "addressing_model": StringAttr(addressing_model), "memory_model": StringAttr(memory_model),
            "capabilities": ArrayAttr(StringAttr(c) for c in capabilities),
            "extensions": ArrayAttr(StringAttr(e) for e in extensions)}
        if version is not None:
            props["version"] = StringAttr(version)
        super().__init__(properties=props, regions=[Region(Block(list(ops)))])

    def verify_(self) -> None:
        _check_enumerant("AddressingModel", self.addressing_model.data)
        _check_enumerant("MemoryModel", self.memory_model.data)
        for c in self.capabilities:
            _check_enumerant("Capability", c.data)
        if self.version is not None:
            parse_version(self.version.data)

    @classmethod
    def parse(cls, parser: Parser) -> ModuleOp:
        am = parser.parse_identifier()
        mm = parser.parse_identifier()
        parser.parse_keyword("requires")
        caps = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_str_literal)
        parser.parse_keyword("extensions")
        exts = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_str_literal)
        version = None
        if parser.parse_optional_keyword("version"):
            version = parser.parse_str_literal()
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = parser.parse_region()
        op = cls((), am, mm, caps, exts, version)
        op.body.detach_block(0)
        region.move_blocks(op.body)
        if attrs is not None:
            op.attributes |= attrs.data
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.addressing_model.data} {self.memory_model.data} requires [")
        printer.print_string(", ".join(f'"{c.data}"' for c in self.capabilities))
        printer.print_string("] extensions [")
        printer.print_string(", ".join(f'"{e.data}"' for e in self.extensions))
        printer.print_string("]")
        if self.version is not None:
            printer.print_string(f' version "{self.version.data}"')
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    @property
    def ops(self):
        return self.body.block.ops


def parse_version(text: str) -> tuple[int, int]:
    """"1.6" -> (1, 6); raises VerifyException for anything but SPIR-V 1.0 .. 1.6."""
    try:
        major, minor = (int(p) for p in text.split("."))
    except ValueError:
        raise VerifyException(f"bad SPIR-V version '{text}'") from None
    if major != 1 or not 0 <= minor <= 6:
        raise VerifyException(f"unsupported SPIR-V version '{text}'")
    return major, minor


CORE_INSTRUCTION_OPS: list[type[SpirvInstruction]] = [
    IAddOp, ISubOp, IMulOp, SDivOp, UDivOp, SRemOp, SModOp, UModOp, FAddOp, FSubOp, FMulOp, FDivOp,
    BitwiseAndOp, BitwiseOrOp, BitwiseXorOp, ShiftLeftLogicalOp, ShiftRightLogicalOp,
    ShiftRightArithmeticOp, LogicalAndOp, LogicalOrOp, MatrixTimesScalarOp, *COMPARE_OPS, SNegateOp,
    FNegateOp, NotOp, LogicalNotOp, ConvertFToUOp, ConvertFToSOp, ConvertSToFOp, ConvertUToFOp,
    UConvertOp, SConvertOp, FConvertOp, BitcastOp, SelectOp, CompositeConstructOp, CompositeExtractOp,
    CompositeInsertOp, UndefOp, LoadOp, StoreOp, AccessChainOp, KHRCooperativeMatrixLoadOp,
    KHRCooperativeMatrixStoreOp, KHRCooperativeMatrixMulAddOp, KHRCooperativeMatrixLengthOp,
    NVCooperativeMatrixLoadOp, NVCooperativeMatrixStoreOp, NVCooperativeMatrixMulAddOp,
    NVCooperativeMatrixLengthOp, BranchOp, BranchConditionalOp, LoopMergeOp, SelectionMergeOp,
    ReturnOp, ReturnValueOp,
]
"""The core instruction ops; `coopdialect.dialects.spirv_dialect` adds the other files' to them
(`INSTRUCTION_OPS`, `OP_BY_OPNAME`) and assembles the `spirv` Dialect."""
