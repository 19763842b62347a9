"""Operand words of OpCooperativeMatrixLoadTensorNV / OpCooperativeMatrixStoreTensorNV
(SPV_NV_cooperative_matrix2, "Tensor Addressing Operands").

Their Tensor Addressing Operands take `<id>` parameters (TensorView, DecodeFunc), which the generic
enum encoding of `encoding.py` (literal parameters only) cannot express. Word layout after the
result type/id: Pointer, Object, TensorLayout, the Memory Operand (always present, "None" when
empty), then the Tensor Addressing Operands mask and its parameters in increasing bit order.
This is codec code: the dialect ops only hold the operands (`view`, `decode_func`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, SSAValue

from coopdialect.dialects import spirv_nv2
from coopdialect.spirv.encoding import decode_enum, encode_enum
from coopdialect.spirv.grammar_tables import ENUMS

IdOf = Callable[[object], object]
TENSOR_MEMORY_OPS = (spirv_nv2.CooperativeMatrixLoadTensorOp, spirv_nv2.CooperativeMatrixStoreTensorOp)
N_FIXED = 3  # Pointer, Object, TensorLayout


def _addressing_words(view: SSAValue | None, decode: SymbolRefAttr | None, id_of: IdOf) -> list[object]:
    table = ENUMS["TensorAddressingOperands"]
    mask, params = 0, []
    if view is not None:
        mask |= table["TensorView"][0]
        params.append(id_of(view))
    if decode is not None:
        mask |= table["DecodeFunc"][0]
        params.append(id_of(decode))
    return [mask, *params]


def _decode_addressing(words: Sequence[int], id_of: IdOf) -> tuple[object | None, object | None]:
    table = ENUMS["TensorAddressingOperands"]
    if not words:
        raise ValueError("missing Tensor Addressing Operands")
    mask, rest = words[0], list(words[1:])
    known = table["TensorView"][0] | table["DecodeFunc"][0]
    if mask & ~known:
        raise ValueError(f"unknown Tensor Addressing Operands bits 0x{mask & ~known:x}")
    view = decode = None
    for bit, name in ((table["TensorView"][0], "TensorView"), (table["DecodeFunc"][0], "DecodeFunc")):
        if mask & bit:
            if not rest:
                raise ValueError(f"missing the {name} operand")
            value = id_of(rest.pop(0))
            if name == "TensorView":
                view = value
            else:
                decode = value
    if rest:
        raise ValueError(f"{len(rest)} operand word(s) too many")
    return view, decode


def encode_tensor_memory(op: spirv_nv2.CooperativeMatrixLoadTensorOp | spirv_nv2.CooperativeMatrixStoreTensorOp,
                         id_of: IdOf) -> list[object]:
    """Operand words after the result id; `id_of` maps an SSA value or a function symbol to its id."""
    fixed = [id_of(v) for v in op.operands[:N_FIXED]]
    mo = op.properties.get("memory_operand")
    memory = mo.data if isinstance(mo, StringAttr) else "None"
    decode = op.properties.get("decode_func")
    return [*fixed, *encode_enum("MemoryAccess", memory), *_addressing_words(op.view, decode, id_of)]


def decode_tensor_memory(cls: type, result_types: list[Attribute], words: Sequence[int], id_of: IdOf):
    """Inverse of `encode_tensor_memory`: builds a `cls` op. Raises ValueError for a wrong word
    count, unknown mask bits or an operand of the wrong kind."""
    if len(words) < N_FIXED + 2:
        raise ValueError("too few operand words")
    fixed = [id_of(w) for w in words[:N_FIXED]]
    text, used = decode_enum("MemoryAccess", words, N_FIXED)
    view, decode = _decode_addressing(words[N_FIXED + used:], id_of)
    if not all(isinstance(v, SSAValue) for v in fixed) or (view is not None and not isinstance(view, SSAValue)):
        raise ValueError("Pointer, Object, TensorLayout and TensorView must be values")
    if decode is not None and not isinstance(decode, SymbolRefAttr):
        raise ValueError("DecodeFunc must be a function")
    props: dict[str, Attribute] = {}
    if text != "None":
        props["memory_operand"] = StringAttr(text)
    if decode is not None:
        props["decode_func"] = decode
    return cls.build(operands=[*fixed, view], result_types=result_types, properties=props)
