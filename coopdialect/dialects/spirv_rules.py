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

from xdsl.dialects.builtin import AnyFloat, IntegerType, Signedness, VectorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

from coopdialect.dialects.spirv_types import (
    COOP_MATRIX_TYPES,
    ArrayType,
    CooperativeMatrixType,
    NVCooperativeMatrixType,
    PointerType,
    RuntimeArrayType,
    StructType,
)
from coopdialect.spirv.grammar_tables import ENUMS

ACC, MA, MB = "MatrixAccumulatorKHR", "MatrixAKHR", "MatrixBKHR"
ARM = "SPV_ARM_cooperative_matrix_layouts"
ARM_STRIDES = (1, 2, 4)


def _fail(msg: str, inst: str) -> VerifyException:
    return VerifyException(f"{msg} ({inst})")


def _is_i32(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 32


def lookup_function(op: Operation, ref, what: str, inst: str):
    """The `spirv.func` that `ref` names in the enclosing `spirv.module` (an OpFunction). Told by
    its op name: the op classes (spirv.py) are above these rules, which they call."""
    module = op.parent_op()
    while module is not None and module.name != "spirv.module":
        module = module.parent_op()
    target = SymbolTable.lookup_symbol(module, ref) if module is not None else None
    if target is None or target.name != "spirv.func":
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
    owner = getattr(v, "owner", None)  # an Operation, or a Block for a block argument
    if isinstance(owner, Operation) and owner.name == "spirv.Constant":
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


# -- core type rules of memory instructions (SPIR-V 3.42.8) -----------------------------------

def same_type(a, b) -> bool:
    """Whether two types encode as the same SPIR-V type: OpTypeInt has no unsigned-vs-signless
    distinction (Signedness 0 for both), recursively inside composites."""
    return _canon(a) == _canon(b)


def _canon(t):
    if isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED:
        return IntegerType(t.width.data)
    if isinstance(t, VectorType):
        return VectorType(_canon(t.element_type), t.get_shape())
    if isinstance(t, PointerType):
        return PointerType(_canon(t.pointee), t.storage_class.data)
    if isinstance(t, RuntimeArrayType):
        return RuntimeArrayType(_canon(t.element_type), t.stride.data)
    if isinstance(t, ArrayType):
        return ArrayType(t.length.data, _canon(t.element_type), t.stride.data)
    if isinstance(t, StructType):
        return StructType([_canon(m) for m in t.members], [o.data for o in t.offsets], bool(t.block.data),
                          [d.data for d in t.member_decorations])
    if isinstance(t, CooperativeMatrixType):
        return CooperativeMatrixType(t.rows.data, t.columns.data, _canon(t.element_type), t.scope.data, t.use.data)
    if isinstance(t, NVCooperativeMatrixType):
        return NVCooperativeMatrixType(t.rows.data, t.columns.data, _canon(t.element_type), t.scope.data)
    return t


def check_access_chain(op) -> None:
    """OpAccessChain: integer scalar Indexes; a struct is indexed by a constant below its member
    count, a fixed-size array by a constant (when constant) below its length; Result Type is a
    pointer, in Base's storage class, to the type the Indexes reach."""
    inst = "OpAccessChain"
    t = op.base.type.pointee
    sc = op.base.type.storage_class.data
    for i, v in enumerate(op.indices):
        if not isinstance(v.type, IntegerType) or v.type.width.data == 1:
            raise _fail(f"Indexes must be scalar integers, index {i} is {v.type}", inst)
        k = _constant_int(v)
        if isinstance(t, StructType):
            if k is None or not 0 <= k < len(t.members):
                raise _fail(f"index {i} into a struct of {len(t.members)} members must be a constant in range", inst)
            t = t.members.data[k]
        elif isinstance(t, ArrayType):
            # buffer memory is addressed past a sized array (glslang's array-of-1 members); spirv-val
            # checks constant bounds for the other storage classes
            if k is not None and not 0 <= k < t.length.data and sc not in _BUFFER_CLASSES:
                raise _fail(f"constant index {k} is out of bounds of an array of {t.length.data}", inst)
            t = t.element_type
        elif isinstance(t, RuntimeArrayType):
            t = t.element_type
        elif isinstance(t, VectorType):
            if k is not None and not 0 <= k < t.get_shape()[0]:
                raise _fail(f"constant index {k} is out of bounds of a vector of {t.get_shape()[0]}", inst)
            t = t.element_type
        elif isinstance(t, COOP_MATRIX_TYPES):
            t = t.element_type
        else:
            raise _fail(f"index {i} indexes into {t}, which is not a composite", inst)
    rt = op.result.type
    if not isinstance(rt, PointerType) or rt.storage_class.data != op.base.type.storage_class.data \
            or not same_type(rt.pointee, t):
        raise _fail(f"Result Type must be a pointer to {t} in {op.base.type.storage_class.data}, got {rt}", inst)


MATRIX_STORAGE_CLASSES = ("StorageBuffer", "Workgroup", "PhysicalStorageBuffer")
_BUFFER_CLASSES = ("StorageBuffer", "PhysicalStorageBuffer", "Uniform", "PushConstant")


def check_matrix_pointer(pointer, inst: str) -> None:
    """Cooperative matrix loads/stores address StorageBuffer, Workgroup or PhysicalStorageBuffer
    memory (Vulkan, VUID-StandaloneSpirv-Pointer-08973)."""
    sc = pointer.type.storage_class.data
    if sc not in MATRIX_STORAGE_CLASSES:
        raise _fail(f"Pointer must point to StorageBuffer, Workgroup or PhysicalStorageBuffer memory, got {sc} "
                    "(VUID-StandaloneSpirv-Pointer-08973)", inst)


def check_layout_operand(layout: SSAValue, inst: str) -> None:
    """MemoryLayout is the <id> of a 32-bit integer constant instruction (SPV_KHR_cooperative_matrix)."""
    owner = getattr(layout, "owner", None)
    name = getattr(owner, "name", "")
    if name not in ("spirv.Constant", "spirv.SpecConstant", "spirv.SpecConstantOperation") \
            or not isinstance(layout.type, IntegerType) or layout.type.width.data != 32:
        raise _fail("MemoryLayout must be a 32-bit integer constant instruction", inst)


_INT_OPS = {"OpIAdd", "OpISub", "OpIMul", "OpSDiv", "OpUDiv", "OpSRem", "OpSMod", "OpUMod", "OpBitwiseAnd",
            "OpBitwiseOr", "OpBitwiseXor"}
_FLOAT_OPS = {"OpFAdd", "OpFSub", "OpFMul", "OpFDiv", "OpFRem", "OpFMod"}
_SHIFTS = {"OpShiftLeftLogical", "OpShiftRightLogical", "OpShiftRightArithmetic"}


def _shape(t):
    """(kind, width, count) of a scalar, vector or cooperative matrix type."""
    count = 1
    if isinstance(t, VectorType):
        count, t = t.get_shape()[0], t.element_type
    elif isinstance(t, COOP_MATRIX_TYPES):
        count, t = -1, t.element_type
    if isinstance(t, IntegerType):
        return ("bool" if t.width.data == 1 else "int", t.width.data, count)
    if isinstance(t, AnyFloat):
        return ("float", t.bitwidth, count)
    return ("other", 0, count)


def check_arithmetic(op) -> None:
    """Binary arithmetic (SPIR-V 3.42.13): float instructions take operands of Result Type;
    integer ones integer operands of Result Type's component width and count (signedness may
    differ); a shift's Base has Result Type's shape; on cooperative matrices every operand has
    Result Type (the KHR/NV element-wise rules)."""
    inst = op.OPNAME
    rt = op.result.type
    if isinstance(rt, COOP_MATRIX_TYPES) and inst in _INT_OPS | _FLOAT_OPS | {"OpFNegate", "OpSNegate"}:
        if not all(same_type(v.type, rt) for v in op.operands):
            raise _fail("operands on cooperative matrices must have the type of Result Type", inst)
        return
    r = _shape(rt)
    if inst in _FLOAT_OPS:
        if r[0] != "float" or not all(same_type(v.type, rt) for v in op.operands):
            raise _fail("Result Type and the operands must be one floating-point type", inst)
    elif inst in _INT_OPS:
        if r[0] != "int" or any(_shape(v.type) != r for v in op.operands):
            raise _fail("the operands must be integers of Result Type's width and component count", inst)
    elif inst == "OpFNegate":
        if r[0] != "float" or not same_type(op.operands[0].type, rt):
            raise _fail("Result Type and the operand must be one floating-point type", inst)
    elif inst in ("OpSNegate", "OpNot"):
        if r[0] != "int" or _shape(op.operands[0].type) != r:
            raise _fail("the operand must be an integer of Result Type's width and component count", inst)
    elif inst in _SHIFTS:
        b, s = _shape(op.operands[0].type), _shape(op.operands[1].type)
        if r[0] != "int" or b != r or s[0] != "int" or s[2] != r[2]:
            raise _fail("Base must have Result Type's shape and Shift integer components of its count", inst)


def check_composite_constituents(rt, types: list, inst: str) -> None:
    """OpConstantComposite / OpSpecConstantComposite: one constituent per member of a struct
    (of the member's type), per component of a vector or element of an array (of its type), or
    one of the component type for a cooperative matrix (SPIR-V 3.42.7)."""
    if isinstance(rt, StructType):
        want = list(rt.members)
    elif isinstance(rt, VectorType):
        want = [rt.element_type] * rt.get_shape()[0]
    elif isinstance(rt, ArrayType):
        want = [rt.element_type] * rt.length.data
    elif isinstance(rt, COOP_MATRIX_TYPES):
        want = [rt.element_type]
    else:
        raise _fail(f"Result Type {rt} is not a composite", inst)
    if len(want) != len(types) or not all(same_type(a, b) for a, b in zip(want, types)):
        raise _fail(f"the Constituents must match Result Type's {len(want)} members/components in type", inst)


def check_composite_indices(t, indices: list[int], element, inst: str) -> None:
    """OpCompositeExtract / OpCompositeInsert: each literal Index is in range of the struct,
    array or vector it indexes (a cooperative matrix's length is known only at run time), and the
    indexed type is the Result Type (extract) or the Object's type (insert)."""
    for k in indices:
        if isinstance(t, StructType):
            n, nxt = len(t.members), (t.members.data[k] if 0 <= k < len(t.members) else None)
        elif isinstance(t, ArrayType):
            n, nxt = t.length.data, t.element_type
        elif isinstance(t, VectorType):
            n, nxt = t.get_shape()[0], t.element_type
        elif isinstance(t, COOP_MATRIX_TYPES):
            n, nxt = None, t.element_type
        else:
            raise _fail(f"index {k} indexes into {t}, which is not a composite", inst)
        if k < 0 or (n is not None and k >= n):
            raise _fail(f"index {k} is out of bounds of a composite of {n}", inst)
        t = nxt
    if not same_type(t, element):
        raise _fail(f"the indexed type {t} must be {element}", inst)


_CONVERSION_KINDS = {"OpConvertFToU": ("float", "int"), "OpConvertFToS": ("float", "int"),
                     "OpConvertSToF": ("int", "float"), "OpConvertUToF": ("int", "float"),
                     "OpUConvert": ("int", "int"), "OpSConvert": ("int", "int"), "OpFConvert": ("float", "float")}
_BOOL_COMPARES = {"OpLogicalEqual", "OpLogicalNotEqual", "OpLogicalAnd", "OpLogicalOr"}


def check_conversion(op) -> None:
    """Conversion instructions (SPIR-V 3.42.11): the operand and Result Type are of the kinds the
    instruction converts between, with the same component count (cooperative matrices: of the
    same shape, Scope and Use)."""
    inst = op.OPNAME
    kinds = _CONVERSION_KINDS.get(inst)
    if kinds is None:
        return
    a, r = _shape(op.operands[0].type), _shape(op.result.type)
    if (a[0], r[0]) != kinds or a[2] != r[2]:
        raise _fail(f"converts {kinds[0]} to {kinds[1]} components of one count, got {op.operands[0].type} -> "
                    f"{op.result.type}", inst)


def check_compare(op) -> None:
    """Comparison instructions (SPIR-V 3.42.15): integer (I*, S*, U*), float (FOrd*, FUnord*) or boolean
    (Logical*) operands of one component count and width; Result Type booleans of that count."""
    inst = op.OPNAME
    a, b, r = _shape(op.lhs.type), _shape(op.rhs.type), _shape(op.result.type)
    want = "bool" if inst in _BOOL_COMPARES else "float" if inst.startswith(("OpFOrd", "OpFUnord")) else "int"
    if a[0] != want or b[0] != want or a[2] != b[2] or a[1] != b[1] or r[0] != "bool" or r[2] != a[2]:
        raise _fail(f"the operands must be {want} scalars or vectors of one shape and Result Type booleans of "
                    "their count", inst)


def check_stride(stride, inst: str) -> None:
    """Stride of a cooperative matrix load/store is a scalar integer."""
    if stride is not None and (not isinstance(stride.type, IntegerType) or stride.type.width.data == 1):
        raise _fail(f"Stride must be a scalar integer, got {stride.type}", inst)


def check_matrix_type_operand(t, inst: str) -> None:
    if not isinstance(t, COOP_MATRIX_TYPES):
        raise _fail(f"Type must be a cooperative matrix type, got {t}", inst)
