"""The `spirv` Dialect object and the opname table of every instruction op: the core ops of
`spirv.py`, SPV_NV_tensor_addressing / SPV_NV_cooperative_matrix2 (`spirv_nv2.py`) and the general
instructions (`spirv_general.py`: function-local variables, calls, extended instructions,
composite/spec constants, OpSource), with the types of `spirv_types.py`. Above those modules,
which import only downward."""

from __future__ import annotations

from xdsl.ir import Dialect

from coopdialect.dialects.spirv import (
    CORE_INSTRUCTION_OPS,
    AddressOfOp,
    ConstantOp,
    EntryPointOp,
    ExecutionModeIdOp,
    ExecutionModeOp,
    FuncOp,
    GlobalVariableOp,
    ModuleOp,
    SpirvInstruction,
)
from coopdialect.dialects.spirv_general import GENERAL_INSTRUCTION_OPS, GENERAL_MODULE_OPS
from coopdialect.dialects.spirv_nv2 import NV2_INSTRUCTION_OPS, NV2_TYPES
from coopdialect.dialects.spirv_types import (
    ArrayType,
    CooperativeMatrixType,
    NVCooperativeMatrixType,
    PointerType,
    RuntimeArrayType,
    StructType,
    VoidType,
)
from coopdialect.spirv.grammar_tables import INSTRUCTION_ALIASES, INSTRUCTIONS

INSTRUCTION_OPS: list[type[SpirvInstruction]] = [
    *CORE_INSTRUCTION_OPS, *NV2_INSTRUCTION_OPS, *GENERAL_INSTRUCTION_OPS]
"""Every instruction op; `OP_BY_OPNAME` maps the grammar's opnames (OPCODE_NAMES) to them (used
by the reader). An op keeps the name of the extension text it implements where the grammar has
since promoted the instruction (OpCooperativeMatrixReduceNV, now an alias of
OpCooperativeMatrixReduceEXT): it is found under the grammar's name too."""

assert all(c.OPNAME in INSTRUCTIONS for c in INSTRUCTION_OPS), "op names a missing instruction"
OP_BY_OPNAME: dict[str, type[SpirvInstruction]] = {
    INSTRUCTION_ALIASES.get(c.OPNAME, c.OPNAME): c for c in INSTRUCTION_OPS}

SPIRV = Dialect(
    "spirv",
    [ModuleOp, GlobalVariableOp, EntryPointOp, ExecutionModeOp, ExecutionModeIdOp, FuncOp, ConstantOp, AddressOfOp,
     *INSTRUCTION_OPS, *GENERAL_MODULE_OPS],
    [VoidType, PointerType, RuntimeArrayType, ArrayType, StructType, CooperativeMatrixType,
     NVCooperativeMatrixType, *NV2_TYPES],
)
