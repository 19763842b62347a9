"""convert-coop-to-spirv: a DecodeFunc (`coop.load_tensor ... decode @f`) as a SPIR-V function
(SPV_NV_cooperative_matrix2, "Tensor Layout and View": decode functions; capability
CooperativeMatrixBlockLoadsNV).

The IR function `(memref<N x E> %m, i32 %index, Dim × i32 blockCoord, Dim × i32 coordInBlock) -> T`
becomes `OpFunction T (ptr, blockCoord, coordInBlock)`:

* `ptr`: `OpTypePointer PhysicalStorageBuffer` to a Block struct of one runtime array of E
  (ArrayStride = sizeof(E), member Offset 0), decorated Aliased (a PhysicalStorageBuffer pointer
  parameter must carry exactly one of Aliased / Restrict). The extension fills it with
  `Pointer + index * sizeof(pointee)`; SPIR-V gives a struct ending in a runtime array no size,
  and the H200's driver counts one element (sizeof(E), E the load's memref element type), so
  (%m, %index) of the IR are this one pointer there. A pointee of defined size sizeof(E) (E
  itself, offsets by OpPtrAccessChain on an ArrayStride-decorated pointer type) would not rest
  on that reading.
* `blockCoord`, `coordInBlock`: `OpTypeArray` of Dim 32-bit integers; the IR's scalar parameters
  are `OpCompositeExtract`s of them (emitted only for the parameters that are used).

Supported uses of %m and %index (anything else is refused with a one-line CoopError):

* `memref.load %m[%i]` (rank-1 memref) where %i is %index plus an offset k independent of %index,
  built with `arith.index_cast`, `arith.addi` (one side index-dependent), `arith.subi` (left side
  index-dependent): it loads `ptr[k]` — `OpAccessChain %ptr, 0, k` then `OpLoad ... Aligned(sizeof(E))`
  (every load through a PhysicalStorageBuffer pointer needs Aligned; the pointer is Pointer +
  index elements and Pointer is 16-byte aligned, so sizeof(E) always holds).
* nothing else: %index has no value in SPIR-V (only the pointer it was folded into), and the
  decode function only reads (no `memref.store`).

The module then uses the PhysicalStorageBuffer64 addressing model (`addressing_model`), which
gates capability PhysicalStorageBufferAddresses (derived from the grammar like every other one).
Also here: `arith.bitcast` -> OpBitcast (a scale stored as the bits of an f16, say).
"""

from __future__ import annotations

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import ArrayAttr, FunctionType, MemRefType, StringAttr, i32
from xdsl.ir import Operation, SSAValue

from coopdialect.errors import CoopError
from coopdialect.dialects import coop
from coopdialect.dialects import spirv as sp

PSB = "PhysicalStorageBuffer"

_INDEX_USE = ("uses the DecodeFunc's index parameter, which SPIR-V folds into the pointer parameter "
              "(Pointer + index elements): only `memref.load %m[%index + k]` is supported (k built "
              "without %index, through arith.index_cast / addi / subi)")


def decode_pointer_type(element_type) -> sp.PointerType:
    """The DecodeFunc's first parameter type for memref element type `element_type`."""
    size = coop.bit_width(element_type) // 8
    block = sp.StructType([sp.RuntimeArrayType(element_type, size)], [0], block=True)
    return sp.PointerType(block, PSB)


def is_decode_function(fn: func.FuncOp) -> bool:
    """Whether a function referenced by a coop op is a DecodeFunc (its first parameter is the
    load's memref; CombineFunc and per-element Func take scalars first)."""
    ins = fn.function_type.inputs.data
    return bool(ins) and isinstance(ins[0], MemRefType)


def addressing_model(ops) -> str:
    """PhysicalStorageBuffer64 when a function of `ops` takes a PhysicalStorageBuffer pointer."""
    for op in ops:
        if isinstance(op, sp.FuncOp) and any(
                isinstance(t, sp.PointerType) and t.storage_class.data == PSB for t in op.function_type.inputs):
            return "PhysicalStorageBuffer64"
    return "Logical"


def lower_decode_function(lowering_cls, fn: func.FuncOp, flavor: str, target=None) -> list[Operation]:
    """`fn` (a DecodeFunc, see the module docstring) as [constants..., spirv.func]."""
    ins = fn.function_type.inputs.data
    mem_t = ins[0]
    assert isinstance(mem_t, MemRefType)
    if len(ins) < 4 or len(ins) % 2:
        raise CoopError(fn, "a DecodeFunc takes (memref, i32 index, Dim × i32 blockCoord, Dim × i32 "
                            "coordInBlock)")
    if len(mem_t.get_shape()) != 1:
        raise CoopError(fn, f"the DecodeFunc's memref parameter must be rank 1 to lower to SPIR-V "
                            f"(its loads address Pointer + index + k elements), got {mem_t}")
    if len(fn.body.blocks) != 1:
        raise CoopError(fn, "a function used by a coop op must be one block of straight-line code")
    dim = (len(ins) - 2) // 2
    elem = mem_t.element_type
    size = coop.bit_width(elem) // 8
    low = lowering_cls(fn, flavor, helper=True, target=target)
    arr_t = sp.ArrayType(dim, i32)
    outs = [low.scalar_type(fn, t) for t in fn.function_type.outputs]
    low.fn = sp.FuncOp(low.name, FunctionType.from_lists([decode_pointer_type(elem), arr_t, arr_t], outs))
    low.fn.properties["param_decorations"] = ArrayAttr([StringAttr("Aliased"), StringAttr(""), StringAttr("")])
    low.block = low.fn.body.blocks[0]
    ptr, block_coord, coord_in_block = low.block.args
    ptr.name_hint, block_coord.name_hint, coord_in_block.name_hint = "pointer", "blockCoord", "coordInBlock"
    args = fn.body.blocks[0].args
    mem_arg, index_arg = args[0], args[1]
    for d in range(dim):
        for arr, old in ((block_coord, args[2 + d]), (coord_in_block, args[2 + dim + d])):
            if old.uses:
                low.set(old, low.emit(sp.CompositeExtractOp(arr, [d], i32)).result)
    # index-dependent values: value = %index + offset (offset None = 0)
    offsets: dict[SSAValue, SSAValue | None] = {index_arg: None}
    elem_ptr = sp.PointerType(elem, PSB)
    for op in fn.body.blocks[0].ops:
        if isinstance(op, memref.LoadOp) and op.memref is mem_arg:
            if len(op.indices) != 1 or op.indices[0] not in offsets:
                raise CoopError(op, "a load through the DecodeFunc's memref must have the index "
                                    "`%index + k` (%index its index parameter, k independent of it)")
            off = offsets[op.indices[0]]
            zero = low.const(0, i32)
            p = low.emit(sp.AccessChainOp(ptr, [zero, zero if off is None else off], elem_ptr)).result
            low.set(op.res, low.emit(sp.LoadOp(p, f"Aligned({size})")).result)
            continue
        if mem_arg in op.operands:
            raise CoopError(op, "uses the DecodeFunc's memref parameter (a read-only PhysicalStorageBuffer "
                                "pointer in SPIR-V): only memref.load is supported")
        dep = [v for v in op.operands if v in offsets]
        if dep:
            offsets[op.results[0]] = _index_offset(low, op, dep, offsets)
            continue
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


def _index_offset(low, op: Operation, dep: list[SSAValue], offsets: dict) -> SSAValue | None:
    """The offset k of an index-dependent result `%index + k`; raises for other uses."""
    if isinstance(op, arith.IndexCastOp):
        return offsets[op.input]  # index and i32 are both 32-bit in SPIR-V
    if isinstance(op, arith.AddiOp) and len(dep) == 1:
        base, other = (op.lhs, op.rhs) if op.lhs in offsets else (op.rhs, op.lhs)
        k, x = offsets[base], low.get(op, other)
        return x if k is None else low.emit(sp.IAddOp(k, x, i32)).results[0]
    if isinstance(op, arith.SubiOp) and dep == [op.lhs] and op.rhs not in offsets:
        k, x = offsets[op.lhs], low.get(op, op.rhs)
        return low.emit(sp.ISubOp(low.const(0, i32) if k is None else k, x, i32)).results[0]
    raise CoopError(op, _INDEX_USE)


def lower_bitcast(low, op: arith.BitcastOp) -> None:
    t = low.scalar_type(op, op.result.type)
    low.set(op.result, low.emit(sp.BitcastOp(low.get(op, op.input), t)).results[0])


def register(rules: dict) -> None:
    rules[arith.BitcastOp] = lower_bitcast
