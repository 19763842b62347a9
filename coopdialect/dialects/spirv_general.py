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
* `spirv.Source` (module level, OpSource + OpSourceExtension): debug information kept so that
  it round-trips: source language (a SourceLanguage enumerant), version and extension names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IntAttr, IntegerAttr, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from coopdialect.dialects.spirv import (
    ConstantOp,
    PointerType,
    SpirvInstruction,
    _check_enumerant,
    _scalar_attr,
    scalar_type,
)


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


@irdl_op_definition
class ConstantCompositeOp(IRDLOperation):
    """`%c = spirv.ConstantComposite %x, %y, %z : (i32, i32, i32) -> vector<3xi32>`:
    OpConstantComposite. Constituents are `spirv.Constant`, `spirv.ConstantComposite` or
    `spirv.SpecConstant` results; the writer hoists it with the constants."""

    name = "spirv.ConstantComposite"
    constituents = var_operand_def()
    result = result_def()
    assembly_format = "$constituents attr-dict `:` functional-type($constituents, $result)"

    def __init__(self, constituents: Sequence[SSAValue], result_type: Attribute):
        super().__init__(operands=[list(constituents)], result_types=[result_type])

    def verify_(self) -> None:
        for c in self.constituents:
            if not isinstance(c.owner, CONSTANT_OPS):
                raise VerifyException("spirv.ConstantComposite constituents must be constants")


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


CONSTANT_OPS: tuple[type, ...] = (ConstantOp, ConstantCompositeOp, SpecConstantOp)

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


GENERAL_INSTRUCTION_OPS = [VariableOp, FunctionCallOp, ExtInstOp, ControlBarrierOp]
GENERAL_MODULE_OPS = [ExtInstImportOp, ConstantCompositeOp, SpecConstantOp, SourceOp]
