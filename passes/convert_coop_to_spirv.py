"""`convert-coop-to-spirv{flavor=khr|nv}`: lower coop kernels to a Vulkan compute `spirv.module`.

Input: the kernel convention of README.md — `func.func` kernels with memref and scalar arguments
and a `coop.workgroup_size` attribute, using `gpu` ids, `scf.for`/`scf.if`, `arith` and `coop`
ops. Output: one `spirv.module` (Vulkan memory model; Logical addressing, or
PhysicalStorageBuffer64 when a DecodeFunc needs its pointer parameter) holding, for each kernel,

* one StorageBuffer variable per memref argument (descriptor set 0, binding j for the j-th memref
  argument: the argument index when scalars come last), a `Block` struct of one runtime array
  with the element size as ArrayStride (any memref shape, `?` included: the buffer's size is the
  host's);
* for scalar arguments (i32, i64, index, f32, f16), one PushConstant variable `<kernel>_push_constants`:
  a `Block` struct whose member k is the k-th scalar argument, at the offsets of
  `coopdialect.spirv.push_constants.layout`, each member loaded once at the function's entry;
* the builtin variables the ids need (WorkgroupId, LocalInvocationId, SubgroupId, ...);
* the entry point (GLCompute, named after the kernel) with `LocalSize` from the attribute;
* a function in SPIR-V's structured CFG: `scf.for` becomes header/body/continue/merge blocks with
  OpLoopMerge and the loop-carried values as OpPhi (block arguments); `scf.if` a selection.

`index` is 32-bit in SPIR-V (signed compares, as `index` is in MLIR): offsets and strides must fit in
31 bits. flavor=khr (default) emits SPV_KHR_cooperative_matrix and needs matrices with a Use;
flavor=nv emits SPV_NV_cooperative_matrix, drops the Uses, and takes integer signedness from the
component types (`siN`), so the KHR-only features (OpIMul/OpFMul/OpBitcast on matrices, saturating
accumulation, signedness flags on signless types) are refused there.

The pass is a set of rewrites, one method per source op (`lower_<op>`), applied in program order
by one walk that keeps a cursor on the SPIR-V block being filled: structured control flow needs
new blocks, which the greedy pattern driver cannot create across regions. Capabilities and
extensions are derived from the result (`coopdialect.spirv.requirements`).

The rules of the other dialects register into the same table: tensor addressing and the
cooperative-matrix-2 ops in `convert_coop_nv2_to_spirv.py` (functions those ops reference become
SPIR-V functions, not entry points), decode functions in `convert_decode_func_to_spirv.py`, the
`math` dialect (GLSL.std.450 extended instructions) in `convert_math_to_spirv.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    Signedness,
    SymbolRefAttr,
    VectorType,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from coopdialect.errors import CoopError
from coopdialect.dialects import coop
from coopdialect.dialects.coop_kernel import SCALAR_TYPES, check_kernel_interface, scalar_type_name
from coopdialect.dialects import gpu
from coopdialect.dialects import spirv as sp
from coopdialect.dialects.spirv_dialect import SPIRV
from coopdialect.spirv import push_constants
from coopdialect.spirv.grammar_tables import ENUMS
from coopdialect.spirv.requirements import apply_requirements
from coopdialect.targets import Target, TargetError, get_target
from coopdialect.passes.spirv_memory_operand import memory_operand

_SPIRV_OPS: dict[str, type[Operation]] = {
    cls.OPNAME: cls for cls in SPIRV.operations if hasattr(cls, "OPNAME")
}

# arith.cmpi predicate number -> SPIR-V comparison (MLIR's CmpIPredicate order)
_CMPI = ["IEqual", "INotEqual", "SLessThan", "SLessThanEqual", "SGreaterThan", "SGreaterThanEqual",
         "ULessThan", "ULessThanEqual", "UGreaterThan", "UGreaterThanEqual"]
# arith.cmpf ordered predicates (1..6) -> SPIR-V
_CMPF = {1: "FOrdEqual", 2: "FOrdGreaterThan", 3: "FOrdGreaterThanEqual", 4: "FOrdLessThan",
         5: "FOrdLessThanEqual", 6: "FOrdNotEqual"}

_INT_BINARY = {arith.AddiOp: "OpIAdd", arith.SubiOp: "OpISub", arith.MuliOp: "OpIMul",
               arith.DivUIOp: "OpUDiv", arith.DivSIOp: "OpSDiv", arith.RemUIOp: "OpUMod",
               arith.RemSIOp: "OpSRem", arith.AndIOp: "OpBitwiseAnd", arith.OrIOp: "OpBitwiseOr",
               arith.XOrIOp: "OpBitwiseXor", arith.ShLIOp: "OpShiftLeftLogical",
               arith.ShRUIOp: "OpShiftRightLogical", arith.ShRSIOp: "OpShiftRightArithmetic"}
_BOOL_BINARY = {arith.AndIOp: "OpLogicalAnd", arith.OrIOp: "OpLogicalOr",
                arith.XOrIOp: "OpLogicalNotEqual"}
_FLOAT_BINARY = {arith.AddfOp: "OpFAdd", arith.SubfOp: "OpFSub", arith.MulfOp: "OpFMul",
                 arith.DivfOp: "OpFDiv"}
_CASTS = {arith.ExtFOp: "OpFConvert", arith.TruncFOp: "OpFConvert", arith.SIToFPOp: "OpConvertSToF",
          arith.UIToFPOp: "OpConvertUToF", arith.FPToSIOp: "OpConvertFToS",
          arith.FPToUIOp: "OpConvertFToU", arith.ExtSIOp: "OpSConvert", arith.ExtUIOp: "OpUConvert",
          arith.TruncIOp: "OpUConvert"}

# gpu id op -> (BuiltIn, components: 3 for a uvec3 builtin, 1 for a scalar one)
_BUILTINS = {gpu.BlockIdOp: ("WorkgroupId", 3), gpu.ThreadIdOp: ("LocalInvocationId", 3),
             gpu.GlobalIdOp: ("GlobalInvocationId", 3), gpu.GridDimOp: ("NumWorkgroups", 3),
             gpu.SubgroupIdOp: ("SubgroupId", 1), gpu.NumSubgroupsOp: ("NumSubgroups", 1),
             gpu.SubgroupSizeOp: ("SubgroupSize", 1), gpu.LaneIdOp: ("SubgroupLocalInvocationId", 1)}

_SIGN_FLAG_NAMES = {"A": "MatrixASignedComponentsKHR", "B": "MatrixBSignedComponentsKHR",
                    "C": "MatrixCSignedComponentsKHR", "Result": "MatrixResultSignedComponentsKHR"}


def _layout_value(layout: coop.Layout) -> int:
    table = ENUMS["CooperativeMatrixLayout"]
    # the KHR enumerants carry a KHR suffix; SPV_ARM_cooperative_matrix_layouts' ones do not
    return table[layout.value if layout.value in table else f"{layout.value}KHR"][0]


def _refuse_arm_nv(op: Operation) -> None:
    # OpCooperativeMatrixLoadNV/StoreNV only know a ColumnMajor boolean
    if op.layout.data in coop.ARM_LAYOUTS:
        raise CoopError(op, f"MemoryLayout {op.layout.data.value} needs flavor=khr "
                            "(SPV_ARM_cooperative_matrix_layouts extends the KHR instructions)")


class _KernelLowering:
    """Lowers one kernel `func.func` into SPIR-V ops; one `lower_*` method per source op kind."""

    def __init__(self, kernel: func.FuncOp, flavor: str, helper: bool = False, workgroup_pad: int = 16,
                 workgroup_copies: str = "registers", target: Target | None = None):
        self.kernel = kernel
        self.flavor = flavor
        self.target = target
        # the staged form (convert_coop_async_to_spirv): Workgroup buffers, row padding in bytes,
        # and the 16-byte views of storage buffers its vector copies read through
        self.workgroup: dict[SSAValue, _async.WorkgroupBuffer] = {}
        self.workgroup_pad = workgroup_pad
        self.workgroup_copies = workgroup_copies
        self.buffer_views: dict[tuple, tuple] = {}
        self.staging_plan: dict[SSAValue, tuple[int, int]] = {}
        self.name = kernel.sym_name.data
        self.values: dict[SSAValue, SSAValue] = {}
        self.globals: list[Operation] = []
        self.interface: list[str] = []
        self.builtins: dict[str, tuple[str, sp.PointerType]] = {}
        self.buffers: dict[SSAValue, tuple[str, sp.PointerType]] = {}
        self.constants: dict[tuple, SSAValue] = {}
        self.constant_ops: list[Operation] = []
        # one attribute object per distinct type / symbol: attributes are immutable, and shared
        # objects are cheaper to build, hash and compare downstream
        self.matrix_types: dict[coop.MatrixType, Attribute] = {}
        self.buffer_refs: dict[SSAValue, tuple[SymbolRefAttr, sp.PointerType, sp.PointerType]] = {}
        self.fn = sp.FuncOp(self.name, FunctionType.from_lists([], []))
        self.block = self.fn.body.blocks[0]
        # a helper (a function a coop op references) has no workgroup of its own
        self.workgroup_size = (1, 1, 1) if helper else self._workgroup_size()

    # -- helpers ---------------------------------------------------------------------------

    def _workgroup_size(self) -> tuple[int, int, int]:
        attr = self.kernel.attributes.get("coop.workgroup_size")
        if not isinstance(attr, DenseArrayBase) or len(attr.get_values()) != 3:
            raise CoopError(self.kernel, "a kernel needs `coop.workgroup_size = array<i32: x, y, z>`")
        x, y, z = (int(v) for v in attr.get_values())
        if min(x, y, z) < 1:
            raise CoopError(self.kernel, f"workgroup size must be positive, got {x}x{y}x{z}")
        return x, y, z

    def add_blocks(self, *blocks: Block) -> None:
        """Place new blocks right after the block being filled: SPIR-V wants every block after
        its dominator (spec 2.16.1), and structures nested in a loop or selection body must
        come before that construct's continue/merge blocks."""
        self.fn.body.insert_block_after(list(blocks), self.block)

    def emit(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def const(self, value: int | float | bool, t: Attribute) -> SSAValue:
        """A module-level constant, one per (value, type)."""
        key = (type(value), value, t)
        if key not in self.constants:
            op = sp.ConstantOp(value, t)
            self.constant_ops.append(op)
            self.constants[key] = op.result
        return self.constants[key]

    def get(self, op: Operation, value: SSAValue) -> SSAValue:
        try:
            return self.values[value]
        except KeyError:
            raise CoopError(op, "uses a value this lowering did not produce") from None

    def set(self, value: SSAValue, new: SSAValue) -> None:
        self.values[value] = new

    def scalar_type(self, op: Operation, t: Attribute) -> Attribute:
        if isinstance(t, IndexType):
            return i32
        if isinstance(t, IntegerType | AnyFloat):
            return t
        raise CoopError(op, f"type {t} has no SPIR-V lowering")

    def type(self, op: Operation, t: Attribute) -> Attribute:
        if isinstance(t, coop.MatrixType):
            return self.matrix_type(op, t)
        if (tt := _nv2.tensor_type(t)) is not None:
            return tt
        return self.scalar_type(op, t)

    def matrix_type(self, op: Operation, t: coop.MatrixType) -> Attribute:
        cached = self.matrix_types.get(t)
        if cached is None:
            cached = self.matrix_types[t] = self._matrix_type(op, t)
        return cached

    def _matrix_type(self, op: Operation, t: coop.MatrixType) -> Attribute:
        if self.flavor == "khr":
            if t.is_nv:
                raise CoopError(op, f"{t} has no Use: NV matrices need convert-coop-to-spirv{{flavor=nv}}")
            return sp.CooperativeMatrixType(t.rows, t.columns, t.element_type, t.scope_value.value,
                                            t.use_value.value)
        if isinstance(t.element_type, BFloat16Type):
            # SPV_KHR_bfloat16's BFloat16CooperativeMatrixKHR covers OpTypeCooperativeMatrixKHR
            # only; VK_NV_cooperative_matrix has no bf16 component type
            raise CoopError(op, f"{t}: bf16 cooperative matrices need flavor=khr (SPV_KHR_bfloat16 "
                                "allows bf16 in OpTypeCooperativeMatrixKHR only)")
        return sp.NVCooperativeMatrixType(t.rows, t.columns, t.element_type, t.scope_value.value)

    def buffer_pointer(self, op: Operation, memref: SSAValue, offset: SSAValue) -> SSAValue:
        """OpAccessChain to element `offset` of the storage buffer bound to `memref`."""
        if memref not in self.buffers:
            raise CoopError(op, "loads and stores must address a kernel memref argument")
        refs = self.buffer_refs.get(memref)
        if refs is None:
            sym, ptr_type = self.buffers[memref]
            array = ptr_type.pointee.members.data[0]
            refs = self.buffer_refs[memref] = (SymbolRefAttr(sym), ptr_type,
                                               sp.PointerType(array.element_type, "StorageBuffer"))
        sym_ref, ptr_type, elem_ptr = refs
        base = self.emit(sp.AddressOfOp(sym_ref, ptr_type)).pointer
        zero = self.const(0, i32)
        return self.emit(sp.AccessChainOp(base, [zero, self.get(op, offset)], elem_ptr)).result

    def builtin(self, name: str, components: int) -> SSAValue:
        if name not in self.builtins:
            t = VectorType(i32, [3]) if components == 3 else i32
            ptr = sp.PointerType(t, "Input")
            sym = f"{self.name}_{name}"
            self.globals.append(sp.GlobalVariableOp(sym, ptr, built_in=name))
            self.interface.append(sym)
            self.builtins[name] = (sym, ptr)
        sym, ptr = self.builtins[name]
        return self.emit(sp.LoadOp(self.emit(sp.AddressOfOp(sym, ptr)).pointer)).result

    # -- the kernel ----------------------------------------------------------------------

    def run(self) -> list[Operation]:
        _async.expand_tensor_copies(self.kernel)
        if self.workgroup_copies == "registers":
            x, y, z = self.workgroup_size
            _async.hoist_copies(self.kernel)
            self.staging_plan = _async.staging_plan(self.kernel, x * y * z, self.workgroup_pad)
        scalars: list[SSAValue] = []
        for i, arg in enumerate(self.kernel.body.blocks[0].args):
            t = arg.type
            if not isinstance(t, MemRefType):
                if scalar_type_name(t) is None:
                    raise CoopError(self.kernel, f"kernel argument {i} must be a memref or a "
                                    f"scalar of {', '.join(SCALAR_TYPES)}, got {t}")
                scalars.append(arg)
                continue
            if not isinstance(t.memory_space, NoneAttr):
                raise CoopError(self.kernel, f"kernel argument {i} must be a storage buffer "
                                "(a memref without memory space)")
            elem = t.element_type
            if not (coop.is_integer(elem) or coop.is_float(elem)):
                # SPV_NV/KHR_cooperative_matrix: matrices may only live in Function/Private storage
                raise CoopError(self.kernel, f"kernel argument {i} must be a memref of scalars, got "
                                f"element type {elem}")
            size = coop.bit_width(elem) // 8
            struct = sp.StructType([sp.RuntimeArrayType(elem, size)], [0], block=True)
            ptr = sp.PointerType(struct, "StorageBuffer")
            sym = f"{self.name}_{arg.name_hint or f'arg{i}'}"
            # binding = the memref's position among the memref arguments (scalars take none)
            self.globals.append(sp.GlobalVariableOp(sym, ptr, 0, len(self.buffers)))
            self.interface.append(sym)
            self.buffers[arg] = (sym, ptr)
        if scalars:
            self.load_push_constants(scalars)
        self.lower_block(self.kernel.body.blocks[0])
        x, y, z = self.workgroup_size
        return [*self.globals, *self.constant_ops, sp.EntryPointOp("GLCompute", self.name, self.interface),
                sp.ExecutionModeOp(self.name, "LocalSize", [x, y, z]), self.fn]

    def load_push_constants(self, scalars: list[SSAValue]) -> None:
        """The kernel's scalar arguments as one push-constant block (member k = scalar argument
        k, `coopdialect.spirv.push_constants.layout`), each member loaded once at entry."""
        members = push_constants.layout([a.type for a in scalars])
        size = push_constants.block_size(members)
        if size > push_constants.MIN_MAX_PUSH_CONSTANTS_SIZE:
            raise CoopError(self.kernel, f"the scalar arguments need {size} bytes of push "
                            f"constants; Vulkan guarantees {push_constants.MIN_MAX_PUSH_CONSTANTS_SIZE}"
                            " (maxPushConstantsSize)")
        struct = sp.StructType([m.member_type for m in members], [m.offset for m in members],
                               block=True)
        ptr = sp.PointerType(struct, "PushConstant")
        sym = f"{self.name}_push_constants"
        self.globals.append(sp.GlobalVariableOp(sym, ptr))
        self.interface.append(sym)
        base = self.emit(sp.AddressOfOp(sym, ptr)).pointer
        for k, (arg, m) in enumerate(zip(scalars, members)):
            member_ptr = sp.PointerType(m.member_type, "PushConstant")
            chain = self.emit(sp.AccessChainOp(base, [self.const(k, i32)], member_ptr)).result
            self.set(arg, self.emit(sp.LoadOp(chain)).results[0])

    def lower_block(self, block: Block) -> None:
        for op in block.ops:
            rule = self.RULES.get(type(op))
            if rule is None:
                raise CoopError(op, "has no lowering to SPIR-V")
            rule(self, op)

    # -- func / scf ----------------------------------------------------------------------

    def lower_return(self, op: func.ReturnOp) -> None:
        if op.arguments:
            raise CoopError(op, "kernels return nothing; write results to a memref")
        self.emit(sp.ReturnOp())

    def lower_for(self, op: scf.ForOp) -> None:
        iter_types = [self.type(op, v.type) for v in op.iter_args]
        header = Block(arg_types=[i32, *iter_types])
        body, cont, merge = Block(), Block(), Block()
        self.add_blocks(header, body, cont, merge)
        lb, ub, step = (self.get(op, v) for v in (op.lb, op.ub, op.step))
        self.emit(sp.BranchOp(header, [lb, *(self.get(op, v) for v in op.iter_args)]))
        iv, *carried = header.args
        self.block = header
        cond = self.emit(sp.SLessThanOp(iv, ub)).results[0]
        self.emit(sp.LoopMergeOp(merge, cont))
        self.emit(sp.BranchConditionalOp(cond, body, merge))
        region_block = op.body.blocks[0]
        self.set(region_block.args[0], iv)
        for old, new in zip(region_block.args[1:], carried):
            self.set(old, new)
        self.block = body
        for inner in region_block.ops:
            if isinstance(inner, scf.YieldOp):
                yielded = [self.get(inner, v) for v in inner.arguments]
                self.emit(sp.BranchOp(cont))
                self.block = cont
                nxt = self.emit(sp.IAddOp(iv, step)).results[0]
                self.emit(sp.BranchOp(header, [nxt, *yielded]))
            else:
                self.RULES.get(type(inner), _KernelLowering.unsupported)(self, inner)
        for old, new in zip(op.results, carried):
            self.set(old, new)  # the header dominates the merge block
        self.block = merge

    def lower_if(self, op: scf.IfOp) -> None:
        then_b, else_b = Block(), Block()
        merge = Block(arg_types=[self.type(op, t) for t in op.result_types])
        self.add_blocks(then_b, else_b, merge)
        cond = self.get(op, op.cond)
        self.emit(sp.SelectionMergeOp(merge))
        self.emit(sp.BranchConditionalOp(cond, then_b, else_b))
        for region, blk in ((op.true_region, then_b), (op.false_region, else_b)):
            self.block = blk
            src = region.blocks[0].ops if region.blocks else ()
            yielded: list[SSAValue] = []
            for inner in src:
                if isinstance(inner, scf.YieldOp):
                    yielded = [self.get(inner, v) for v in inner.arguments]
                else:
                    self.RULES.get(type(inner), _KernelLowering.unsupported)(self, inner)
            self.emit(sp.BranchOp(merge, yielded))
        for old, new in zip(op.results, merge.args):
            self.set(old, new)
        self.block = merge

    def unsupported(self, op: Operation) -> None:
        raise CoopError(op, "has no lowering to SPIR-V")

    # -- arith ---------------------------------------------------------------------------

    def lower_constant(self, op: arith.ConstantOp) -> None:
        value = op.value
        t = self.scalar_type(op, op.result.type)
        if not isinstance(value, IntegerAttr) and not hasattr(value, "value"):
            raise CoopError(op, "only scalar constants have a SPIR-V lowering")
        raw = value.value.data
        if isinstance(t, IntegerType) and t.width.data == 1:
            raw = bool(raw)
        elif isinstance(t, IntegerType):
            raw = int(raw)
            if isinstance(op.result.type, IndexType) and not -(2**31) <= raw < 2**31:
                raise CoopError(op, f"index constant {raw} does not fit the 32-bit SPIR-V index")
        self.set(op.result, self.const(raw, t))

    def lower_int_binary(self, op: Operation) -> None:
        name = _INT_BINARY[type(op)]
        t = op.results[0].type
        if isinstance(t, IntegerType) and t.width.data == 1:
            # i1 is OpTypeBool, which the bitwise instructions do not take
            if type(op) not in _BOOL_BINARY:
                raise CoopError(op, f"{op.name} of i1 has no SPIR-V lowering (andi, ori, xori do)")
            name = _BOOL_BINARY[type(op)]
        cls = _SPIRV_OPS[name]
        lhs, rhs = (self.get(op, v) for v in op.operands)
        self.set(op.results[0], self.emit(cls(lhs, rhs, self.scalar_type(op, op.results[0].type))).results[0])

    def lower_float_binary(self, op: Operation) -> None:
        cls = _SPIRV_OPS[_FLOAT_BINARY[type(op)]]
        lhs, rhs = (self.get(op, v) for v in op.operands)
        self.set(op.results[0], self.emit(cls(lhs, rhs)).results[0])

    def lower_negf(self, op: arith.NegfOp) -> None:
        self.set(op.result, self.emit(sp.FNegateOp(self.get(op, op.operand))).results[0])

    def lower_cmpi(self, op: arith.CmpiOp) -> None:
        cls = _SPIRV_OPS["Op" + _CMPI[op.predicate.value.data]]
        self.set(op.result, self.emit(cls(self.get(op, op.lhs), self.get(op, op.rhs))).results[0])

    def lower_cmpf(self, op: arith.CmpfOp) -> None:
        name = _CMPF.get(op.predicate.value.data)
        if name is None:
            raise CoopError(op, "only the ordered arith.cmpf predicates have a SPIR-V lowering")
        cls = _SPIRV_OPS["Op" + name]
        self.set(op.result, self.emit(cls(self.get(op, op.lhs), self.get(op, op.rhs))).results[0])

    def lower_select(self, op: arith.SelectOp) -> None:
        new = self.emit(sp.SelectOp(*(self.get(op, v) for v in op.operands)))
        self.set(op.result, new.result)

    def lower_index_cast(self, op: arith.IndexCastOp) -> None:
        src, dst = op.input.type, op.result.type
        value = self.get(op, op.input)
        width = lambda t: 32 if isinstance(t, IndexType) else t.width.data  # noqa: E731
        if width(src) == width(dst):
            self.set(op.result, value)
        else:
            cls = sp.SConvertOp
            self.set(op.result, self.emit(cls(value, self.scalar_type(op, dst))).results[0])

    def lower_cast(self, op: Operation) -> None:
        cls = _SPIRV_OPS[_CASTS[type(op)]]
        new = self.emit(cls(self.get(op, op.operands[0]), self.scalar_type(op, op.results[0].type)))
        self.set(op.results[0], new.results[0])

    # -- gpu -----------------------------------------------------------------------------

    def lower_id(self, op: Operation) -> None:
        name, components = _BUILTINS[type(op)]
        value = self.builtin(name, components)
        if components == 3:
            index = "xyz".index(op.dim)
            value = self.emit(sp.CompositeExtractOp(value, [index], i32)).result
        self.set(op.results[0], value)

    def lower_block_dim(self, op: gpu.BlockDimOp) -> None:
        self.set(op.result, self.const(self.workgroup_size["xyz".index(op.dim)], i32))

    # -- coop ----------------------------------------------------------------------------

    def matrix_pointer(self, op: coop.LoadOp | coop.StoreOp) -> tuple[SSAValue, SSAValue]:
        """(Pointer, Stride) operands of a matrix load/store of a storage or Workgroup buffer."""
        if op.pointer in self.workgroup:
            return _async.matrix_pointer(self, op)
        return self.buffer_pointer(op, op.pointer, op.offset), self.get(op, op.stride)

    def lower_load(self, op: coop.LoadOp) -> None:
        t = self.matrix_type(op, op.result.type)
        ptr, stride = self.matrix_pointer(op)
        access = memory_operand(op, op.memory_access)
        if self.flavor == "khr":
            layout = self.const(_layout_value(op.layout.data), i32)
            new = sp.KHRCooperativeMatrixLoadOp(ptr, layout, stride, t, access)
        else:
            _refuse_arm_nv(op)
            column_major = self.const(op.layout.data == coop.Layout.ColumnMajor, i1)
            new = sp.NVCooperativeMatrixLoadOp(ptr, stride, column_major, t, access)
        self.set(op.result, self.emit(new).result)

    def lower_store(self, op: coop.StoreOp) -> None:
        self.matrix_type(op, op.object.type)
        ptr, stride = self.matrix_pointer(op)
        obj = self.get(op, op.object)
        access = memory_operand(op, op.memory_access)
        if self.flavor == "khr":
            layout = self.const(_layout_value(op.layout.data), i32)
            self.emit(sp.KHRCooperativeMatrixStoreOp(ptr, obj, layout, stride, access))
        else:
            _refuse_arm_nv(op)
            column_major = self.const(op.layout.data == coop.Layout.ColumnMajor, i1)
            self.emit(sp.NVCooperativeMatrixStoreOp(ptr, obj, stride, column_major, access))

    def lower_mul_add(self, op: coop.MulAddOp) -> None:
        a, b, c = (self.get(op, v) for v in (op.a, op.b, op.c))
        result_type = self.matrix_type(op, op.result.type)
        if self.flavor == "khr":
            flags = [_SIGN_FLAG_NAMES[w] for w in ("A", "B", "C", "Result")
                     if op.is_signed(w) and coop.is_integer(
                         {"A": op.a, "B": op.b, "C": op.c, "Result": op.result}[w].type.element_type)]
            if coop.MatrixOperand.SaturatingAccumulation in op.operand_flags:
                flags.append("SaturatingAccumulationKHR")
            new = sp.KHRCooperativeMatrixMulAddOp(a, b, c, "|".join(flags) or None, result_type)
        else:
            if coop.MatrixOperand.SaturatingAccumulation in op.operand_flags:
                raise CoopError(op, "SaturatingAccumulation needs SPV_KHR_cooperative_matrix (flavor=khr)")
            for w, v in (("A", op.a), ("B", op.b), ("C", op.c), ("Result", op.result)):
                t = v.type.element_type
                if op.is_signed(w) and coop.is_integer(t) and not coop.is_signed_type(t):
                    raise CoopError(op, f"flavor=nv takes signedness from the component type: "
                                    f"matrix {w} is signed, so its type must be si{coop.bit_width(t)}, not {t}")
            new = sp.NVCooperativeMatrixMulAddOp(a, b, c, result_type)
        self.set(op.result, self.emit(new).result)

    def lower_length(self, op: coop.LengthOp) -> None:
        t = self.matrix_type(op, op.matrix_type)
        cls = sp.KHRCooperativeMatrixLengthOp if self.flavor == "khr" else sp.NVCooperativeMatrixLengthOp
        self.set(op.result, self.emit(cls(t)).results[0])

    def lower_construct(self, op: coop.CompositeConstructOp) -> None:
        t = self.matrix_type(op, op.result.type)
        new = sp.CompositeConstructOp([self.get(op, op.constituent)], t)
        self.set(op.result, self.emit(new).results[0])

    def lower_extract(self, op: coop.ExtractOp) -> None:
        self.matrix_type(op, op.matrix.type)
        new = sp.CompositeExtractOp(self.get(op, op.matrix), [op.index.data], op.result.type)
        self.set(op.result, self.emit(new).result)

    def lower_insert(self, op: coop.InsertOp) -> None:
        self.matrix_type(op, op.matrix.type)
        new = sp.CompositeInsertOp(self.get(op, op.object), self.get(op, op.matrix), [op.index.data])
        self.set(op.result, self.emit(new).results[0])

    def lower_elementwise(self, op: Operation) -> None:
        t = op.results[0].type
        self.matrix_type(op, t)
        if self.flavor == "nv" and getattr(op, "KHR_ONLY", False):
            raise CoopError(op, f"{op.SPIRV_NAME} on cooperative matrices needs flavor=khr")
        cls = _SPIRV_OPS[op.SPIRV_NAME]
        new = self.emit(cls(*(self.get(op, v) for v in op.operands)))
        self.set(op.results[0], new.results[0])

    def lower_times_scalar(self, op: coop.MatrixTimesScalarOp) -> None:
        t = self.matrix_type(op, op.result.type)
        new = sp.MatrixTimesScalarOp(self.get(op, op.matrix), self.get(op, op.scalar), t)
        self.set(op.result, self.emit(new).results[0])

    def lower_conversion(self, op: Operation) -> None:
        if self.flavor == "nv" and op.SPIRV_NAME == "OpBitcast":
            raise CoopError(op, "OpBitcast on cooperative matrices needs flavor=khr")
        t = self.matrix_type(op, op.results[0].type)
        cls = _SPIRV_OPS[op.SPIRV_NAME]
        self.set(op.results[0], self.emit(cls(self.get(op, op.operands[0]), t)).results[0])

    RULES: dict[type[Operation], Callable[[_KernelLowering, Operation], None]] = {}


def _register_rules() -> None:
    r = _KernelLowering.RULES
    r[func.ReturnOp] = _KernelLowering.lower_return
    r[scf.ForOp] = _KernelLowering.lower_for
    r[scf.IfOp] = _KernelLowering.lower_if
    r[arith.ConstantOp] = _KernelLowering.lower_constant
    for cls in _INT_BINARY:
        r[cls] = _KernelLowering.lower_int_binary
    for cls in _FLOAT_BINARY:
        r[cls] = _KernelLowering.lower_float_binary
    for cls in _CASTS:
        r[cls] = _KernelLowering.lower_cast
    r[arith.NegfOp] = _KernelLowering.lower_negf
    r[arith.CmpiOp] = _KernelLowering.lower_cmpi
    r[arith.CmpfOp] = _KernelLowering.lower_cmpf
    r[arith.SelectOp] = _KernelLowering.lower_select
    r[arith.IndexCastOp] = _KernelLowering.lower_index_cast
    for cls in _BUILTINS:
        r[cls] = _KernelLowering.lower_id
    r[gpu.BlockDimOp] = _KernelLowering.lower_block_dim
    r[coop.LoadOp] = _KernelLowering.lower_load
    r[coop.StoreOp] = _KernelLowering.lower_store
    r[coop.MulAddOp] = _KernelLowering.lower_mul_add
    r[coop.LengthOp] = _KernelLowering.lower_length
    r[coop.CompositeConstructOp] = _KernelLowering.lower_construct
    r[coop.ExtractOp] = _KernelLowering.lower_extract
    r[coop.InsertOp] = _KernelLowering.lower_insert
    for cls in (*coop.ELEMENTWISE_UNARY, *coop.ELEMENTWISE_BINARY):
        r[cls] = _KernelLowering.lower_elementwise
    r[coop.MatrixTimesScalarOp] = _KernelLowering.lower_times_scalar
    for cls in coop.CONVERSIONS:
        r[cls] = _KernelLowering.lower_conversion
    _nv2.register(r)
    _async.register(r)
    _math.register(r)
    for cls, fn in list(r.items()):
        r[cls] = _encodable_first(fn)


# SPV_KHR_bfloat16 allows bf16 values in memory, conversions, composites and cooperative-matrix
# multiply-adds, but in no arithmetic instruction (spirv-val: "FAdd doesn't support BFloat16
# type"), matrices included; arithmetic on bf16 needs SPV_EXT_bfloat16_arithmetic
_BF16_ARITHMETIC = (*coop.ELEMENTWISE_UNARY, *coop.ELEMENTWISE_BINARY, coop.MatrixTimesScalarOp,
                    *_FLOAT_BINARY, arith.NegfOp, arith.CmpfOp)


def _encodable_first(rule: Callable[[_KernelLowering, Operation], None]):
    """`rule`, after refusing (on the op) a type the SPIR-V writer cannot encode: otherwise the
    writer would refuse it later, at the spirv.module, far from the line that needs fixing."""
    def checked(self: _KernelLowering, op: Operation) -> None:
        if (isinstance(op, _BF16_ARITHMETIC) or op.name.startswith("math.")) and any(
                isinstance(getattr(v.type, "element_type", v.type), BFloat16Type) for v in op.operands):
            raise CoopError(op, "bf16 arithmetic has no SPIR-V form: SPV_KHR_bfloat16 allows bf16 "
                                "in memory, conversions and multiply-adds only (convert to f32 first)")
        for v in (*op.operands, *op.results):
            t = v.type
            elem = t.element_type if isinstance(t, coop.MatrixType | MemRefType) else t
            if isinstance(elem, BFloat16Type) and not (self.target and self.target.bfloat16):
                name = self.target.name if self.target else "none"
                raise CoopError(op, f"bf16 needs SPV_KHR_bfloat16 (VK_KHR_shader_bfloat16), which "
                                    f"target '{name}' does not have (its description's \"bfloat16\")")
            if isinstance(elem, AnyFloat) and not isinstance(elem, BFloat16Type | Float16Type | Float32Type | Float64Type):
                raise CoopError(op, f"type {elem} has no SPIR-V lowering (OpTypeFloat is 16, 32 or 64 bits)")
            if isinstance(elem, IntegerType) and elem.width.data not in (1, 8, 16, 32, 64):
                raise CoopError(op, f"type {elem} has no SPIR-V lowering (OpTypeInt is 8, 16, 32 or 64 bits)")
        rule(self, op)
    return checked


from coopdialect.passes import convert_coop_async_to_spirv as _async  # noqa: E402
from coopdialect.passes import convert_coop_nv2_to_spirv as _nv2  # noqa: E402  (uses _KernelLowering)
from coopdialect.passes import convert_math_to_spirv as _math  # noqa: E402
from coopdialect.passes.convert_decode_func_to_spirv import addressing_model  # noqa: E402

_register_rules()


@dataclass(frozen=True)
class ConvertCoopToSpirvPass(ModulePass):
    """Lower every kernel of the module to one `spirv.module` (see the module docstring).

    Raises CoopError, located at the offending op, for anything without a lowering.
    """

    name = "convert-coop-to-spirv"

    flavor: str = "khr"
    """`khr`: SPV_KHR_cooperative_matrix; `nv`: SPV_NV_cooperative_matrix (matrices without a
    Use)."""
    workgroup_pad: int = 16
    """Row padding, in bytes, of the staged form's Workgroup buffers (0 = none): it spreads a
    column of a tile over the shared-memory banks."""
    workgroup_copies: str = "registers"
    """How the staged form's copies are done: `registers` (a stages=2 loop issues the next
    iteration's global loads right after its wait and holds them in registers over the compute;
    two slots share one buffer) or `direct` (each copy loads and stores at its issue point)."""
    target: str = "h200-vulkan"
    """The Vulkan target description (`coop-opt --list-targets`, or a .json path) whose optional
    SPIR-V features the module may use: bf16 (SPV_KHR_bfloat16) only where it says `bfloat16`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            target = get_target(str(self.target))
        except TargetError as e:
            raise CoopError(None, f"convert-coop-to-spirv: {e.detail}",
                            where=e.file or "<command line>") from None
        if target.api != "vulkan":
            raise CoopError(None, f"convert-coop-to-spirv: target '{target.name}' is a {target.api} "
                                  "target, not a Vulkan one", where="<command line>")
        if self.workgroup_copies not in ("registers", "direct"):
            raise CoopError(None, "convert-coop-to-spirv: workgroup_copies must be registers or "
                            f"direct, got '{self.workgroup_copies}'", where="<command line>")
        if self.flavor not in ("khr", "nv"):
            raise CoopError(None, f"convert-coop-to-spirv: flavor must be khr or nv, got '{self.flavor}'",
                            where="<command line>")
        funcs = [k for k in op.body.blocks[0].ops if isinstance(k, func.FuncOp)]
        # functions that coop-2 ops reference (CombineFunc, Func) are SPIR-V functions, not kernels
        helper_names = _nv2.referenced_functions(funcs)
        kernels = [k for k in funcs if k.sym_name.data not in helper_names]
        if not kernels:
            raise CoopError(op, "no func.func kernel to lower")
        contents: list[Operation] = []
        for k in kernels:
            if k.is_declaration:
                raise CoopError(k, "a kernel declaration has no body to lower")
            check_kernel_interface(k)  # the rule convert-coop-to-ptx applies too
            contents += _KernelLowering(k, self.flavor, workgroup_pad=self.workgroup_pad,
                                        workgroup_copies=self.workgroup_copies, target=target).run()
        for k in funcs:
            if k.sym_name.data in helper_names:
                if k.is_declaration:
                    raise CoopError(k, "a function used by a coop op needs a body to lower")
                contents += _nv2.lower_helper_function(_KernelLowering, k, self.flavor, target)
        others = [o for o in op.body.blocks[0].ops if not isinstance(o, func.FuncOp)]
        if others:
            raise CoopError(others[0], "only func.func kernels may appear at module level")
        # PhysicalStorageBuffer64 only where a DecodeFunc takes a PhysicalStorageBuffer pointer
        module = sp.ModuleOp(contents, addressing_model(contents), capabilities=["Shader"])
        apply_requirements(module)
        for k in funcs:
            k.detach()
            k.erase()
        op.body.blocks[0].add_op(module)
