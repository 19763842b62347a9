"""`raise-spirv-to-coop`: lift a read SPIR-V compute shader (`spirv.module`) into the kernel IR of
README.md — `func.func` kernels with memref arguments, `gpu` ids, `scf`, `arith` and `coop` ops —
so that the interpreter runs glslang's output (`coop-run shader.spv`) and `convert-coop-to-ptx`
can retarget it.

What is lifted (the inverse of `convert-coop-to-spirv`, plus the shapes glslang emits):

* each GLCompute entry point becomes a `func.func` named by its entry-point name, with
  `coop.workgroup_size` from LocalSize (or LocalSizeId's constants' default values);
* its storage and uniform buffers become memref arguments and its push constants scalar
  arguments; OpAccessChain through Block structs, nested structs, arrays and vectors becomes
  element offsets, OpLoad / OpStore `memref.load` / `memref.store` (8-/16-bit storage included),
  and the matrix loads/stores address the memref at that element (`raise_spirv_memory`);
* Function and Private variables are SSA values (a vector, array or struct one value per part);
  structured selections and loops become `scf.if` / `scf.for` / `scf.while`, with `break`,
  `continue` and early `return` as flags; function calls are inlined (`raise_spirv_control`);
* a Workgroup (`shared`) variable becomes a `coop.alloc_workgroup` buffer (natural layout) and
  OpControlBarrier of Execution scope Workgroup `gpu.barrier` (raise_spirv_memory);
* the WorkgroupId / LocalInvocationId / GlobalInvocationId / NumWorkgroups / Subgroup* builtins
  become `gpu` id ops; constants and specialization constants (their default values) become
  `arith.constant`, OpSpecConstantOp is computed in place;
* scalar and vector arithmetic becomes `arith` (SPIR-V's integers signless; a vector one op per
  component), cooperative-matrix instructions the `coop` ops they come from;
* GLSL.std.450 extended instructions become the `math` / `arith` ops that state them exactly
  (`passes/raise_glsl_std_450.py`: Exp, Log, Sqrt, InverseSqrt, Tanh, FAbs, Fma, Floor, FMin,
  NMax, ...; on a vector one op per component);
* tensor layouts/views and their Set/Slice instructions become `tensor_addr` ops, the
  cooperative-matrix-2 instructions `coop.load_tensor`/`store_tensor`/`reduce`/`convert`/
  `transpose`/`per_element_op`; a CombineFunc / Func / DecodeFunc becomes a `func.func`
  `<kernel>_<name>` (a DecodeFunc's PhysicalStorageBuffer parameter the load's memref and
  the byte Pointer + index * sizeof(its pointee), as the extension defines it).

What cannot be lifted is refused with one line naming the instruction at its word offset
(`file:0:W: error: ...`): a barrier other than a workgroup one, variable pointers, OpSwitch, a dynamic
index into a cooperative matrix, a tensor load/store not at element 0 of its buffer, the other
extended instructions, and instructions without a counterpart in the kernel IR.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    VectorType,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import VerifyException

from coopdialect.errors import CoopError
from coopdialect.dialects import coop, coop_nv2, gpu, spirv, spirv_general, spirv_nv2
from coopdialect.dialects import tensor_addr as ta
from coopdialect.passes import raise_glsl_std_450 as _glsl
from coopdialect.passes.raise_spirv_cleanup import drop_dead_values
from coopdialect.passes.raise_spirv_control import ControlLifting, Frame
from coopdialect.passes.raise_spirv_memory import MemoryLifting
from coopdialect.passes.raise_spirv_values import (
    BufferPointer,
    BuiltinPointer,
    BuiltinVector,
    Composite,
    Refuse,
    VarPointer,
    byte_size,
    components,
    coop_type,
    is_aggregate,
    refuse,
    scalar_bytes,
    scalar_type,
)
from coopdialect.spirv.grammar_tables import ENUMS

_INT_BINARY = {"OpIAdd": arith.AddiOp, "OpISub": arith.SubiOp, "OpIMul": arith.MuliOp, "OpSDiv": arith.DivSIOp,
               "OpUDiv": arith.DivUIOp, "OpSRem": arith.RemSIOp, "OpUMod": arith.RemUIOp,
               "OpBitwiseAnd": arith.AndIOp, "OpBitwiseOr": arith.OrIOp, "OpBitwiseXor": arith.XOrIOp,
               "OpShiftLeftLogical": arith.ShLIOp, "OpShiftRightLogical": arith.ShRUIOp,
               "OpShiftRightArithmetic": arith.ShRSIOp, "OpLogicalAnd": arith.AndIOp, "OpLogicalOr": arith.OrIOp,
               "OpLogicalNotEqual": arith.XOrIOp}
_FLOAT_BINARY = {"OpFAdd": arith.AddfOp, "OpFSub": arith.SubfOp, "OpFMul": arith.MulfOp, "OpFDiv": arith.DivfOp}
_ICMP = {"OpIEqual": "eq", "OpINotEqual": "ne", "OpSLessThan": "slt", "OpSLessThanEqual": "sle",
         "OpSGreaterThan": "sgt", "OpSGreaterThanEqual": "sge", "OpULessThan": "ult", "OpULessThanEqual": "ule",
         "OpUGreaterThan": "ugt", "OpUGreaterThanEqual": "uge", "OpLogicalEqual": "eq"}
_FCMP = {"OpFOrdEqual": "oeq", "OpFOrdNotEqual": "one", "OpFOrdLessThan": "olt", "OpFOrdLessThanEqual": "ole",
         "OpFOrdGreaterThan": "ogt", "OpFOrdGreaterThanEqual": "oge", "OpFUnordEqual": "ueq",
         "OpFUnordNotEqual": "une", "OpFUnordLessThan": "ult", "OpFUnordLessThanEqual": "ule",
         "OpFUnordGreaterThan": "ugt", "OpFUnordGreaterThanEqual": "uge"}
_CONVERSIONS = ("OpUConvert", "OpSConvert", "OpFConvert", "OpConvertSToF", "OpConvertUToF", "OpConvertFToS",
                "OpConvertFToU", "OpBitcast")
# the coop element-wise / conversion op of each SPIR-V instruction on matrices
_COOP_BY_SPIRV = {c.SPIRV_NAME: c for c in (*coop.ELEMENTWISE_UNARY, *coop.ELEMENTWISE_BINARY, *coop.CONVERSIONS)}
_BUILTIN_IDS = {"WorkgroupId": gpu.BlockIdOp, "LocalInvocationId": gpu.ThreadIdOp,
                "GlobalInvocationId": gpu.GlobalIdOp, "NumWorkgroups": gpu.GridDimOp}
_BUILTIN_SCALARS = {"SubgroupId": gpu.SubgroupIdOp, "NumSubgroups": gpu.NumSubgroupsOp,
                    "SubgroupSize": gpu.SubgroupSizeOp, "SubgroupLocalInvocationId": gpu.LaneIdOp}
_SIGN_FLAGS = {"MatrixASignedComponentsKHR": "ASigned", "MatrixBSignedComponentsKHR": "BSigned",
               "MatrixCSignedComponentsKHR": "CSigned", "MatrixResultSignedComponentsKHR": "ResultSigned",
               "SaturatingAccumulationKHR": "SaturatingAccumulation"}
# OpTensor*Set*NV / SliceNV -> the tensor_addr op of that instruction
_TENSOR_SET = {c.SPIRV_NAME: c for c in (*ta.LAYOUT_SET_OPS, *ta.VIEW_SET_OPS)}
# instructions that only carry a value on (lifted to the value itself)
_IDENTITY = ("OpCopyObject", "OpCopyLogical")


def _layout_name(value: int) -> str:
    for name, entry in ENUMS["CooperativeMatrixLayout"].items():
        if entry[0] == value:
            return name.removesuffix("KHR")
    raise ValueError(f"unknown Cooperative Matrix Layout {value}")


def _reduce_mask(text: str) -> int:
    return sum(ENUMS["CooperativeMatrixReduce"][n.strip()][0] for n in text.split("|"))


class _Kernel(MemoryLifting, ControlLifting):
    """Lifts one entry point's function (or a function a coop op references)."""

    def __init__(self, module: spirv.ModuleOp, entry: spirv.EntryPointOp, fn: spirv.FuncOp | None = None):
        self.module = module
        self.entry = entry
        self.kernel_name = entry.entry_point_name
        self.functions = {op.sym_name.data: op for op in module.ops if isinstance(op, spirv.FuncOp)}
        self.fn = fn or self.functions[entry.fn.root_reference.data]
        self.helpers: dict[str, func.FuncOp] = {}
        self.globals = {op.sym_name.data: op for op in module.ops if isinstance(op, spirv.GlobalVariableOp)}
        self.values: dict[SSAValue, object] = {}
        self.vars: dict[object, object] = {}
        self.var_types: dict[object, Attribute] = {}
        self.buffers: dict[str, object] = {}
        self.block = Block()  # where ops are emitted now
        self.consts: dict[object, object] = {}
        self.loops = []
        self.call_stack: list[Frame] = []

    # -- emission -------------------------------------------------------------------------------
    def emit(self, op: Operation, loc: Operation | None = None) -> Operation:
        if loc is not None:
            op.location = loc.location
        self.block.add_op(op)
        return op

    def const(self, value: int | float, t: Attribute) -> SSAValue:
        if isinstance(t, coop.MatrixType):
            return self.emit(coop.CompositeConstructOp(self.const(value, t.element_type), t)).results[0]
        if isinstance(t, IntegerType) and t.signedness.data != Signedness.SIGNLESS:
            raise ValueError(f"no arith constant of the signed/unsigned type {t}")
        if isinstance(t, IntegerType) and t.width.data > 1:  # as arith prints it: the signed value
            bits = t.width.data
            value = int(value) % (1 << bits)
            value -= (1 << bits) if value >> (bits - 1) else 0
        attr = FloatAttr(float(value), t) if isinstance(t, AnyFloat) else IntegerAttr(int(value), t)
        return self.emit(arith.ConstantOp(attr)).results[0]

    def const_at_entry(self, value, t: Attribute) -> SSAValue:
        saved, self.block = self.block, self.entry_block
        try:
            return self.const(value, t)
        finally:
            self.block = saved

    def zero(self, t: Attribute, at_entry: bool = False) -> object:
        """A value of SPIR-V type `t` for what is never read (an undefined variable, the OpPhis
        of a path that left early): zeros, a fresh tensor layout / view."""
        if is_aggregate(t):
            return Composite(tuple(self.zero(m, at_entry) for m in components(t)))
        ct = coop_type(t)
        saved = self.block
        if at_entry:
            self.block = self.entry_block
        try:
            if isinstance(ct, ta.TensorLayoutType):
                return self.emit(ta.CreateLayoutOp(ct)).results[0]
            if isinstance(ct, ta.TensorViewType):
                return self.emit(ta.CreateViewOp(ct)).results[0]
            if isinstance(ct, IntegerType | AnyFloat | coop.MatrixType):
                return self.const(0, ct)
        finally:
            self.block = saved
        raise Refuse(self.fn, f"a value of type {t} cannot be made up (a pointer held in a variable?)")

    def index(self, v: SSAValue) -> SSAValue:
        """`v` (a 32-bit integer) as an index; a constant stays a constant (coop's rules that need
        a constant instruction, such as the Arm layouts' Stride, look for one)."""
        owner = v.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            return self.const_at_entry(owner.value.value.data, IndexType())
        return self.emit(arith.IndexCastOp(v, IndexType())).results[0]

    def value(self, v: SSAValue, user: Operation) -> object:
        if v in self.values:
            return self.values[v]
        owner = v.owner
        if isinstance(owner, Operation) and (owner.parent_op() is self.module or isinstance(
                owner, (spirv.AddressOfOp, *spirv_general.CONSTANT_OPS, spirv.UndefOp))):
            return self.module_value(owner, user)
        refuse(user, "uses a value the raising has not seen (unstructured control flow?)")

    def ssa(self, v: SSAValue, user: Operation) -> SSAValue:
        r = self.value(v, user)
        if not isinstance(r, SSAValue):
            refuse(user, "uses a pointer, vector or aggregate where a scalar or matrix is expected")
        return r

    def module_value(self, op: Operation, user: Operation) -> object:
        """A module-level constant or variable address, materialized where it is first used (the
        kernel's entry block, since constants dominate everything)."""
        if op in self.consts:
            return self.consts[op]
        saved, self.block = self.block, self.entry_block
        try:
            if isinstance(op, spirv.ConstantOp | spirv_general.SpecConstantOp):  # a spec constant: its default
                t = op.result.type
                if isinstance(t, VectorType):
                    r = Composite(tuple(self.const(op.value.value.data, scalar_type(t.element_type))
                                        for _ in range(t.get_shape()[0])))
                else:
                    r = self.const(op.value.value.data, coop_type(t))
            elif isinstance(op, spirv_general.CompositeConstant):
                r = Composite(tuple(self.value(c, user) for c in op.constituents))
                if isinstance(op.result.type, spirv.COOP_MATRIX_TYPES):
                    r = self.emit(coop.CompositeConstructOp(r.parts[0], coop_type(op.result.type))).results[0]
            elif isinstance(op, spirv_general.SpecConstantOperationOp):
                r = self.spec_operation(op, user)
            elif isinstance(op, spirv.AddressOfOp):
                r = self.address_of(op, user)
            elif isinstance(op, spirv.UndefOp):
                r = self.zero(op.result.type)
            else:
                refuse(user, f"uses '{op.name}', which is not lifted")
        finally:
            self.block = saved
        self.consts[op] = r
        return r

    def spec_operation(self, op: spirv_general.SpecConstantOperationOp, user: Operation) -> SSAValue:
        name = op.opcode.data
        if name in ("OpCooperativeMatrixLengthKHR", "OpCooperativeMatrixLengthNV"):
            return self.emit(coop.LengthOp(coop_type(op.literals.data[0]))).results[0]
        vals = [self.value(x, user) for x in op.args]
        if name in _INT_BINARY | _ICMP and all(isinstance(v, SSAValue) for v in vals) and len(vals) == 2:
            return self.scalar_op(user, name, vals, coop_type(op.result.type))
        if name in _CONVERSIONS and len(vals) == 1:
            return self.scalar_op(user, name, vals, coop_type(op.result.type))
        if name == "OpCompositeExtract" and op.literals.data:
            v = vals[0]
            for lit in op.literals.data:
                v = self.part(v, lit.data, user)
            return v
        refuse(user, f"OpSpecConstantOp {name} is not lifted")

    def address_of(self, op: spirv.AddressOfOp, user: Operation) -> object:
        var = self.globals[op.variable.root_reference.data]
        name = var.sym_name.data
        sc = var.type.storage_class.data
        if var.built_in is not None:
            return BuiltinPointer(var.built_in.data, None)
        if name in self.buffers:
            return self.buffers[name]
        if sc == "Private":
            self.var_types[name] = var.type.pointee
            return VarPointer(name, (), var.type.pointee)
        if sc == "Workgroup":
            return self.workgroup_buffer(var, user)
        refuse(user, f"uses @{name} ({sc}), which is neither a buffer, a push constant, a Private variable nor a "
                     "builtin")

    # -- the kernel -----------------------------------------------------------------------------
    def run(self) -> func.FuncOp:
        plan = self.plan_arguments()
        arg_types = [t for t, _, _ in plan]
        body = Region(Block(arg_types=arg_types))
        self.entry_block = self.block = body.block
        self.bind_arguments(plan, list(body.block.args))
        self.frame = self.new_frame(self.fn)
        self.call_stack = [self.frame]
        self.raise_chain(self.fn.body.blocks[0], None)
        self.emit(func.ReturnOp())
        kernel = func.FuncOp(self.entry.entry_point_name, (arg_types, []), body)
        kernel.location = self.fn.location
        kernel.attributes["coop.workgroup_size"] = DenseArrayBase.from_list(i32, list(self.workgroup_size()))
        return kernel

    def run_helper(self, prefix: str, memref_type: MemRefType | None = None) -> func.FuncOp:
        """A function a coop op references, as a `func.func`: a CombineFunc / Func with its scalar
        and matrix parameters; a DecodeFunc (`memref_type` given: its load's memref) as
        (memref, i32 index, Dim x i32 blockCoord, Dim x i32 coordInBlock)."""
        ft = self.fn.function_type
        outs = [coop_type(t) for t in ft.outputs]
        params = self.fn.body.blocks[0].args
        if memref_type is not None:
            dims = [len(components(p.type)) for p in params[1:]]
            if len(params) != 3 or not isinstance(params[0].type, spirv.PointerType) or dims[0] != dims[1]:
                refuse(self.fn, "a DecodeFunc takes (PhysicalStorageBuffer pointer, blockCoord[Dim], "
                                "coordInBlock[Dim])")
            ins = [memref_type, i32, *([i32] * (2 * dims[0]))]
        else:
            for p in params:
                if isinstance(p.type, spirv.PointerType) or is_aggregate(p.type):
                    refuse(self.fn, "a CombineFunc / Func parameter must be a scalar or a matrix")
            ins = [coop_type(t) for t in ft.inputs]
        body = Region(Block(arg_types=ins))
        self.entry_block = self.block = body.block
        args = list(body.block.args)
        if memref_type is not None:
            d = (len(args) - 2) // 2
            self.values[params[0]] = self.decode_pointer(params[0].type.pointee, args[0], args[1], memref_type)
            self.values[params[1]] = Composite(tuple(args[2:2 + d]))
            self.values[params[2]] = Composite(tuple(args[2 + d:]))
        else:
            for a, v in zip(params, args):
                self.values[a] = v
        self.frame = self.new_frame(self.fn)
        self.call_stack = [self.frame]
        self.raise_chain(self.fn.body.blocks[0], None)
        self.emit(func.ReturnOp(*([self.ssa_of(self.var_value(self.frame.retval), self.fn)]
                                  if self.frame.retval is not None else [])))
        helper = func.FuncOp(f"{prefix}_{self.fn.sym_name.data}", (ins, outs), body)
        helper.location = self.fn.location
        return helper

    def decode_pointer(self, pointee: Attribute, buffer: SSAValue, index: SSAValue,
                       memref_type: MemRefType) -> BufferPointer:
        """A DecodeFunc's pointer parameter: Pointer + index * sizeof(pointee) bytes
        (SPV_NV_cooperative_matrix2, "Tensor Layout and View"), `index` being the tensor element
        index of the IR's DecodeFunc and Pointer element 0 of `buffer`. A pointee ending in a
        runtime array counts one element of it (SPIR-V gives such a type no size; it is what
        glslang writes for `T v[]` in a buffer_reference block, and how the H200 driver counts)."""
        try:
            size = byte_size(pointee)
        except ValueError:
            size = 0
        if size <= 0:
            refuse(self.fn, f"the DecodeFunc's pointer parameter points to {pointee}, which has no size "
                            "in a buffer (the pointer is Pointer + index * its size)")
        esize = scalar_bytes(memref_type.element_type)
        if size % esize == 0:  # whole memref elements
            return BufferPointer(buffer, self.imul(index, size // esize), None, 0, pointee)
        return BufferPointer(buffer, None, self.imul(index, size), 0, pointee)

    def workgroup_size(self) -> tuple[int, int, int]:
        name = self.entry.fn.root_reference.data
        for op in self.module.ops:
            if isinstance(op, spirv.ExecutionModeOp) and op.fn.root_reference.data == name \
                    and op.execution_mode.data == "LocalSize":
                size = tuple(v.data for v in op.values)
                break
            if isinstance(op, spirv.ExecutionModeIdOp) and op.fn.root_reference.data == name \
                    and op.execution_mode.data == "LocalSizeId":
                size = tuple(a.owner.value.value.data for a in op.args)
                break
        else:
            refuse(self.fn, "the entry point has no LocalSize / LocalSizeId execution mode")
        return size  # type: ignore[return-value]

    # -- instructions ---------------------------------------------------------------------------
    def lift(self, op: Operation) -> None:
        try:
            self.lift_one(op)
        except (VerifyException, ValueError) as e:  # a type or op the kernel IR does not allow
            text = str(e).strip().splitlines()
            raise Refuse(op, text[0] if text else type(e).__name__) from None

    def lift_one(self, op: Operation) -> None:
        if isinstance(op, spirv.ConstantOp | spirv_general.SpecConstantOp | spirv_general.SpecConstantOperationOp
                      | spirv.AddressOfOp | spirv_general.CompositeConstant):
            return  # materialized where used
        name = getattr(op, "OPNAME", op.name)
        if isinstance(op, spirv_general.VariableOp):
            self.var_types[op.result] = op.result.type.pointee
            self.vars.pop(op.result, None)  # a fresh variable (a callee inlined again)
            if op.initializer is not None:
                self.vars[op.result] = self.value(op.initializer, op)
            self.values[op.result] = VarPointer(op.result, (), op.result.type.pointee)
            return
        if isinstance(op, spirv.AccessChainOp):
            self.access_chain(op)
            return
        if isinstance(op, spirv.LoadOp):
            self.values[op.result] = self.load(op)
            return
        if isinstance(op, spirv.StoreOp):
            self.store(op)
            return
        if isinstance(op, spirv_general.FunctionCallOp):
            self.inline_call(op)
            return
        if name in _IDENTITY:
            self.values[op.results[0]] = self.value(op.operands[0], op)
            return
        if isinstance(op, spirv.UndefOp):
            self.values[op.result] = self.zero(op.result.type)
            return
        if isinstance(op, spirv_general.ControlBarrierOp):
            self.barrier(op)
            return
        if isinstance(op, spirv.CompositeExtractOp):
            v = self.value(op.composite, op)
            for k in op.indices.get_values():
                v = self.part(v, k, op)
            self.values[op.result] = v
            return
        if isinstance(op, spirv.CompositeInsertOp):
            whole = self.value(op.composite, op)
            self.values[op.result] = self.with_part(whole, tuple(op.indices.get_values()),
                                                    self.value(op.object, op), op)
            return
        rt = op.results[0].type if op.results else None
        if isinstance(op, spirv.CompositeConstructOp):
            if isinstance(rt, spirv.COOP_MATRIX_TYPES):
                self.values[op.result] = self.emit(coop.CompositeConstructOp(self.ssa(op.operands[0], op),
                                                                             coop_type(rt)), op).results[0]
            else:  # a vector may be built from smaller vectors: their components in order
                parts = []
                for c in op.operands:
                    v = self.value(c, op)
                    parts += list(v.parts) if isinstance(v, Composite | BuiltinVector) and isinstance(
                        rt, VectorType) else [v]
                    if isinstance(v, BuiltinVector) and isinstance(rt, VectorType):
                        parts[-3:] = list(self.as_composite(v, op).parts)
                self.values[op.result] = Composite(tuple(parts))
            return
        if isinstance(op, spirv_general.VectorShuffleOp):
            a = self.as_composite(self.value(op.vector1, op), op).parts
            b = self.as_composite(self.value(op.vector2, op), op).parts
            both = (*a, *b)
            t = rt.element_type
            self.values[op.result] = Composite(tuple(both[c] if c >= 0 else self.zero(t)
                                                     for c in op.indices.get_values()))
            return
        if isinstance(op, spirv.KHRCooperativeMatrixLoadOp | spirv.NVCooperativeMatrixLoadOp):
            self.values[op.result] = self.emit(self.matrix_load(op, coop_type(rt)), op).results[0]
            return
        if isinstance(op, spirv.KHRCooperativeMatrixStoreOp | spirv.NVCooperativeMatrixStoreOp):
            self.emit(self.matrix_store(op), op)
            return
        if isinstance(op, spirv_nv2.CooperativeMatrixLoadTensorOp | spirv_nv2.CooperativeMatrixStoreTensorOp):
            self.tensor_memory(op)
            return
        vals = [self.value(v, op) for v in op.operands]
        if rt is not None and isinstance(rt, VectorType):  # one op per component
            n = rt.get_shape()[0]
            comps = [self.as_composite(v, op).parts if not isinstance(v, SSAValue) else (v,) * n for v in vals]
            et = scalar_type(rt.element_type)
            self.values[op.results[0]] = Composite(tuple(
                self.scalar_op(op, name, [c[i] for c in comps], et) for i in range(n)))
            return
        vals = [self.ssa_of(v, op) for v in vals]
        new = self.matrix_or_scalar_op(op, name, vals, coop_type(rt) if rt is not None else None)
        if op.results:
            self.values[op.results[0]] = new

    def matrix_or_scalar_op(self, op: Operation, name: str, vals: list[SSAValue], rt) -> SSAValue:
        if isinstance(rt, coop.MatrixType) and name in _COOP_BY_SPIRV:
            cls = _COOP_BY_SPIRV[name]
            new = cls(*vals, rt) if cls in coop.CONVERSIONS else cls(*vals)
        elif isinstance(op, spirv.MatrixTimesScalarOp):
            new = coop.MatrixTimesScalarOp(*vals)
        elif isinstance(op, spirv.KHRCooperativeMatrixMulAddOp):
            flags = [] if op.matrix_operands is None else [
                _SIGN_FLAGS[f] for f in op.matrix_operands.data.split("|") if f != "NoneKHR"]
            new = coop.MulAddOp(*vals, rt, flags)
        elif isinstance(op, spirv.NVCooperativeMatrixMulAddOp):
            new = coop.MulAddOp(*vals, rt)
        elif isinstance(op, spirv.KHRCooperativeMatrixLengthOp | spirv.NVCooperativeMatrixLengthOp):
            new = coop.LengthOp(coop_type(op.matrix_type))
        elif isinstance(op, spirv_nv2.CreateTensorLayoutOp):
            new = ta.CreateLayoutOp(rt)
        elif isinstance(op, spirv_nv2.CreateTensorViewOp):
            new = ta.CreateViewOp(rt)
        elif name in _TENSOR_SET:
            new = _TENSOR_SET[name](vals[0], vals[1:])
        elif isinstance(op, spirv_nv2.CooperativeMatrixReduceOp):
            new = coop_nv2.ReduceOp(vals[0], _reduce_mask(op.reduce.data), self.helper(op.combine_func, op), rt)
        elif isinstance(op, spirv_nv2.CooperativeMatrixConvertOp):
            new = coop_nv2.ConvertOp(vals[0], rt)
        elif isinstance(op, spirv_nv2.CooperativeMatrixTransposeOp):
            new = coop_nv2.TransposeOp(vals[0], rt)
        elif isinstance(op, spirv_nv2.CooperativeMatrixPerElementOpOp):
            new = coop_nv2.PerElementOp(self.helper(op.func, op), vals[0], vals[1:])
        else:
            return self.scalar_op(op, name, vals, rt)
        self.emit(new, op)
        return new.results[0]

    def scalar_op(self, op: Operation, name: str, vals: list[SSAValue], rt) -> SSAValue:
        """The `arith` op of a scalar SPIR-V instruction."""
        if name in _INT_BINARY:
            new = _INT_BINARY[name](*vals)
        elif name in _FLOAT_BINARY:
            new = _FLOAT_BINARY[name](*vals)
        elif name == "OpVectorTimesScalar":
            new = arith.MulfOp(*vals)
        elif name in _ICMP:
            new = arith.CmpiOp(*vals, _ICMP[name])
        elif name in _FCMP:
            new = arith.CmpfOp(*vals, _FCMP[name])
        elif name == "OpSelect":
            new = arith.SelectOp(*vals)
        elif name == "OpLogicalNot":
            new = arith.XOrIOp(vals[0], self.const(1, i1))
        elif name == "OpNot":
            new = arith.XOrIOp(vals[0], self.const(-1, rt))
        elif name == "OpSNegate":
            new = arith.SubiOp(self.const(0, rt), vals[0])
        elif name == "OpFNegate":
            new = arith.NegfOp(vals[0])
        elif name in _CONVERSIONS:
            new = self.scalar_conversion(name, vals[0], rt, op)
            if new is None:
                return vals[0]
        elif isinstance(op, spirv_general.ExtInstOp):
            try:
                *before, new = _glsl.lift(op, vals)
            except _glsl.NotLifted as e:
                refuse(op, str(e))
            for b in before:
                self.emit(b, op)
        else:
            refuse(op, f"{name} is not lifted")
        self.emit(new, op)
        return new.results[0]

    def tensor_memory(self, op) -> None:
        """OpCooperativeMatrix{Load,Store}TensorNV -> coop.load_tensor / store_tensor, which address
        the memref from element 0 (the tensor layout does the addressing)."""
        p = self.value(op.pointer, op)
        if not isinstance(p, BufferPointer):
            refuse(op, "a tensor load/store must address a storage buffer")
        if p.elem is not None or p.byte is not None or p.const != 0:
            refuse(op, "a tensor load/store whose Pointer is not element 0 of its buffer is not lifted "
                       "(coop.load_tensor/store_tensor address the memref from element 0)")
        if op.memory_operand is not None and op.memory_operand.data != "None":
            refuse(op, "a Memory Operand on a tensor load/store is not lifted")
        # a load's Object gives the values of clipped elements: without a view none is clipped
        if isinstance(op, spirv_nv2.CooperativeMatrixLoadTensorOp) and op.view is None:
            obj = self.zero(op.object.type, at_entry=True)
        else:
            obj = self.ssa(op.object, op)
        layout = self.ssa(op.layout, op)
        view = None if op.view is None else self.ssa(op.view, op)
        if isinstance(op, spirv_nv2.CooperativeMatrixLoadTensorOp):
            decode = None
            if op.decode_func is not None:
                decode = self.helper(op.decode_func, op, p.buffer.type)
            new = self.emit(coop_nv2.LoadTensorOp(p.buffer, obj, layout, view, decode), op)
            self.values[op.result] = new.results[0]
        else:
            self.emit(coop_nv2.StoreTensorOp(obj, p.buffer, layout, view), op)

    def helper(self, ref, user: Operation, memref_type: MemRefType | None = None) -> str:
        """The `func.func` lifted from the `spirv.func` a coop op references (CombineFunc, Func,
        DecodeFunc): lifted once per kernel."""
        name = ref.root_reference.data
        if name not in self.helpers:
            fn = self.functions.get(name)
            if fn is None:
                refuse(user, f"@{name} is not a function of the module")
            sub = _Kernel(self.module, self.entry, fn)
            self.helpers[name] = sub.run_helper(self.kernel_name, memref_type)
            self.helpers.update(sub.helpers)
        return self.helpers[name].sym_name.data

    def scalar_conversion(self, name: str, v: SSAValue, rt: Attribute, op: Operation) -> Operation | None:
        if name == "OpBitcast":
            return None if v.type == rt else arith.BitcastOp(v, rt)
        if name == "OpConvertSToF":
            return arith.SIToFPOp(v, rt)
        if name == "OpConvertUToF":
            return arith.UIToFPOp(v, rt)
        if name == "OpConvertFToS":
            return arith.FPToSIOp(v, rt)
        if name == "OpConvertFToU":
            return arith.FPToUIOp(v, rt)
        src_w = v.type.bitwidth if isinstance(v.type, AnyFloat) else v.type.width.data
        dst_w = rt.bitwidth if isinstance(rt, AnyFloat) else rt.width.data
        if src_w == dst_w:
            return None
        if name == "OpFConvert":
            return arith.ExtFOp(v, rt) if dst_w > src_w else arith.TruncFOp(v, rt)
        if dst_w < src_w:
            return arith.TruncIOp(v, rt)
        return arith.ExtSIOp(v, rt) if name == "OpSConvert" else arith.ExtUIOp(v, rt)

    def builtin(self, name: str, component: int, op: Operation) -> SSAValue:
        if name == "LocalInvocationIndex":  # z·X·Y + y·X + x (SPIR-V 3.21 BuiltIn)
            x, y, _ = self.workgroup_size()
            ids = [self.builtin("LocalInvocationId", c, op) for c in range(3)]
            zy = self.emit(arith.AddiOp(self.emit(arith.MuliOp(ids[2], self.const(y, i32))).results[0],
                                        ids[1])).results[0]
            zyx = self.emit(arith.MuliOp(zy, self.const(x, i32))).results[0]
            return self.emit(arith.AddiOp(zyx, ids[0]), op).results[0]
        if name in _BUILTIN_IDS:
            r = self.emit(_BUILTIN_IDS[name](["x", "y", "z"][component]), op).results[0]
        elif name in _BUILTIN_SCALARS:
            r = self.emit(_BUILTIN_SCALARS[name](), op).results[0]
        else:
            refuse(op, f"builtin {name} is not lifted")
        return self.emit(arith.IndexCastOp(r, i32), op).results[0]

    def matrix_load(self, op, rt) -> Operation:
        buf, at = self.matrix_pointer(op.pointer, op)
        stride = self.index(self.ssa(op.stride, op))
        return coop.LoadOp(buf, self.index(at), stride, self.layout(op), rt)

    def matrix_store(self, op) -> Operation:
        buf, at = self.matrix_pointer(op.pointer, op)
        stride = self.index(self.ssa(op.stride, op))
        return coop.StoreOp(self.ssa(op.object, op), buf, self.index(at), stride, self.layout(op))

    def layout(self, op) -> str:
        if isinstance(op, spirv.NVCooperativeMatrixLoadOp | spirv.NVCooperativeMatrixStoreOp):
            owner = op.column_major.owner
            if not isinstance(owner, spirv.ConstantOp):
                refuse(op, "ColumnMajor must be a constant")
            return "ColumnMajor" if owner.value.value.data else "RowMajor"
        if op.stride is None:
            refuse(op, "a matrix load/store without Stride is not lifted")
        return _layout_name(self.const_index(op.layout, op))


class RaiseSpirvToCoopPass(ModulePass):
    """Replace each `spirv.module` by one `func.func` per GLCompute entry point (see the module
    docstring). Raises CoopError at the instruction that cannot be lifted."""

    name = "raise-spirv-to-coop"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for spv in [o for o in op.body.block.ops if isinstance(o, spirv.ModuleOp)]:
            kernels = []
            for entry in [o for o in spv.ops if isinstance(o, spirv.EntryPointOp)]:
                if entry.execution_model.data != "GLCompute":
                    raise CoopError(entry, f"only GLCompute entry points are lifted, got {entry.execution_model.data}")
                try:
                    k = _Kernel(spv, entry)
                    kernels.append(k.run())
                    kernels += list(k.helpers.values())
                    for fn in kernels:
                        drop_dead_values(fn.body)
                except Refuse as e:
                    raise CoopError(e.op, e.message) from None
                except (ValueError, KeyError, StopIteration, VerifyException) as e:
                    text = str(e).strip().splitlines()
                    raise CoopError(entry, f"cannot lift: {text[0] if text else type(e).__name__}") from None
            Rewriter.insert_op(kernels, InsertPoint.before(spv))
            spv.detach()
            spv.erase()

