"""Validation rules of the seed extensions on `spirv` dialect ops (the same rules as the `coop`,
`tensor_addr` verifiers, stated on SPIR-V types), so that the binary reader refuses what the
extension texts forbid and the writer cannot emit it. Each message names the rule's instruction
and quotes the rule. Called from the ops' `verify_` (spirv.py, spirv_nv2.py).

Sources: SPV_KHR_cooperative_matrix (OpCooperativeMatrixMulAddKHR), SPV_NV_cooperative_matrix2
(ReduceNV, ConvertNV, TransposeNV, PerElementOpNV, LoadTensorNV's DecodeFunc),
SPV_NV_tensor_addressing (the OpTensor{Layout,View}*NV operand counts), and
SPV_ARM_cooperative_matrix_layouts (blocked layouts; Stride rule of the current registry text, see
docs/arm-layouts.md).
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

from coopdialect.spirv.grammar_tables import ENUMS

ACC, MA, MB = "MatrixAccumulatorKHR", "MatrixAKHR", "MatrixBKHR"
ARM = "SPV_ARM_cooperative_matrix_layouts"
ARM_STRIDES = (1, 2, 4)


def _fail(msg: str, inst: str) -> VerifyException:
    return VerifyException(f"{msg} ({inst})")


def _is_i32(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 32


def lookup_function(op: Operation, ref, what: str, inst: str):
    """The `spirv.func` that `ref` names in the enclosing `spirv.module` (an OpFunction)."""
    from coopdialect.dialects.spirv import FuncOp

    module = op.parent_op()
    while module is not None and module.name != "spirv.module":
        module = module.parent_op()
    target = SymbolTable.lookup_symbol(module, ref) if module is not None else None
    if not isinstance(target, FuncOp):
        raise _fail(f"{what} must be an OpFunction, got @{ref.root_reference.data}", inst)
    return target


def check_mul_add_khr(a, b, c, result) -> None:
    """OpCooperativeMatrixMulAddKHR: A is MxK with Use MatrixAKHR, B KxN MatrixBKHR, C and Result
    Type MxN MatrixAccumulatorKHR, all of one Scope; Result Type is the type of C."""
    inst = "OpCooperativeMatrixMulAddKHR"
    ta, tb, tc, tr = a.type, b.type, c.type, result.type
    if (ta.use.data, tb.use.data, tc.use.data, tr.use.data) != (MA, MB, ACC, ACC):
        raise _fail("A must have Use MatrixAKHR, B MatrixBKHR, C and Result Type MatrixAccumulatorKHR, got "
                    f"{ta.use.data}, {tb.use.data}, {tc.use.data}, {tr.use.data}", inst)
    check_mul_add_shapes(ta, tb, tc, tr, inst)


def check_mul_add_shapes(ta, tb, tc, tr, inst: str) -> None:
    """A MxK, B KxN, C MxN; Result Type has the same type as C; one Scope (both MulAdd instructions)."""
    m, k, n = ta.rows.data, ta.columns.data, tb.columns.data
    if tb.rows.data != k or (tc.rows.data, tc.columns.data) != (m, n):
        raise _fail(f"A must be MxK, B KxN and C MxN, got {m}x{k}, {tb.rows.data}x{tb.columns.data}, "
                    f"{tc.rows.data}x{tc.columns.data}", inst)
    if tr != tc:
        raise _fail(f"Result Type must be the type of C, got {tr} and {tc}", inst)
    if not ta.scope.data == tb.scope.data == tc.scope.data:
        raise _fail("A, B and C must have the same Scope", inst)


def check_convert(m, r) -> None:
    inst = "OpCooperativeMatrixConvertNV"
    if (m.element_type, m.scope.data, m.rows.data, m.columns.data) != (
            r.element_type, r.scope.data, r.rows.data, r.columns.data):
        raise _fail("The type of Matrix must have the same Component Type, Scope, Rows, and Columns as "
                    "Result Type", inst)
    if r.use.data not in (MA, MB):
        raise _fail(f"The Use of Result Type must be MatrixAKHR or MatrixBKHR, got {r.use.data}", inst)
    if m.use.data != ACC:
        raise _fail(f"The Use of Matrix must be MatrixAccumulatorKHR, got {m.use.data}", inst)


def check_transpose(m, r) -> None:
    inst = "OpCooperativeMatrixTransposeNV"
    if m.scope.data != r.scope.data:
        raise _fail("The type of Matrix must have the same Scope as Result Type", inst)
    if (m.rows.data, m.columns.data) != (r.columns.data, r.rows.data):
        raise _fail(f"Matrix must have Rows and Columns swapped relative to Result Type, got "
                    f"{m.rows.data}x{m.columns.data} and {r.rows.data}x{r.columns.data}", inst)
    if r.use.data != MB:
        raise _fail(f"The Use of Result Type must be MatrixBKHR, got {r.use.data}", inst)
    if m.use.data != ACC:
        raise _fail(f"The Use of Matrix must be MatrixAccumulatorKHR, got {m.use.data}", inst)


def check_reduce(op, names: set[str]) -> None:
    inst = "OpCooperativeMatrixReduceNV"
    m, r = op.matrix.type, op.result.type
    if "2x2" in names and names & {"Row", "Column"}:
        raise _fail("It is invalid to combine 2x2 with Row or Column", inst)
    if m.element_type != r.element_type:
        raise _fail("The type of Matrix must have the same Component Type as Result Type", inst)
    if m.use.data != ACC or r.use.data != ACC:
        raise _fail("The type of Matrix and Result Type must each have Use of MatrixAccumulatorKHR", inst)
    if m.scope.data != r.scope.data:
        raise _fail("The type of Matrix and Result Type must have matching Scope", inst)
    (mr, mc), (rr, rc) = (m.rows.data, m.columns.data), (r.rows.data, r.columns.data)
    if "2x2" in names and (rr * 2 != mr or rc * 2 != mc):
        raise _fail(f"If Reduce includes 2x2, the dimensions of Result Type must be half of the dimensions "
                    f"of Matrix, got {mr}x{mc} -> {rr}x{rc}", inst)
    if names == {"Row"} and rr != mr:
        raise _fail("If Reduce equals Row, then Result Type must have the same number of rows as Matrix", inst)
    if names == {"Column"} and rc != mc:
        raise _fail("If Reduce equals Column, then Result Type must have the same number of columns as "
                    "Matrix", inst)
    if names == {"Row", "Column"} and (rr, rc) != (mr, mc):
        raise _fail("If Reduce includes Row and Column, Result Type must have the dimensions of Matrix", inst)
    f = lookup_function(op, op.combine_func, "CombineFunc", inst)
    ins, outs = f.function_type.inputs.data, f.function_type.outputs.data
    t = m.element_type
    if len(ins) != 2 or any(x != t for x in ins) or len(outs) != 1 or outs[0] != t:
        raise _fail(f"CombineFunc must be an OpFunction with two parameters whose types and result type "
                    f"all match the component type of Matrix ({t})", inst)


def check_per_element(op) -> None:
    inst = "OpCooperativeMatrixPerElementOpNV"
    m = op.matrix.type
    if op.result.type != m:
        raise _fail("Result Type must match the type of Matrix", inst)
    f = lookup_function(op, op.func, "Func", inst)
    ins, outs = f.function_type.inputs.data, f.function_type.outputs.data
    t = m.element_type
    if len(outs) != 1 or outs[0] != t:
        raise _fail(f"Func's return type must match the component type of Matrix ({t})", inst)
    if len(ins) < 3 or not _is_i32(ins[0]) or not _is_i32(ins[1]) or ins[2] != t:
        raise _fail(f"Func's first two parameters must be 32-bit integer types and its third parameter type "
                    f"must match the component type of Matrix ({t})", inst)
    if len(ins) != 3 + len(op.extra):
        raise _fail(f"Func takes {len(ins) - 3} additional parameters but {len(op.extra)} operands are given", inst)
    for i, (v, p) in enumerate(zip(op.extra, ins[3:])):
        if v.type != p and not (v.type == m and p == t):
            raise _fail(f"operand {i} has type {v.type} but parameter {3 + i} of Func has type {p}", inst)


def check_decode_func(op) -> None:
    """OpCooperativeMatrixLoadTensorNV's DecodeFunc: returns the component type of Object; three
    parameters: a PhysicalStorageBuffer pointer, then two arrays of 32-bit integers of the tensor
    layout's Dim."""
    inst = "OpCooperativeMatrixLoadTensorNV"
    from coopdialect.dialects.spirv import ArrayType, PointerType

    f = lookup_function(op, op.decode_func, "DecodeFunc", inst)
    ins, outs = f.function_type.inputs.data, f.function_type.outputs.data
    if len(outs) != 1 or outs[0] != op.object.type.element_type:
        raise _fail("The DecodeFunc's return type must match the component type of Object", inst)
    dim = op.layout.type.dim.data
    ok = (len(ins) == 3 and isinstance(ins[0], PointerType) and ins[0].storage_class.data == "PhysicalStorageBuffer"
          and all(isinstance(x, ArrayType) and x.length.data == dim and _is_i32(x.element_type) for x in ins[1:]))
    if not ok:
        raise _fail("DecodeFunc must take a PhysicalStorageBuffer pointer and two arrays of Dim 32-bit "
                    "integers", inst)


_SET_COUNTS = {
    "OpTensorLayoutSetDimensionNV": ("dim", "Dim"), "OpTensorLayoutSetStrideNV": ("dim", "Stride"),
    "OpTensorLayoutSliceNV": ("2dim", "Offset and Span"), "OpTensorLayoutSetClampValueNV": ("1", "Value"),
    "OpTensorLayoutSetBlockSizeNV": ("dim", "BlockSize"), "OpTensorViewSetDimensionNV": ("dim", "Dim"),
    "OpTensorViewSetStrideNV": ("dim", "Stride"), "OpTensorViewSetClipNV": ("4", "Clip"),
}


def check_tensor_set(op) -> None:
    """SPV_NV_tensor_addressing: the number of value operands of each OpTensor{Layout,View}Set*NV
    / SliceNV, and that they are 32-bit integer scalars."""
    inst = op.OPNAME
    count, what = _SET_COUNTS[inst]
    if op.result.type != op.input.type:
        raise _fail("Result Type must match the type of the input", inst)
    dim = op.result.type.dim.data
    n = {"dim": dim, "2dim": 2 * dim, "1": 1, "4": 4}[count]
    if len(op.values) != n:
        raise _fail(f"the number of {what} operands must be {n} (Dim {dim}), got {len(op.values)}", inst)
    for i, v in enumerate(op.values):
        if not _is_i32(v.type):
            raise _fail(f"the {what} operands must each be a scalar 32-bit integer, operand {i} is {v.type}", inst)


_ARM_LAYOUTS = {ENUMS["CooperativeMatrixLayout"][n][0]: n
                for n in ("RowBlockedInterleavedARM", "ColumnBlockedInterleavedARM")}


def _constant_int(v: SSAValue | None) -> int | None:
    owner = getattr(v, "owner", None)
    if owner is not None and owner.name == "spirv.Constant":
        value = owner.value.value.data
        return value if isinstance(value, int) else None
    return None


def check_arm_layout(matrix_type, layout: SSAValue, stride: SSAValue | None, inst: str) -> None:
    """SPV_ARM_cooperative_matrix_layouts: with a blocked layout, Rows a multiple of 4, Columns a
    multiple of 16/sizeof(Component Type) (times Stride for RowBlockedInterleavedARM), Rows a
    multiple of 4*Stride for ColumnBlockedInterleavedARM; Stride a constant 1, 2 or 4."""
    name = _ARM_LAYOUTS.get(_constant_int(layout))  # type: ignore[arg-type]
    if name is None:
        return
    s = _constant_int(stride)
    if s not in ARM_STRIDES:
        raise _fail(f"Stride must be a constant 1, 2 or 4 when MemoryLayout is {name} ({ARM})", inst)
    et = matrix_type.element_type
    width = et.bitwidth if isinstance(et, AnyFloat) else et.width.data
    cols = 16 // max(1, width // 8)
    rows_, cols_ = matrix_type.rows.data, matrix_type.columns.data
    if rows_ % 4 or cols_ % cols:
        raise _fail(f"with MemoryLayout {name} Rows must be a multiple of 4 and Columns a multiple of "
                    f"16 / sizeof({et}) = {cols}, got {rows_}x{cols_} ({ARM})", inst)
    if name == "RowBlockedInterleavedARM" and cols_ % (cols * s):
        raise _fail(f"with MemoryLayout RowBlockedInterleavedARM Columns must be a multiple of "
                    f"16 / sizeof({et}) * Stride = {cols * s}, got {cols_} ({ARM})", inst)
    if name == "ColumnBlockedInterleavedARM" and rows_ % (4 * s):
        raise _fail(f"with MemoryLayout ColumnBlockedInterleavedARM Rows must be a multiple of 4 * Stride = "
                    f"{4 * s}, got {rows_} ({ARM})", inst)
