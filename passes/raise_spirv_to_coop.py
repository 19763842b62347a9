"""`raise-spirv-to-coop`: lift a read SPIR-V compute shader (`spirv.module`) into the kernel IR of
README.md — `func.func` kernels with memref arguments, `gpu` ids, `scf`, `arith` and `coop` ops —
so that the interpreter runs glslang's output (`coop-run shader.spv`) and `convert-coop-to-ptx`
can retarget it.

What is lifted (the inverse of `convert-coop-to-spirv`, plus the shapes glslang emits):

* each GLCompute entry point becomes a `func.func` named by its entry-point name, with
  `coop.workgroup_size` from LocalSize (or LocalSizeId's constants' default values);
* each StorageBuffer variable holding a `Block` struct of one (runtime) array becomes a memref
  argument `memref<?xT>`, in (descriptor set, binding) order; `OpAccessChain %var 0 %i` then
  OpLoad/OpStore become `memref.load`/`memref.store`, and the matrix loads/stores address the
  memref at element `%i`;
* the WorkgroupId / LocalInvocationId / GlobalInvocationId / NumWorkgroups / Subgroup* builtins
  become `gpu` id ops; constants and specialization constants (their default values) become
  `arith.constant`, OpSpecConstantOp is computed in place;
* Function-storage variables are promoted to SSA values (loads and stores of whole variables);
* a structured loop (OpLoopMerge) becomes `scf.while`, a selection (OpSelectionMerge) `scf.if`;
  OpPhi values and the variables a construct stores are carried as results;
* scalar arithmetic becomes `arith` (SPIR-V's 32-bit integers signless; `index_cast` where an
  offset or stride is needed), cooperative-matrix instructions the `coop` ops they come from;
* GLSL.std.450 extended instructions become the `math` / `arith` ops that state them exactly
  (`passes/raise_glsl_std_450.py`: Exp, Log, Sqrt, InverseSqrt, Tanh, FAbs, Fma, Floor, FMin,
  NMax, ...);
* tensor layouts/views and their Set/Slice instructions become `tensor_addr` ops, the
  cooperative-matrix-2 instructions `coop.load_tensor`/`store_tensor`/`reduce`/`convert`/
  `transpose`/`per_element_op`; a CombineFunc / Func becomes a `func.func` `<kernel>_<name>`.

Anything else (function calls, the other extended instructions, a DecodeFunc, a tensor load/store not at
element 0, `break`/`continue` out of a loop body, a dynamic index into a matrix) is refused with
one line naming the instruction at its word offset (`file:0:W: error: ...`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from coopdialect.errors import CoopError
from coopdialect.dialects import coop, coop_nv2, gpu, spirv, spirv_general, spirv_nv2
from coopdialect.dialects import tensor_addr as ta
from coopdialect.passes import raise_glsl_std_450 as _glsl
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
         "OpFOrdGreaterThan": "ogt", "OpFOrdGreaterThanEqual": "oge"}
# the coop element-wise / conversion op of each SPIR-V instruction on matrices
_COOP_BY_SPIRV = {c.SPIRV_NAME: c for c in (*coop.ELEMENTWISE_UNARY, *coop.ELEMENTWISE_BINARY, *coop.CONVERSIONS)}
_BUILTIN_IDS = {"WorkgroupId": gpu.BlockIdOp, "LocalInvocationId": gpu.ThreadIdOp,
                "GlobalInvocationId": gpu.GlobalIdOp, "NumWorkgroups": gpu.GridDimOp}
_BUILTIN_SCALARS = {"SubgroupId": gpu.SubgroupIdOp, "NumSubgroups": gpu.NumSubgroupsOp,
                    "SubgroupSize": gpu.SubgroupSizeOp, "SubgroupLocalInvocationId": gpu.LaneIdOp}
_USES = {"MatrixAKHR": coop.Use.MatrixA, "MatrixBKHR": coop.Use.MatrixB, "MatrixAccumulatorKHR": coop.Use.MatrixAcc}
_SIGN_FLAGS = {"MatrixASignedComponentsKHR": "ASigned", "MatrixBSignedComponentsKHR": "BSigned",
               "MatrixCSignedComponentsKHR": "CSigned", "MatrixResultSignedComponentsKHR": "ResultSigned",
               "SaturatingAccumulationKHR": "SaturatingAccumulation"}


def _layout_name(value: int) -> str:
    for name, entry in ENUMS["CooperativeMatrixLayout"].items():
        if entry[0] == value:
            return name.removesuffix("KHR")
    raise ValueError(f"unknown Cooperative Matrix Layout {value}")


@dataclass(frozen=True)
class _Pointer:
    """An element of a storage buffer: the memref argument and the element index (i32)."""

    buffer: SSAValue
    index: SSAValue


@dataclass(frozen=True)
class _PushBlock:
    """The push-constant block: its members are the kernel's scalar arguments."""

    members: tuple[SSAValue, ...]


@dataclass(frozen=True)
class _BuiltinVector:
    """A loaded 3-component builtin (WorkgroupId, ...): its components become gpu id ops."""

    name: str


@dataclass(frozen=True)
class _PushMember:
    value: SSAValue


@dataclass(frozen=True)
class _BuiltinPointer:
    name: str
    component: int | None  # an OpAccessChain to one component, or the whole vector


class _Refuse(Exception):
    def __init__(self, op: Operation, message: str):
        self.op = op
        self.message = message


def _refuse(op: Operation, message: str):
    raise _Refuse(op, message)


def _scalar_type(t: Attribute) -> Attribute:
    """SPIR-V scalar types as `arith` wants them: integers signless."""
    if isinstance(t, IntegerType):
        return IntegerType(t.width.data)
    return t


# OpTensor*Set*NV / SliceNV -> the tensor_addr op of that instruction
_TENSOR_SET = {c.SPIRV_NAME: c for c in (*ta.LAYOUT_SET_OPS, *ta.VIEW_SET_OPS)}


def _reduce_mask(text: str) -> int:
    return sum(ENUMS["CooperativeMatrixReduce"][n.strip()][0] for n in text.split("|"))


def _coop_type(t: Attribute) -> Attribute:
    if isinstance(t, spirv.CooperativeMatrixType):
        # KHR: signedness is in the MulAdd's Matrix*SignedComponents operands, so components are
        # signless like every scalar (NV keeps OpTypeInt's signedness, its only source)
        return coop.MatrixType(t.rows.data, t.columns.data, _scalar_type(t.element_type), t.scope.data,
                               _USES[t.use.data])
    if isinstance(t, spirv.NVCooperativeMatrixType):
        return coop.MatrixType(t.rows.data, t.columns.data, t.element_type, t.scope.data)
    if isinstance(t, spirv_nv2.TensorLayoutType):
        return ta.TensorLayoutType(t.dim.data, t.clamp_mode.data)
    if isinstance(t, spirv_nv2.TensorViewType):
        return ta.TensorViewType(t.dim.data, bool(t.has_dimensions.data), t.perm)
    return _scalar_type(t)


class _Kernel:
    """Lifts one entry point's function."""

    def __init__(self, module: spirv.ModuleOp, entry: spirv.EntryPointOp, fn: spirv.FuncOp | None = None):
        self.module = module
        self.entry = entry
        self.kernel_name = entry.entry_point_name
        self.fn = fn or next(op for op in module.ops if isinstance(op, spirv.FuncOp)
                             and op.sym_name.data == entry.fn.root_reference.data)
        self.helpers: dict[str, func.FuncOp] = {}
        self.globals = {op.sym_name.data: op for op in module.ops if isinstance(op, spirv.GlobalVariableOp)}
        self.values: dict[SSAValue, object] = {}
        self.block = Block()  # where ops are emitted now
        self.consts: dict[tuple, SSAValue] = {}

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
        attr = FloatAttr(float(value), t) if isinstance(t, AnyFloat) else IntegerAttr(int(value), t)
        return self.emit(arith.ConstantOp(attr)).results[0]

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
                owner, (spirv.AddressOfOp, *spirv_general.CONSTANT_OPS))):
            return self.module_value(owner, user)
        _refuse(user, "uses a value the raising has not seen (unstructured control flow?)")

    def ssa(self, v: SSAValue, user: Operation) -> SSAValue:
        r = self.value(v, user)
        if not isinstance(r, SSAValue):
            _refuse(user, "uses a pointer or builtin as a value")
        return r

    def module_value(self, op: Operation, user: Operation) -> object:
        """A module-level constant, materialized where it is first used (the func's entry, since
        the body is emitted top-down and constants dominate everything)."""
        key = op
        if key in self.consts:
            return self.consts[key]
        saved, self.block = self.block, self.entry_block
        try:
            if isinstance(op, spirv.ConstantOp):
                r = self.const_at_entry(op.value.value.data, _coop_type(op.result.type))
            elif isinstance(op, spirv_general.SpecConstantOp):  # its default value
                r = self.const_at_entry(op.value.value.data, _coop_type(op.result.type))
            elif isinstance(op, spirv_general.SpecConstantOperationOp):
                r = self.spec_operation(op, user)
            elif isinstance(op, spirv.AddressOfOp):
                r = self.address_of(op, user)
            else:
                _refuse(user, f"uses '{op.name}', which is not lifted")
        finally:
            self.block = saved
        self.consts[key] = r
        return r

    def const_at_entry(self, value, t: Attribute) -> SSAValue:
        saved, self.block = self.block, self.entry_block
        try:
            return self.const(value, t)
        finally:
            self.block = saved

    def spec_operation(self, op: spirv_general.SpecConstantOperationOp, user: Operation) -> SSAValue:
        name = op.opcode.data
        if name in ("OpCooperativeMatrixLengthKHR", "OpCooperativeMatrixLengthNV"):
            return self.emit(coop.LengthOp(_coop_type(op.literals.data[0]))).results[0]
        if name in _INT_BINARY and len(op.args) == 2:
            a, b = (self.ssa(x, user) for x in op.args)
            return self.emit(_INT_BINARY[name](a, b)).results[0]
        _refuse(user, f"OpSpecConstantOp {name} is not lifted")

    def address_of(self, op: spirv.AddressOfOp, user: Operation) -> object:
        var = self.globals[op.variable.root_reference.data]
        if var.built_in is not None:
            return _BuiltinPointer(var.built_in.data, None)
        if var.sym_name.data in self.buffers:
            return self.buffers[var.sym_name.data]
        _refuse(user, f"uses @{var.sym_name.data}, which is neither a storage buffer nor a builtin")

    # -- the kernel -----------------------------------------------------------------------------
    def run(self) -> func.FuncOp:
        self.buffers: dict[str, SSAValue] = {}
        buffers = []
        for name in (s.root_reference.data for s in self.entry.interface):
            var = self.globals[name]
            t = var.type
            if t.storage_class.data != "StorageBuffer":
                continue
            st = t.pointee
            if (not isinstance(st, spirv.StructType) or len(st.members) != 1
                    or not isinstance(st.members.data[0], spirv.RuntimeArrayType | spirv.ArrayType)):
                _refuse(var, "a storage buffer must hold a Block struct of one array to become a memref")
            buffers.append(((var.descriptor_set.data if var.descriptor_set else 0,
                             var.binding.data if var.binding else 0), name, st.members.data[0].element_type))
        buffers.sort()
        arg_types: list[Attribute] = [MemRefType(self.buffer_element(name, et), [DYNAMIC_INDEX])
                                      for _, name, et in buffers]
        # a push-constant block's members become scalar arguments after the memrefs
        push = [self.globals[s.root_reference.data] for s in self.entry.interface
                if self.globals[s.root_reference.data].type.storage_class.data == "PushConstant"]
        push += [op for op in self.globals.values() if op.type.storage_class.data == "PushConstant" and op not in push]
        members: list[Attribute] = []
        for var in push[:1]:
            st = var.type.pointee
            if not isinstance(st, spirv.StructType) or not all(
                    isinstance(m, IntegerType | AnyFloat) for m in st.members):
                _refuse(var, "a push-constant block must be a struct of scalars to become arguments")
            members = [_scalar_type(m) for m in st.members]
        if len(push) > 1:
            _refuse(push[1], "more than one push-constant block")
        body = Region(Block(arg_types=[*arg_types, *members]))
        self.entry_block = body.block
        for (_, name, _), arg in zip(buffers, body.block.args):
            self.buffers[name] = arg
        if push:
            self.buffers[push[0].sym_name.data] = _PushBlock(tuple(body.block.args[len(buffers):]))
        arg_types += members
        self.block = body.block
        blocks = list(self.fn.body.blocks)
        self.raise_chain(blocks[0], None)
        kernel = func.FuncOp(self.entry.entry_point_name, ([*arg_types], []), body)
        kernel.location = self.fn.location
        kernel.attributes["coop.workgroup_size"] = DenseArrayBase.from_list(i32, list(self.workgroup_size()))
        return kernel

    def buffer_element(self, name: str, element: Attribute) -> Attribute:
        """The memref element type: the component type of the matrices loaded from / stored to the
        buffer (coop requires them equal), else the array's element type with integers signless."""
        for op in self.fn.walk():
            if isinstance(op, spirv.KHRCooperativeMatrixLoadOp | spirv.NVCooperativeMatrixLoadOp
                          | spirv.KHRCooperativeMatrixStoreOp | spirv.NVCooperativeMatrixStoreOp):
                chain = op.pointer.owner
                if isinstance(chain, spirv.AccessChainOp) and isinstance(chain.base.owner, spirv.AddressOfOp) \
                        and chain.base.owner.variable.root_reference.data == name:
                    mt = op.result.type if op.results else op.object.type
                    return _coop_type(mt).element_type
        return _scalar_type(element)

    def workgroup_size(self) -> tuple[int, int, int]:
        name = self.entry.fn.root_reference.data
        for op in self.module.ops:
            if isinstance(op, spirv.ExecutionModeOp) and op.fn.root_reference.data == name \
                    and op.execution_mode.data == "LocalSize":
                return tuple(v.data for v in op.values)  # type: ignore[return-value]
            if isinstance(op, spirv.ExecutionModeIdOp) and op.fn.root_reference.data == name \
                    and op.execution_mode.data == "LocalSizeId":
                return tuple(a.owner.value.value.data for a in op.args)  # type: ignore[return-value]
        _refuse(self.fn, "the entry point has no LocalSize / LocalSizeId execution mode")

    # -- structured control flow ----------------------------------------------------------------
    def raise_chain(self, block: Block, stop: Block | None) -> list[SSAValue] | None:
        """Emit `block` and its structured successors up to `stop`; return the values passed to
        `stop` (its OpPhis), or None when the chain ends in OpReturn."""
        while True:
            ops = list(block.ops)
            if any(isinstance(o, spirv.LoopMergeOp) for o in ops):
                block = self.raise_loop(block)
                continue
            for op in ops[:-1]:
                if not isinstance(op, spirv.SelectionMergeOp):
                    self.lift(op)
            term = ops[-1]
            if isinstance(term, spirv.ReturnOp | spirv.ReturnValueOp):
                if stop is not None:
                    _refuse(term, "a return inside a loop or selection is not lifted")
                self.emit(func.ReturnOp(*(self.ssa(v, term) for v in term.operands)), term)
                return None
            if isinstance(term, spirv.BranchOp):
                args = [self.value(a, term) for a in term.args]
                if term.target is stop:
                    return args  # type: ignore[return-value]
                self.bind(term.target, args, term)
                block = term.target
                continue
            if isinstance(term, spirv.BranchConditionalOp) and isinstance(ops[-2] if len(ops) > 1 else None,
                                                                         spirv.SelectionMergeOp):
                block = self.raise_selection(ops[-2], term)
                continue
            _refuse(term, "unstructured control flow (a branch without OpSelectionMerge / OpLoopMerge, or a "
                          "break/continue out of a loop body) is not lifted")

    def bind(self, target: Block, args: list, user: Operation) -> None:
        if len(args) != len(target.args):
            _refuse(user, "branch arguments do not match the target's OpPhis")
        for a, v in zip(target.args, args):
            self.values[a] = v

    def region_blocks(self, start: Block, stop: Block) -> list[Block]:
        """Blocks reachable from `start` without passing `stop`."""
        seen: list[Block] = []
        todo = [start]
        while todo:
            b = todo.pop()
            if b is stop or b in seen:
                continue
            seen.append(b)
            term = b.last_op
            if term is not None:
                todo.extend(term.successors)
        return seen

    def stored_variables(self, blocks: list[Block]) -> list[SSAValue]:
        out: list[SSAValue] = []
        for b in blocks:
            for op in b.ops:
                if isinstance(op, spirv.StoreOp) and isinstance(op.pointer.owner, spirv_general.VariableOp) \
                        and op.pointer not in out:
                    out.append(op.pointer)
        return out

    def var_value(self, var: SSAValue, user: Operation) -> SSAValue:
        """The current value of a Function variable; one not stored yet gets a zero placeholder
        (read before written, its value is undefined)."""
        v = self.values.get(var)
        if isinstance(v, SSAValue):
            return v
        z = self.const_at_entry(0, _coop_type(var.type.pointee))
        self.values[var] = z
        return z

    def raise_selection(self, merge_op: spirv.SelectionMergeOp, term: spirv.BranchConditionalOp) -> Block:
        merge = merge_op.merge_block
        cond = self.ssa(term.condition, term)
        inner = self.region_blocks(term.true_target, merge) + self.region_blocks(term.false_target, merge)
        carried = self.stored_variables(inner)
        before = {v: self.var_value(v, term) for v in carried}
        results: list[list[SSAValue]] = []
        regions = []
        for target, edge_args in ((term.true_target, term.true_args), (term.false_target, term.false_args)):
            saved_block = self.block
            self.block = Block()
            self.values.update(before)
            if target is merge:
                args = [self.value(a, term) for a in edge_args]
            else:
                self.bind(target, [self.value(a, term) for a in edge_args], term)
                args = self.raise_chain(target, merge)
                if args is None:
                    _refuse(term, "a return inside a selection is not lifted")
            yielded = [*args, *(self.values[v] for v in carried)]
            self.emit(scf.YieldOp(*yielded), term)
            results.append(yielded)
            regions.append(Region(self.block))
            self.block = saved_block
        types = [v.type for v in results[0]]
        if types != [v.type for v in results[1]]:
            _refuse(term, "the two sides of a selection produce different types")
        if_op = self.emit(scf.IfOp(cond, types, regions[0], regions[1]), term)
        n = len(merge.args)
        self.bind(merge, list(if_op.results[:n]), term)
        for v, r in zip(carried, if_op.results[n:]):
            self.values[v] = r
        return merge

    def raise_loop(self, header: Block) -> Block:
        ops = list(header.ops)
        lm = next(o for o in ops if isinstance(o, spirv.LoopMergeOp))
        merge = lm.merge_block  # the continue block is part of the body chain (it branches to the header)
        if merge.args:
            _refuse(lm, "OpPhis in a loop's merge block are not lifted")
        loop_blocks = self.region_blocks(header, merge)
        carried = self.stored_variables(loop_blocks)
        init = [self.value(a, lm) for a in header.args] + [self.var_value(v, lm) for v in carried]
        # the condition chain: the header and the blocks it branches to unconditionally, up to the
        # OpBranchConditional that leaves the loop
        chain = [header]
        while isinstance(chain[-1].last_op, spirv.BranchOp) and chain[-1].last_op.target not in (merge, header):
            chain.append(chain[-1].last_op.target)
        exit_term = chain[-1].last_op
        if not isinstance(exit_term, spirv.BranchConditionalOp) or merge not in (exit_term.true_target,
                                                                                 exit_term.false_target):
            _refuse(lm, "a loop's header must lead to an OpBranchConditional that exits to the merge block")
        body_start = exit_term.false_target if exit_term.true_target is merge else exit_term.true_target
        # values of the chain used outside it are forwarded through scf.condition
        chain_ops = [o for b in chain for o in b.ops]
        forwarded = [r for o in chain_ops for r in o.results
                     if any(u.operation.parent_block() not in chain for u in r.uses)]
        saved = self.block
        before = Block(arg_types=[self.type_of(v) for v in init])
        self.block = before
        self.bind(header, list(before.args[: len(header.args)]), lm)
        for v, a in zip(carried, before.args[len(header.args):]):
            self.values[v] = a
        for i, b in enumerate(chain):
            for op in list(b.ops)[:-1]:
                if not isinstance(op, spirv.LoopMergeOp | spirv.SelectionMergeOp):
                    self.lift(op)
            if i + 1 < len(chain):
                self.bind(chain[i + 1], [self.value(a, b.last_op) for a in b.last_op.args], b.last_op)
        stay = self.ssa(exit_term.condition, exit_term)
        if exit_term.true_target is merge:
            stay = self.emit(arith.XOrIOp(stay, self.const(1, i1))).results[0]
        passed = [*before.args[: len(header.args)], *(self.values[v] for v in carried),
                  *(self.ssa(r, exit_term) for r in forwarded)]
        self.emit(scf.ConditionOp(stay, *passed), exit_term)
        after = Block(arg_types=[v.type for v in passed])
        self.block = after
        n, m = len(header.args), len(carried)
        for a, v in zip(header.args, after.args[:n]):
            self.values[a] = v
        for v, a in zip(carried, after.args[n: n + m]):
            self.values[v] = a
        for r, a in zip(forwarded, after.args[n + m:]):
            self.values[r] = a
        edge = exit_term.true_args if exit_term.false_target is merge else exit_term.false_args
        if body_start is header:
            back = [self.value(a, exit_term) for a in edge]
        else:
            self.bind(body_start, [self.value(a, exit_term) for a in edge], exit_term)
            back = self.raise_chain(body_start, header)
            if back is None:
                _refuse(lm, "a return inside a loop is not lifted")
        self.emit(scf.YieldOp(*back, *(self.values[v] for v in carried)), lm)
        self.block = saved
        loop = self.emit(scf.WhileOp(init, [v.type for v in passed], Region(before), Region(after)), lm)
        for a, r in zip(header.args, loop.results[:n]):
            self.values[a] = r
        for v, r in zip(carried, loop.results[n: n + m]):
            self.values[v] = r
        for f, r in zip(forwarded, loop.results[n + m:]):
            self.values[f] = r
        return merge

    @staticmethod
    def type_of(v: object) -> Attribute:
        assert isinstance(v, SSAValue)
        return v.type

    # -- instructions ---------------------------------------------------------------------------
    def lift(self, op: Operation) -> None:
        if isinstance(op, spirv.ConstantOp | spirv_general.SpecConstantOp | spirv_general.SpecConstantOperationOp
                      | spirv.AddressOfOp):
            return  # materialized where used
        name = getattr(op, "OPNAME", op.name)
        rt = _coop_type(op.results[0].type) if op.results else None
        ins = op.operands
        if isinstance(op, spirv_general.VariableOp):
            if op.initializer is not None:
                self.values[op.result] = self.ssa(op.initializer, op)
            return
        if isinstance(op, spirv.AccessChainOp):
            base = self.value(op.base, op)
            if isinstance(base, _BuiltinPointer) and len(op.indices) == 1:
                k = self.const_index(op.indices[0], op)
                self.values[op.result] = _BuiltinPointer(base.name, k)
                return
            if isinstance(base, SSAValue) and isinstance(base.type, MemRefType) and len(op.indices) == 2 \
                    and self.const_index(op.indices[0], op) == 0:
                self.values[op.result] = _Pointer(base, self.ssa(op.indices[1], op))
                return
            if isinstance(base, _PushBlock) and len(op.indices) == 1:
                self.values[op.result] = _PushMember(base.members[self.const_index(op.indices[0], op)])
                return
            if isinstance(op.base.owner, spirv_general.VariableOp):
                _refuse(op, "an element of a Function variable (a matrix or array indexed in place, such as "
                            "m[i] with a non-constant i) is not lifted")
            _refuse(op, "only OpAccessChain into a storage buffer's array, a push-constant block or a builtin "
                        "vector is lifted")
        if isinstance(op, spirv.LoadOp):
            p = self.value(op.pointer, op) if not isinstance(op.pointer.owner, spirv_general.VariableOp) else None
            if isinstance(op.pointer.owner, spirv_general.VariableOp):
                self.values[op.result] = self.var_value(op.pointer, op)
            elif isinstance(p, _Pointer):
                r = self.emit(memref.LoadOp.get(p.buffer, [self.index(p.index)]), op).results[0]
                if r.type != rt:
                    _refuse(op, f"loads {r.type} from a buffer of {rt}")
                self.values[op.result] = r
            elif isinstance(p, _PushMember):
                self.values[op.result] = p.value
            elif isinstance(p, _BuiltinPointer) and p.name in _BUILTIN_SCALARS:
                self.values[op.result] = self.builtin(p.name, 0, op)
            elif isinstance(p, _BuiltinPointer):
                self.values[op.result] = _BuiltinVector(p.name) if p.component is None else self.builtin(p.name, p.component, op)
            else:
                _refuse(op, "loads from a pointer that is not lifted")
            return
        if isinstance(op, spirv.StoreOp):
            v = self.ssa(op.value, op)
            if isinstance(op.pointer.owner, spirv_general.VariableOp):
                self.values[op.pointer] = v
                return
            p = self.value(op.pointer, op)
            if not isinstance(p, _Pointer):
                _refuse(op, "stores to a pointer that is not lifted")
            self.emit(memref.StoreOp.get(v, p.buffer, [self.index(p.index)]), op)
            return
        if isinstance(op, spirv.CompositeExtractOp):
            src = self.value(op.composite, op)
            idx = list(op.indices.get_values())
            if isinstance(src, _BuiltinVector) and len(idx) == 1:
                self.values[op.result] = self.builtin(src.name, idx[0], op)
            elif isinstance(src, SSAValue) and isinstance(src.type, coop.MatrixType) and len(idx) == 1:
                self.values[op.result] = self.emit(coop.ExtractOp(src, idx[0]), op).results[0]
            else:
                _refuse(op, "only a builtin vector's or a matrix's element is extracted")
            return
        if isinstance(op, spirv.CompositeInsertOp):
            idx = list(op.indices.get_values())
            m = self.ssa(op.composite, op)
            if not isinstance(m.type, coop.MatrixType) or len(idx) != 1:
                _refuse(op, "only a matrix element is inserted")
            self.values[op.result] = self.emit(coop.InsertOp(self.ssa(op.object, op), m, idx[0]), op).results[0]
            return
        if isinstance(op, spirv.CompositeConstructOp) and isinstance(rt, coop.MatrixType):
            self.values[op.result] = self.emit(coop.CompositeConstructOp(self.ssa(ins[0], op), rt), op).results[0]
            return
        if isinstance(op, spirv.KHRCooperativeMatrixLoadOp | spirv.NVCooperativeMatrixLoadOp):
            new = self.emit(self.matrix_load(op, rt), op)
            self.values[op.results[0]] = new.results[0]
            return
        if isinstance(op, spirv.KHRCooperativeMatrixStoreOp | spirv.NVCooperativeMatrixStoreOp):
            self.emit(self.matrix_store(op), op)
            return
        if isinstance(op, spirv_nv2.CooperativeMatrixLoadTensorOp | spirv_nv2.CooperativeMatrixStoreTensorOp):
            self.tensor_memory(op)
            return
        vals = [self.ssa(v, op) for v in ins]
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
            new = coop.LengthOp(_coop_type(op.matrix_type))
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
        elif name in _INT_BINARY:
            new = _INT_BINARY[name](*vals)
        elif name in _FLOAT_BINARY:
            new = _FLOAT_BINARY[name](*vals)
        elif name in _ICMP:
            new = arith.CmpiOp(*vals, _ICMP[name])
        elif name in _FCMP:
            new = arith.CmpfOp(*vals, _FCMP[name])
        elif name == "OpSelect":
            new = arith.SelectOp(*vals)
        elif name == "OpLogicalNot":
            new = arith.XOrIOp(vals[0], self.const(1, i1))
        elif name == "OpSNegate":
            new = arith.SubiOp(self.const(0, rt), vals[0])
        elif name == "OpFNegate":
            new = arith.NegfOp(vals[0])
        elif name in ("OpUConvert", "OpSConvert", "OpFConvert", "OpConvertSToF", "OpConvertUToF",
                      "OpConvertFToS", "OpConvertFToU", "OpBitcast"):
            new = self.scalar_conversion(name, vals[0], rt, op)
        elif isinstance(op, spirv_general.ExtInstOp):
            try:
                *before, new = _glsl.lift(op, vals)
            except _glsl.NotLifted as e:
                _refuse(op, str(e))
            for b in before:
                self.emit(b, op)
        else:
            _refuse(op, f"{name} is not lifted")
        self.emit(new, op)
        if op.results:
            self.values[op.results[0]] = new.results[0]

    def tensor_memory(self, op) -> None:
        """OpCooperativeMatrix{Load,Store}TensorNV -> coop.load_tensor / store_tensor, which address
        the memref from element 0 (the tensor layout does the addressing)."""
        p = self.pointer(op.pointer, op)
        if self.const_index_or_none(p.index) != 0:
            _refuse(op, "a tensor load/store whose Pointer is not element 0 of its buffer is not lifted "
                        "(coop.load_tensor/store_tensor address the memref from element 0)")
        if op.decode_func is not None:
            _refuse(op, "a DecodeFunc is not lifted")
        if op.memory_operand is not None and op.memory_operand.data != "None":
            _refuse(op, "a Memory Operand on a tensor load/store is not lifted")
        obj = self.ssa(op.object, op)
        layout = self.ssa(op.layout, op)
        view = None if op.view is None else self.ssa(op.view, op)
        if isinstance(op, spirv_nv2.CooperativeMatrixLoadTensorOp):
            new = self.emit(coop_nv2.LoadTensorOp(p.buffer, obj, layout, view), op)
            self.values[op.result] = new.results[0]
        else:
            self.emit(coop_nv2.StoreTensorOp(obj, p.buffer, layout, view), op)

    def const_index_or_none(self, v: SSAValue) -> int | None:
        owner = v.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            return owner.value.value.data
        return None

    def helper(self, ref, user: Operation) -> str:
        """The `func.func` lifted from the `spirv.func` a coop op references (CombineFunc, Func):
        its parameters and result in coop types; lifted once per kernel."""
        name = ref.root_reference.data
        if name not in self.helpers:
            fn = next((o for o in self.module.ops if isinstance(o, spirv.FuncOp) and o.sym_name.data == name), None)
            if fn is None:
                _refuse(user, f"@{name} is not a function of the module")
            sub = _Kernel(self.module, self.entry, fn)
            self.helpers[name] = sub.run_helper(self.kernel_name)
            self.helpers.update(sub.helpers)
        return self.helpers[name].sym_name.data

    def run_helper(self, prefix: str) -> func.FuncOp:
        ft = self.fn.function_type
        ins = [_coop_type(t) for t in ft.inputs]
        outs = [_coop_type(t) for t in ft.outputs]
        body = Region(Block(arg_types=ins))
        self.entry_block = self.block = body.block
        self.buffers = {}
        blocks = list(self.fn.body.blocks)
        for a, v in zip(blocks[0].args, body.block.args):
            self.values[a] = v
        self.raise_chain(blocks[0], None)
        helper = func.FuncOp(f"{prefix}_{self.fn.sym_name.data}", (ins, outs), body)
        helper.location = self.fn.location
        return helper

    def scalar_conversion(self, name: str, v: SSAValue, rt: Attribute, op: Operation) -> Operation:
        if name == "OpBitcast":
            return arith.BitcastOp(v, rt)
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
        if name == "OpFConvert":
            return arith.ExtFOp(v, rt) if dst_w > src_w else arith.TruncFOp(v, rt)
        if dst_w < src_w:
            return arith.TruncIOp(v, rt)
        return arith.ExtSIOp(v, rt) if name == "OpSConvert" else arith.ExtUIOp(v, rt)

    def const_index(self, v: SSAValue, user: Operation) -> int:
        owner = v.owner
        if isinstance(owner, spirv.ConstantOp) and isinstance(owner.value, IntegerAttr):
            return owner.value.value.data
        _refuse(user, "needs a constant index here")

    def builtin(self, name: str, component: int, op: Operation) -> SSAValue:
        if name in _BUILTIN_IDS:
            r = self.emit(_BUILTIN_IDS[name](["x", "y", "z"][component]), op).results[0]
        elif name in _BUILTIN_SCALARS:
            r = self.emit(_BUILTIN_SCALARS[name](), op).results[0]
        else:
            _refuse(op, f"builtin {name} is not lifted")
        return self.emit(arith.IndexCastOp(r, i32), op).results[0]

    def pointer(self, v: SSAValue, op: Operation) -> _Pointer:
        p = self.value(v, op)
        if not isinstance(p, _Pointer):
            _refuse(op, "a matrix load/store must address a storage buffer element")
        return p

    def matrix_load(self, op, rt) -> Operation:
        p = self.pointer(op.pointer, op)
        stride = self.index(self.ssa(op.stride, op))
        return coop.LoadOp(p.buffer, self.index(p.index), stride, self.layout(op), rt)

    def matrix_store(self, op) -> Operation:
        p = self.pointer(op.pointer, op)
        stride = self.index(self.ssa(op.stride, op))
        return coop.StoreOp(self.ssa(op.object, op), p.buffer, self.index(p.index), stride, self.layout(op))

    def layout(self, op) -> str:
        if isinstance(op, spirv.NVCooperativeMatrixLoadOp | spirv.NVCooperativeMatrixStoreOp):
            owner = op.column_major.owner
            if not isinstance(owner, spirv.ConstantOp):
                _refuse(op, "ColumnMajor must be a constant")
            return "ColumnMajor" if owner.value.value.data else "RowMajor"
        if op.stride is None:
            _refuse(op, "a matrix load/store without Stride is not lifted")
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
                except _Refuse as e:
                    raise CoopError(e.op, e.message) from None
                except (ValueError, KeyError, StopIteration) as e:
                    raise CoopError(entry, f"cannot lift: {e}") from None
            Rewriter.insert_op(kernels, InsertPoint.before(spv))
            spv.detach()
            spv.erase()

