"""General SPIR-V constructs that front ends such as glslang emit, part of the `spirv` dialect
(registered by `coopdialect.dialects.spirv`), so that the binary reader can read their modules
back (SPIR-V spec 3.42 instructions; 2.4 logical layout):

* `spirv.Variable` (OpVariable, Function storage class, optional initializer): a function-local
  variable; it sits at the start of the entry block (spec 2.4). Module-level variables stay
  `spirv.GlobalVariable`.
* `spirv.FunctionCall @callee(args)` (OpFunctionCall): the callee is a symbol reference to a
  `spirv.func`; a call to a function returning void has one result of type `!spirv.void` (the
  instruction has a result id either way).
* `spirv.ExtInst` (OpExtInst): `set` names the extended instruction set ("GLSL.std.450"),
  `instruction` is its instruction number; the writer emits one OpExtInstImport per set.
* `spirv.ExtInstImport "set"` (module level, OpExtInstImport): an import kept even when no
  instruction uses it (glslang always imports GLSL.std.450).
* `spirv.ConstantComposite` (OpConstantComposite with constituents that are not all one scalar
  splat; a splat stays `spirv.Constant`): operands are constants, hoisted like `spirv.Constant`.
* `spirv.SpecConstant` (OpSpecConstant / OpSpecConstantTrue / OpSpecConstantFalse): a scalar
  specialization constant with its default value and SpecId decoration (`spec_id`).
* `spirv.ControlBarrier %exec, %mem, %sem` (OpControlBarrier, spec 3.42.20): the three operands
  are `<id>`s of i32 constants (Execution Scope, Memory Scope, Memory Semantics), as in binary.
* `spirv.SpecConstantOperation` (OpSpecConstantOp): a specialization-constant expression, hoisted
  like the constants; glslang emits it for `length()` of an NV matrix and expressions over it.
* `spirv.Source` (module level, OpSource + OpSourceExtension): debug information kept so that
  it round-trips: source language (a SourceLanguage enumerant), version and extension names.
* the other instructions glslang emits in compute shaders: `spirv.VectorShuffle %a, %b
  {indices = array<i32: ...>}` (OpVectorShuffle, literal Components), `spirv.CopyObject`,
  `spirv.VectorTimesScalar`, `spirv.FRem` / `spirv.FMod`, the unordered float comparisons
  `spirv.FUnord*` (glslang's `!=` on floats is OpFUnordNotEqual), `spirv.IsNan` / `spirv.IsInf`,
  and the terminator `spirv.Unreachable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IntAttr, IntegerAttr, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException

from coopdialect.dialects.spirv import (
    ConstantOp,
    SpirvInstruction,
    _binary,
    _Compare,
    _IndexedComposite,
    _scalar_attr,
    _Unary,
    scalar_type,
)
from coopdialect.dialects.spirv_types import PointerType, _check_enumerant


@irdl_op_definition
class VariableOp(SpirvInstruction):
    """`%v = spirv.Variable [%init] : !spirv.ptr<T, Function>`: a function-local OpVariable.

    The StorageClass operand is the result pointer's storage class, which must be Function (spec
    3.42.8: a variable inside a function has Function storage). `initializer` is optional."""

    name = "spirv.Variable"
    OPNAME: ClassVar[str] = "OpVariable"
    initializer = opt_operand_def()
    result = result_def(PointerType)
    assembly_format = "($initializer^ `:` type($initializer))? attr-dict `:` type($result)"

    def __init__(self, result_type: PointerType, initializer: SSAValue | None = None):
        super().__init__(operands=[initializer], result_types=[result_type])

    def spirv_operands(self) -> list[object]:
        return [("enum", "StorageClass", self.result.type.storage_class.data), *self.operands]

    @classmethod
    def from_spirv(cls, result_types: list[Attribute], items: list[object]) -> SpirvInstruction:
        if not items or not isinstance(items[0], tuple) or items[0][1] != "StorageClass":
            raise ValueError("OpVariable needs a StorageClass operand")
        rest = items[1:]
        if len(rest) > 1 or any(not isinstance(i, SSAValue) for i in rest):
            raise ValueError("OpVariable takes at most one initializer <id>")
        rt = result_types[0]
        if not isinstance(rt, PointerType) or rt.storage_class.data != items[0][2]:
            raise ValueError("OpVariable storage class differs from its pointer type's")
        return cls(rt, rest[0] if rest else None)  # type: ignore[arg-type]

    def verify_(self) -> None:
        if self.result.type.storage_class.data != "Function":
            raise VerifyException("spirv.Variable: a variable in a function has Function storage "
                                  "(module-level variables are spirv.GlobalVariable)")
        if self.initializer is not None and self.initializer.type != self.result.type.pointee:
            raise VerifyException("spirv.Variable: the initializer's type must be the pointee type")


@irdl_op_definition
class FunctionCallOp(SpirvInstruction):
    """`%r = spirv.FunctionCall @callee(%a, %b)`: OpFunctionCall; `%r` has the callee's return type
    (`!spirv.void` when it returns nothing)."""

    name = "spirv.FunctionCall"
    OPNAME: ClassVar[str] = "OpFunctionCall"
    callee = prop_def(SymbolRefAttr)
    arguments = var_operand_def()
    result = result_def()
    assembly_format = "$callee `(` $arguments `)` attr-dict `:` functional-type($arguments, $result)"

    def __init__(self, callee: str | SymbolRefAttr, arguments: Sequence[SSAValue], result_type: Attribute):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        super().__init__(operands=[list(arguments)], result_types=[result_type],
                         properties={"callee": callee})

    def spirv_operands(self) -> list[object]:
        return [self.callee, *self.operands]

    @classmethod
    def from_spirv(cls, result_types: list[Attribute], items: list[object]) -> SpirvInstruction:
        if not items or not isinstance(items[0], SymbolRefAttr):
            raise ValueError("OpFunctionCall: Function operand is not a function")
        args = items[1:]
        if any(not isinstance(a, SSAValue) for a in args):
            raise ValueError("OpFunctionCall: arguments must be values")
        return cls(items[0], args, result_types[0])  # type: ignore[arg-type]


@irdl_op_definition
class ExtInstOp(SpirvInstruction):
    """`%r = spirv.ExtInst {set = "GLSL.std.450", instruction = 40} (%a, %b)`: OpExtInst.

    `instruction` is the instruction number in the extended set (literal, spec 3.42.2)."""

    name = "spirv.ExtInst"
    OPNAME: ClassVar[str] = "OpExtInst"
    set = prop_def(StringAttr)
    instruction = prop_def(IntAttr)
    arguments = var_operand_def()
    result = result_def()
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$arguments attr-dict `:` functional-type($arguments, $result)"

    def __init__(self, set_name: str, instruction: int, arguments: Sequence[SSAValue], result_type: Attribute):
        super().__init__(operands=[list(arguments)], result_types=[result_type],
                         properties={"set": StringAttr(set_name), "instruction": IntAttr(instruction)})


@irdl_op_definition
class ExtInstImportOp(IRDLOperation):
    """`spirv.ExtInstImport "GLSL.std.450"` (module level): OpExtInstImport of an instruction set."""

    name = "spirv.ExtInstImport"
    set = prop_def(StringAttr)
    assembly_format = "$set attr-dict"

    def __init__(self, set_name: str):
        super().__init__(properties={"set": StringAttr(set_name)})


class CompositeConstant(IRDLOperation):
    """Base of `spirv.ConstantComposite` and `spirv.SpecConstantComposite`."""

    constituents = var_operand_def()
    result = result_def()
    assembly_format = "$constituents attr-dict `:` functional-type($constituents, $result)"

    def __init__(self, constituents: Sequence[SSAValue], result_type: Attribute):
        super().__init__(operands=[list(constituents)], result_types=[result_type])

    def verify_(self) -> None:
        for c in self.constituents:
            if not isinstance(c.owner, CONSTANT_OPS):
                raise VerifyException("spirv.ConstantComposite constituents must be constants")
        from coopdialect.dialects import spirv_rules

        spirv_rules.check_composite_constituents(self.result.type, [c.type for c in self.constituents],
                                                 "OpConstantComposite")


@irdl_op_definition
class ConstantCompositeOp(CompositeConstant):
    """`%c = spirv.ConstantComposite %x, %y, %z : (i32, i32, i32) -> vector<3xi32>`:
    OpConstantComposite. Constituents are `spirv.Constant`, `spirv.ConstantComposite` or
    `spirv.SpecConstant` results; the writer hoists it with the constants."""

    name = "spirv.ConstantComposite"



@irdl_op_definition
class SpecConstantCompositeOp(CompositeConstant):
    """`%c = spirv.SpecConstantComposite %x, %y, %z : (i32, i32, i32) -> vector<3xi32>`:
    OpSpecConstantComposite (a composite of specialization constants, e.g. glslang's
    gl_WorkGroupSize with local_size_x_id); never merged with another composite."""

    name = "spirv.SpecConstantComposite"

@irdl_op_definition
class SpecConstantOp(IRDLOperation):
    """`%c = spirv.SpecConstant <{value = 4 : i32, spec_id = #builtin.int<1>}> : i32`: a scalar
    specialization constant (OpSpecConstant, or OpSpecConstantTrue/False for i1) with its default
    value; `spec_id` becomes the SpecId decoration."""

    name = "spirv.SpecConstant"
    value = prop_def(IntegerAttr | FloatAttr)
    spec_id = opt_prop_def(IntAttr)
    result = result_def()
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, value: int | float | bool, result_type: Attribute, spec_id: int | None = None):
        props: dict[str, Attribute] = {"value": _scalar_attr(value, result_type)}
        if spec_id is not None:
            props["spec_id"] = IntAttr(spec_id)
        super().__init__(properties=props, result_types=[result_type])

    def verify_(self) -> None:
        if scalar_type(self.result.type) != self.result.type or self.value.type != self.result.type:
            raise VerifyException("spirv.SpecConstant is a scalar whose value has the result type")


# Opcodes OpSpecConstantOp may compute (SPIR-V spec 3.42.7, Shader capability), plus the
# cooperative-matrix length instructions, which SPV_NV_cooperative_matrix and
# SPV_KHR_cooperative_matrix add to that list.
SPEC_CONSTANT_OPCODES = frozenset({
    "OpSConvert", "OpUConvert", "OpFConvert", "OpSNegate", "OpNot", "OpIAdd", "OpISub", "OpIMul",
    "OpUDiv", "OpSDiv", "OpUMod", "OpSRem", "OpSMod", "OpShiftRightLogical", "OpShiftRightArithmetic",
    "OpShiftLeftLogical", "OpBitwiseOr", "OpBitwiseXor", "OpBitwiseAnd", "OpVectorShuffle",
    "OpCompositeExtract", "OpCompositeInsert", "OpLogicalOr", "OpLogicalAnd", "OpLogicalNot",
    "OpLogicalEqual", "OpLogicalNotEqual", "OpSelect", "OpIEqual", "OpINotEqual", "OpULessThan",
    "OpSLessThan", "OpUGreaterThan", "OpSGreaterThan", "OpULessThanEqual", "OpSLessThanEqual",
    "OpUGreaterThanEqual", "OpSGreaterThanEqual", "OpQuantizeToF16",
    "OpCooperativeMatrixLengthNV", "OpCooperativeMatrixLengthKHR",
})


@irdl_op_definition
class SpecConstantOperationOp(IRDLOperation):
    """`%c = spirv.SpecConstantOperation "OpIAdd" (%a, %b) [] : (i32, i32) -> i32`:
    OpSpecConstantOp (module level). `opcode` names the instruction computed; `operands` are its
    `<id>` value operands (constants or other specialization constants), then `literals` holds
    what follows them: a type (the `<id>` of OpCooperativeMatrixLength*) or a literal integer
    (the indexes of OpCompositeExtract/Insert, the components of OpVectorShuffle)."""

    name = "spirv.SpecConstantOperation"
    opcode = prop_def(StringAttr)
    args = var_operand_def()
    literals = prop_def(ArrayAttr)
    result = result_def()

    def __init__(self, opcode: str, args: Sequence[SSAValue], literals: Sequence[Attribute], result_type: Attribute):
        super().__init__(operands=[list(args)], result_types=[result_type],
                         properties={"opcode": StringAttr(opcode), "literals": ArrayAttr(list(literals))})

    def verify_(self) -> None:
        op = self.opcode.data
        if op not in SPEC_CONSTANT_OPCODES:
            raise VerifyException(f"OpSpecConstantOp: {op} is not an opcode OpSpecConstantOp may compute "
                                  "(SPIR-V 3.42.7)")
        for a in self.args:
            if not isinstance(a.owner, CONSTANT_OPS):
                raise VerifyException("OpSpecConstantOp: operands must be constants or specialization constants")
        for lit in self.literals:
            if not isinstance(lit, IntAttr | TypeAttribute):
                raise VerifyException("OpSpecConstantOp: trailing operands are literal integers or a type")
        from coopdialect.dialects.spirv_types import COOP_MATRIX_TYPES

        if "Length" in op and (self.args or len(self.literals) != 1
                               or not isinstance(self.literals.data[0], COOP_MATRIX_TYPES)):
            raise VerifyException(f"OpSpecConstantOp {op}: takes one cooperative matrix type")

    @classmethod
    def parse(cls, parser):
        opcode = parser.parse_str_literal()
        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_operand)
        lits = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE,
            lambda: IntAttr(parser.parse_integer()) if parser._current_token.kind.name == "INTEGER_LIT"
            else parser.parse_type())
        parser.parse_punctuation(":")
        ft = parser.parse_function_type()
        op = cls(opcode, args, lits, ft.outputs.data[0])
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer):
        printer.print_string(f' "{self.opcode.data}" (')
        printer.print_list(self.args, printer.print_operand)
        printer.print_string(") [")
        printer.print_list(self.literals, lambda a: printer.print_string(str(a.data)) if isinstance(a, IntAttr)
                           else printer.print_attribute(a))
        printer.print_string("] : ")
        printer.print_function_type([a.type for a in self.args], [self.result.type])
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class SourceOp(IRDLOperation):
    """`spirv.Source` (module level): OpSource (`language` a SourceLanguage enumerant, `version`)
    and its OpSourceExtension names (`extensions`), debug information kept for round trips."""

    name = "spirv.Source"
    language = prop_def(StringAttr)
    version = prop_def(IntAttr)
    extensions = prop_def(ArrayAttr[StringAttr])
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict"

    def __init__(self, language: str, version: int, extensions: Sequence[str] = ()):
        super().__init__(properties={"language": StringAttr(language), "version": IntAttr(version),
                                     "extensions": ArrayAttr(StringAttr(e) for e in extensions)})

    def verify_(self) -> None:
        _check_enumerant("SourceLanguage", self.language.data)


CONSTANT_OPS: tuple[type, ...] = (ConstantOp, CompositeConstant, SpecConstantOp, SpecConstantOperationOp)

@irdl_op_definition
class ControlBarrierOp(SpirvInstruction):
    """`spirv.ControlBarrier %exec, %mem, %sem : i32, i32, i32`: OpControlBarrier (spec 3.42.20).

    Waits until every invocation of the Execution scope reached it; with Memory Semantics
    AcquireRelease|WorkgroupMemory and Memory scope Workgroup it also orders (and makes visible)
    the workgroup-memory accesses before and after it. Operands: `<id>`s of i32 constants."""

    name = "spirv.ControlBarrier"
    OPNAME: ClassVar[str] = "OpControlBarrier"
    execution = operand_def()
    memory = operand_def()
    semantics = operand_def()
    assembly_format = "operands attr-dict `:` type(operands)"

    def __init__(self, execution: SSAValue, memory: SSAValue, semantics: SSAValue):
        super().__init__(operands=[execution, memory, semantics])


@irdl_op_definition
class VectorShuffleOp(_IndexedComposite):
    """`spirv.VectorShuffle %a, %b {indices = array<i32: ...>}`: OpVectorShuffle (spec 3.42.12).
    Component i of the result is component `indices[i]` of the concatenation of %a and %b
    (0xFFFFFFFF: undefined); the result is a vector of `len(indices)` components of %a's type."""

    name = "spirv.VectorShuffle"
    OPNAME: ClassVar[str] = "OpVectorShuffle"
    vector1 = operand_def()
    vector2 = operand_def()
    result = result_def()

    def spirv_operands(self) -> list[object]:
        return [*self.operands, *(c & 0xFFFFFFFF for c in self.indices.get_values())]

    @classmethod
    def from_spirv(cls, result_types: list[Attribute], items: list[object]) -> SpirvInstruction:
        # the undefined Component 0xFFFFFFFF is -1 in the i32 array
        return super().from_spirv(result_types, [i - (1 << 32) if isinstance(i, int) and i >= 1 << 31 else i
                                                 for i in items])

    def verify_(self) -> None:
        from xdsl.dialects.builtin import VectorType

        a, b, r = self.vector1.type, self.vector2.type, self.result.type
        if not all(isinstance(t, VectorType) for t in (a, b, r)) or not (
                a.element_type == b.element_type == r.element_type):
            raise VerifyException("Vector 1, Vector 2 and Result Type must be vectors of one component type "
                                  "(OpVectorShuffle)")
        n = a.get_shape()[0] + b.get_shape()[0]
        comps = list(self.indices.get_values())
        if len(comps) != r.get_shape()[0] or any(c != -1 and not 0 <= c < n for c in comps):
            raise VerifyException(f"OpVectorShuffle needs one Component per result component, each below {n} "
                                  "(or 0xFFFFFFFF)")


@irdl_op_definition
class UnreachableOp(SpirvInstruction):
    """`spirv.Unreachable`: OpUnreachable, a block terminator that is never executed."""

    name = "spirv.Unreachable"
    OPNAME: ClassVar[str] = "OpUnreachable"
    traits = traits_def(IsTerminator())
    assembly_format = "attr-dict"


CopyObjectOp = _binary("CopyObject", "OpCopyObject", _Unary)
IsNanOp = _binary("IsNan", "OpIsNan", _Unary)
IsInfOp = _binary("IsInf", "OpIsInf", _Unary)
FRemOp = _binary("FRem", "OpFRem")
FModOp = _binary("FMod", "OpFMod")
VectorTimesScalarOp = _binary("VectorTimesScalar", "OpVectorTimesScalar")
UNORDERED_COMPARE_OPS = [_binary(n, "Op" + n, _Compare) for n in (
    "FUnordEqual", "FUnordNotEqual", "FUnordLessThan", "FUnordLessThanEqual", "FUnordGreaterThan",
    "FUnordGreaterThanEqual")]

GENERAL_INSTRUCTION_OPS = [VariableOp, FunctionCallOp, ExtInstOp, ControlBarrierOp, VectorShuffleOp, UnreachableOp,
                           CopyObjectOp, IsNanOp, IsInfOp, FRemOp, FModOp, VectorTimesScalarOp,
                           *UNORDERED_COMPARE_OPS]
GENERAL_MODULE_OPS = [ExtInstImportOp, ConstantCompositeOp, SpecConstantCompositeOp, SpecConstantOp,
                      SpecConstantOperationOp, SourceOp]
