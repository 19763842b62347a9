"""convert-coop-to-spirv rules for tensor addressing and cooperative-matrix-2 ops
(SPV_NV_tensor_addressing, SPV_NV_cooperative_matrix2); registered into `_KernelLowering.RULES`
when `passes/convert_coop_to_spirv.py` imports this module.

* `!tensor_addr.layout<D, M>` / `!tensor_addr.view<D, H, p...>` -> `!spirv.NV.tensor_layout` /
  `!spirv.NV.tensor_view` (OpTypeTensorLayoutNV / OpTypeTensorViewNV, operands as constant ids).
* `tensor_addr.create_*` and the set/slice/clip ops -> one instruction each (i32 operands);
  `tensor_addr.layout_constant` / `view_constant` (fold-tensor-views' output) -> OpCreate* followed
  by the shortest instruction chain building that state (`layout_chain` / `view_chain`), with
  constant operands.
* `coop.load_tensor` / `store_tensor` -> OpCooperativeMatrixLoadTensorNV / StoreTensorNV on a
  pointer to element 0 of the buffer's runtime array (the spec: Pointer must point into an array;
  the addressing adds the element index), Memory Operand "None" unless given, TensorView when the
  op has a view.
* `coop.reduce` / `convert` / `transpose` / `per_element_op` -> ReduceNV / ConvertNV /
  TransposeNV / PerElementOpNV; the referenced `func.func`s become `spirv.func`s with
  OpFunctionParameters and OpReturnValue (`lower_helper_function`).

* a DecodeFunc (`coop.load_tensor ... decode @f`) -> the DecodeFunc operand and a function whose
  first parameter is a PhysicalStorageBuffer pointer (`passes/convert_decode_func_to_spirv.py`).

Refused (one-line CoopError): flavor=nv (these instructions use OpTypeCooperativeMatrixKHR).
"""

from __future__ import annotations

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FunctionType, MemRefType, i32
from xdsl.ir import Attribute, Operation, SSAValue

from coopdialect.errors import CoopError
from coopdialect.dialects import coop_nv2
from coopdialect.dialects import spirv as sp
from coopdialect.dialects import spirv_nv2 as nv2
from coopdialect.dialects import tensor_addr as ta
from coopdialect.dialects.coop import MatrixType
from coopdialect.passes import convert_decode_func_to_spirv as _decode
from coopdialect.passes.spirv_memory_operand import memory_operand

_SET_CLASSES: dict[str, type[Operation]] = {c.OPNAME: c for c in nv2.TENSOR_SET_OPS}
_SET_BY_SOURCE_NAME: dict[str, type[Operation]] = {
    c.name: _SET_CLASSES[c.SPIRV_NAME] for c in (*ta.LAYOUT_SET_OPS, *ta.VIEW_SET_OPS)}


def tensor_type(t: Attribute) -> Attribute | None:
    """The SPIR-V type of a tensor layout/view type; None for other types."""
    if isinstance(t, ta.TensorLayoutType):
        return nv2.TensorLayoutType(t.rank, t.mode.value)
    if isinstance(t, ta.TensorViewType):
        return nv2.TensorViewType(t.rank, t.has_dims, t.perm)
    return None


def _khr_only(low, op: Operation) -> None:
    if low.flavor != "khr":
        raise CoopError(op, f"'{op.name}' lowers to SPV_NV_cooperative_matrix2, which extends "
                            "OpTypeCooperativeMatrixKHR: use convert-coop-to-spirv{flavor=khr}")


def lower_create(low, op: Operation) -> None:
    t = low.type(op, op.result.type)
    cls = nv2.CreateTensorLayoutOp if isinstance(t, nv2.TensorLayoutType) else nv2.CreateTensorViewOp
    low.set(op.result, low.emit(cls(t)).result)


def lower_set(low, op: Operation) -> None:
    cls = _SET_BY_SOURCE_NAME[op.name]
    new = cls(low.get(op, op.input), [low.get(op, v) for v in op.values])
    low.set(op.result, low.emit(new).result)


def lower_constant_state(low, op: Operation) -> None:
    t = low.type(op, op.result.type)
    if isinstance(op, ta.LayoutConstantOp):
        value = low.emit(nv2.CreateTensorLayoutOp(t)).result
        chain = ta.layout_chain(op.state)
    else:
        value = low.emit(nv2.CreateTensorViewOp(t)).result
        chain = ta.view_chain(op.state)
    for name, vals in chain:
        # operands are 32-bit integers: the uint32 bit pattern of each value
        consts = [low.const(ta.s32(v), i32) for v in vals]
        value = low.emit(_SET_BY_SOURCE_NAME[name](value, consts)).result
    low.set(op.result, value)


def _array_pointer(low, op: Operation, memref: SSAValue) -> SSAValue:
    """Pointer to element 0 of the storage buffer's runtime array."""
    if memref not in low.buffers:
        raise CoopError(op, "tensor loads and stores must address a kernel memref argument")
    sym, ptr_type = low.buffers[memref]
    array = ptr_type.pointee.members.data[0]
    elem_ptr = sp.PointerType(array.element_type, "StorageBuffer")
    base = low.emit(sp.AddressOfOp(sym, ptr_type)).pointer
    zero = low.const(0, i32)
    return low.emit(sp.AccessChainOp(base, [zero, zero], elem_ptr)).result


def _memory_operand(low, op: Operation) -> str | None:
    return memory_operand(op, op.memory_access)


def lower_load_tensor(low, op: coop_nv2.LoadTensorOp) -> None:
    _khr_only(low, op)
    low.matrix_type(op, op.result.type)
    ptr = _array_pointer(low, op, op.pointer)
    view = None if op.view is None else low.get(op, op.view)
    decode = None if op.decode_func is None else op.decode_func.root_reference.data
    new = nv2.CooperativeMatrixLoadTensorOp(ptr, low.get(op, op.object), low.get(op, op.layout), view,
                                            _memory_operand(low, op), decode)
    low.set(op.result, low.emit(new).result)


def lower_store_tensor(low, op: coop_nv2.StoreTensorOp) -> None:
    _khr_only(low, op)
    low.matrix_type(op, op.object.type)
    ptr = _array_pointer(low, op, op.pointer)
    view = None if op.view is None else low.get(op, op.view)
    low.emit(nv2.CooperativeMatrixStoreTensorOp(ptr, low.get(op, op.object), low.get(op, op.layout), view,
                                                _memory_operand(low, op)))


def lower_reduce(low, op: coop_nv2.ReduceOp) -> None:
    _khr_only(low, op)
    t = low.matrix_type(op, op.result.type)
    new = nv2.CooperativeMatrixReduceOp(low.get(op, op.matrix), coop_nv2.reduce_mode_str(op.reduce.data),
                                        op.combine_func.root_reference.data, t)
    low.set(op.result, low.emit(new).result)


def lower_convert(low, op: Operation) -> None:
    _khr_only(low, op)
    t = low.matrix_type(op, op.result.type)
    cls = nv2.CooperativeMatrixConvertOp if isinstance(op, coop_nv2.ConvertOp) else nv2.CooperativeMatrixTransposeOp
    low.set(op.result, low.emit(cls(low.get(op, op.matrix), t)).result)


def lower_per_element(low, op: coop_nv2.PerElementOp) -> None:
    _khr_only(low, op)
    low.matrix_type(op, op.result.type)
    new = nv2.CooperativeMatrixPerElementOpOp(low.get(op, op.matrix), op.func.root_reference.data,
                                              [low.get(op, v) for v in op.extra])
    low.set(op.result, low.emit(new).result)


def lower_maximumf(low, op: arith.MaximumfOp) -> None:
    # max as compare + select: equal to arith.maximumf except for NaN operands and +0/-0 ties
    a, b = low.get(op, op.lhs), low.get(op, op.rhs)
    gt = low.emit(sp.FOrdGreaterThanOp(a, b)).results[0]
    low.set(op.result, low.emit(sp.SelectOp(gt, a, b)).result)


def lower_minimumf(low, op: arith.MinimumfOp) -> None:
    a, b = low.get(op, op.lhs), low.get(op, op.rhs)
    lt = low.emit(sp.FOrdLessThanOp(a, b)).results[0]
    low.set(op.result, low.emit(sp.SelectOp(lt, a, b)).result)


def referenced_functions(module_ops) -> dict[str, Operation]:
    """Names of the `func.func`s used as CombineFunc / Func / DecodeFunc -> first use."""
    out: dict[str, Operation] = {}
    for top in module_ops:
        for op in top.walk():
            for prop in ("combine_func", "func", "decode_func"):
                ref = op.properties.get(prop)
                if ref is not None and isinstance(op, (coop_nv2.ReduceOp, coop_nv2.PerElementOp,
                                                       coop_nv2.LoadTensorOp)):
                    out.setdefault(ref.root_reference.data, op)
    return out


def lower_helper_function(lowering_cls, fn: func.FuncOp, flavor: str, target=None) -> list[Operation]:
    """A referenced `func.func` as a `spirv.func` with parameters: straight-line arith code and a
    `func.return` of one value (OpReturnValue). Tangled instructions are not allowed there (spec),
    and none of the lowered arith ops is one. A DecodeFunc goes to `convert_decode_func_to_spirv`."""
    if _decode.is_decode_function(fn):
        return _decode.lower_decode_function(lowering_cls, fn, flavor, target)
    low = lowering_cls(fn, flavor, helper=True, target=target)
    for i, t in enumerate(fn.function_type.inputs):
        if isinstance(t, MemRefType):
            raise CoopError(fn, f"parameter {i} of a function used by a coop op is a memref: only "
                                "a DecodeFunc's first parameter may be one")
    ins = [low.scalar_type(fn, t) for t in fn.function_type.inputs]
    outs = [low.scalar_type(fn, t) for t in fn.function_type.outputs]
    low.fn = sp.FuncOp(low.name, FunctionType.from_lists(ins, outs))
    low.block = low.fn.body.blocks[0]
    if len(fn.body.blocks) != 1:
        raise CoopError(fn, "a function used by a coop op must be one block of straight-line code")
    for old, new in zip(fn.body.blocks[0].args, low.block.args):
        low.set(old, new)
    for op in fn.body.blocks[0].ops:
        if isinstance(op, func.ReturnOp):
            if len(op.arguments) != 1:
                raise CoopError(op, "a function used by a coop op returns one value")
            low.emit(sp.ReturnValueOp(low.get(op, op.arguments[0])))
            continue
        rule = low.RULES.get(type(op))
        if rule is None:
            raise CoopError(op, "has no lowering to SPIR-V")
        rule(low, op)
    return [*low.constant_ops, low.fn]


def register(rules: dict) -> None:
    rules[ta.CreateLayoutOp] = lower_create
    rules[ta.CreateViewOp] = lower_create
    for cls in (*ta.LAYOUT_SET_OPS, *ta.VIEW_SET_OPS):
        rules[cls] = lower_set
    rules[ta.LayoutConstantOp] = lower_constant_state
    rules[ta.ViewConstantOp] = lower_constant_state
    rules[coop_nv2.LoadTensorOp] = lower_load_tensor
    rules[coop_nv2.StoreTensorOp] = lower_store_tensor
    rules[coop_nv2.ReduceOp] = lower_reduce
    rules[coop_nv2.ConvertOp] = lower_convert
    rules[coop_nv2.TransposeOp] = lower_convert
    rules[coop_nv2.PerElementOp] = lower_per_element
    rules[arith.MaximumfOp] = lower_maximumf
    rules[arith.MinimumfOp] = lower_minimumf
    _decode.register(rules)

