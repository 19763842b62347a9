"""`raise-spirv-to-coop`, memory: the kernel's arguments from the buffers and push constants an
entry point uses, OpAccessChain as offsets into them, OpLoad / OpStore of scalars, vectors and
aggregates, and Function / Private variables held as SSA values (see `raise_spirv_values` for the
pointer kinds). A mixin of the lifter in `raise_spirv_to_coop`.

Arguments, in this order:

* each StorageBuffer or Uniform variable, in (descriptor set, binding) order: one `memref<?xT>`
  when every scalar of its Block struct is of one kind and width (T: that scalar, or the
  component type of the matrices loaded from / stored to it), its members then being runs of
  elements at their Offset / ArrayStride; else one `memref<?xT>` per member (each of one scalar
  kind), in member order;
* the push-constant block's scalars (members, array elements and vector components, depth
  first) as scalar arguments.

A scalar narrower than the memref's elements (a byte of a word buffer) is read as the word
shifted right (little-endian, as SPIR-V's buffers are on every target here) and truncated.
"""

from __future__ import annotations

from dataclasses import replace

from xdsl.dialects import arith, gpu, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, IntegerType, MemRefType, VectorType, i1, i32
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from coopdialect.dialects import coop, coop_async, spirv, spirv_general, spirv_nv2
from coopdialect.spirv.encoding import enumerant_name
from coopdialect.passes.raise_spirv_values import (
    BufferPointer,
    BuiltinPointer,
    BuiltinVector,
    Composite,
    SplitBlock,
    ValuePointer,
    VarPointer,
    byte_size,
    components,
    coop_type,
    element_stride,
    is_aggregate,
    is_scalar,
    leaves,
    member_offset,
    refuse,
    same_kind,
    scalar_bytes,
    scalar_type,
)

_MATRIX_MEMORY = (spirv.KHRCooperativeMatrixLoadOp, spirv.NVCooperativeMatrixLoadOp, spirv.KHRCooperativeMatrixStoreOp,
                  spirv.NVCooperativeMatrixStoreOp, spirv_nv2.CooperativeMatrixLoadTensorOp,
                  spirv_nv2.CooperativeMatrixStoreTensorOp)
_MAX_AGGREGATE_LEAVES = 256  # a whole struct/array loaded or stored at once becomes one op per scalar


def root_variable(v: SSAValue) -> str | None:
    """The global variable a pointer is an access chain into (statically), or None."""
    while True:
        owner = v.owner
        if isinstance(owner, spirv.AccessChainOp):
            v = owner.base
        elif isinstance(owner, spirv.AddressOfOp):
            return owner.variable.root_reference.data
        else:
            return None


class MemoryLifting:
    """Mixin: see the module docstring. Needs the lifter's `emit`, `const`, `value`, `ssa`,
    `zero`, `index`, `module`, `globals`, `functions`, `vars`, `var_types`."""

    # -- arguments ------------------------------------------------------------------------------
    def used_globals(self) -> list[spirv.GlobalVariableOp]:
        """Global variables the entry point's function and the functions it calls refer to."""
        seen_fns: set[str] = set()
        names: list[str] = []
        todo = [self.fn]
        while todo:
            fn = todo.pop()
            if fn.sym_name.data in seen_fns:
                continue
            seen_fns.add(fn.sym_name.data)
            for op in fn.walk():
                if isinstance(op, spirv.AddressOfOp) and op.variable.root_reference.data not in names:
                    names.append(op.variable.root_reference.data)
                elif isinstance(op, spirv_general.FunctionCallOp) and op.callee.root_reference.data in self.functions:
                    todo.append(self.functions[op.callee.root_reference.data])
        for s in self.entry.interface:  # an interface variable no function uses still is one
            if s.root_reference.data not in names:
                names.append(s.root_reference.data)
        return [self.globals[n] for n in names if n in self.globals]

    def matrix_component(self, name: str) -> Attribute | None:
        """The component type of the matrices loaded from / stored to global `name` (coop's
        load/store need the memref element to be it), None if none is."""
        for fn in self.reachable_functions():
            for op in fn.walk():
                if isinstance(op, _MATRIX_MEMORY) and root_variable(op.pointer) == name:
                    if isinstance(op, spirv_nv2.CooperativeMatrixLoadTensorOp) and op.decode_func is not None:
                        continue  # the DecodeFunc reads the buffer, not the load
                    mt = op.result.type if op.results else op.object.type
                    try:
                        return coop_type(mt).element_type
                    except (VerifyException, ValueError) as e:  # beyond the kernel IR's matrices
                        refuse(op, str(e).strip().splitlines()[0])
        return None

    def reachable_functions(self) -> list[spirv.FuncOp]:
        out, todo = [], [self.fn]
        while todo:
            fn = todo.pop()
            if fn in out:
                continue
            out.append(fn)
            for op in fn.walk():
                if isinstance(op, spirv_general.FunctionCallOp) and op.callee.root_reference.data in self.functions:
                    todo.append(self.functions[op.callee.root_reference.data])
        return out

    def plan_arguments(self) -> list[tuple[Attribute, str, object]]:
        """(type, name hint, what it is) of each kernel argument: ("buffer", var) for a whole
        block, ("member", var, k) for one member, ("push", path) for a push-constant scalar."""
        buffers, push = [], []
        for var in self.used_globals():
            sc = var.type.storage_class.data
            if sc in ("StorageBuffer", "Uniform"):
                buffers.append(((var.descriptor_set.data if var.descriptor_set else 0,
                                 var.binding.data if var.binding else 0), var))
            elif sc == "PushConstant":
                push.append(var)
        buffers.sort(key=lambda b: b[0])
        plan: list[tuple[Attribute, str, object]] = []
        for _, var in buffers:
            st = var.type.pointee
            name = var.sym_name.data
            if not isinstance(st, spirv.StructType):
                refuse(var, f"buffer @{name} is not a Block struct (only Block structs become memref arguments)")
            elem = self.memref_element(var, st, self.matrix_component(name))
            if elem is not None:
                plan.append((MemRefType(elem, [DYNAMIC_INDEX]), name, ("buffer", var)))
                continue
            for k, m in enumerate(st.members.data):
                me = self.memref_element(var, m, None, member_offset(st, k))
                if me is None:
                    refuse(var, f"member {k} of buffer @{name} holds scalars of different types: a memref "
                                "argument has one element type")
                plan.append((MemRefType(me, [DYNAMIC_INDEX]), f"{name}_{k}", ("member", var, k)))
        if len(push) > 1:
            refuse(push[1], "more than one push-constant block")
        for var in push:
            st = var.type.pointee
            try:
                scalars = list(leaves(st))
            except ValueError as e:
                refuse(var, f"push-constant block: {e}")
            for k, (_, t) in enumerate(scalars):
                plan.append((scalar_type(t), f"{var.sym_name.data}_{k}", ("push", k)))
        return plan

    def memref_element(self, var, t: Attribute, matrix: Attribute | None, base: int = 0) -> Attribute | None:
        """The element type of a memref holding an object of type `t` at byte `base`, or None when
        its scalars differ in kind or width (or one sits between two elements)."""
        try:
            scalars = list(leaves(t, base))
        except ValueError as e:
            refuse(var, f"buffer @{var.sym_name.data}: {e}")
        if not scalars and matrix is None:
            return None
        elem = matrix if matrix is not None else scalar_type(scalars[0][1])
        size = scalar_bytes(elem)
        if all(same_kind(s, elem) and off % size == 0 for off, s in scalars):
            return elem
        return None

    def bind_arguments(self, plan, args: list[SSAValue]) -> None:
        """Map each buffer / push-constant variable to the pointer its arguments make."""
        push: list[SSAValue] = []
        members: dict[str, dict[int, SSAValue]] = {}
        for (_, name, what), arg in zip(plan, args):
            if what[0] == "buffer":
                self.buffers[name] = BufferPointer(arg, None, None, 0, what[1].type.pointee)
            elif what[0] == "member":
                members.setdefault(what[1].sym_name.data, {})[what[2]] = arg
            else:
                push.append(arg)
        for var in self.used_globals():
            name = var.sym_name.data
            if name in members:
                st = var.type.pointee
                self.buffers[name] = SplitBlock(tuple(members[name][k] for k in range(len(st.members))), st)
            elif var.type.storage_class.data == "PushConstant":
                it = iter(push)
                self.buffers[name] = ValuePointer(self.build_from_leaves(var.type.pointee, it))

    def workgroup_buffer(self, var: spirv.GlobalVariableOp, user: Operation) -> BufferPointer:
        """A Workgroup (`shared`) variable: one `coop.alloc_workgroup` memref per workgroup at the
        kernel's entry (made on first use), its elements in the natural layout (a Workgroup
        variable has no explicit layout: array strides are the element sizes). Its scalars (or
        the matrices loaded from it) must share one type, as a buffer's do."""
        name = var.sym_name.data
        if name in self.buffers:
            return self.buffers[name]
        t = var.type.pointee
        elem = self.memref_element(var, t, self.matrix_component(name))
        if elem is None:
            refuse(user, f"uses @{name}, a Workgroup variable whose scalars differ in type "
                         "(one memref element type is needed)")
        count = byte_size(t) // scalar_bytes(elem)
        mt = MemRefType(elem, [count], memory_space=coop.StorageClassAttr(coop.StorageClass.Workgroup))
        saved, self.block = self.block, self.entry_block
        try:
            buf = self.emit(coop_async.AllocWorkgroupOp(mt), var).results[0]
        finally:
            self.block = saved
        buf.name_hint = name
        self.buffers[name] = BufferPointer(buf, None, None, 0, t)
        return self.buffers[name]

    def barrier(self, op: spirv_general.ControlBarrierOp) -> None:
        """OpControlBarrier with Execution scope Workgroup: `gpu.barrier` (every invocation of
        the workgroup waits, and workgroup memory written before is visible after: the
        interpreter's lock-step runner executes the subgroups in turn up to it). Other scopes are
        refused."""
        scopes = [self.scope_of(v, op) for v in (op.execution, op.memory)]
        if scopes[0] != "Workgroup" or scopes[1] not in ("Workgroup", "Subgroup", "Invocation"):
            refuse(op, f"a barrier of Execution scope {scopes[0]} and Memory scope {scopes[1]} is "
                       "not lifted (Workgroup execution with at most Workgroup memory is)")
        self.emit(gpu.BarrierOp(), op)

    def scope_of(self, v: SSAValue, op: Operation) -> str:
        owner = getattr(v, "owner", None)
        if isinstance(owner, spirv.ConstantOp) and isinstance(owner.value, IntegerAttr):
            name = enumerant_name("Scope", owner.value.value.data)
            if name is not None:
                return name
        refuse(op, "a barrier's scope is not a constant Scope")

    def build_from_leaves(self, t: Attribute, it) -> object:
        if is_scalar(t):
            return next(it)
        return Composite(tuple(self.build_from_leaves(m, it) for m in components(t)))

    # -- pointers -------------------------------------------------------------------------------
    def access_chain(self, op: spirv.AccessChainOp) -> None:
        p = self.value(op.base, op)
        for index in op.indices:
            p = self.chain_step(p, index, op)
        self.values[op.result] = p

    def chain_step(self, p: object, index: SSAValue, op: Operation) -> object:
        if isinstance(p, BuiltinPointer) and p.component is None:
            return BuiltinPointer(p.name, self.const_index(index, op))
        if isinstance(p, SplitBlock):
            k = self.const_index(index, op)
            return BufferPointer(p.members[k], None, None, 0, p.struct.members.data[k])
        if isinstance(p, BufferPointer):
            return self.buffer_step(p, index, op)
        if isinstance(p, ValuePointer):
            c = self.const_or_none(index)
            return ValuePointer(self.part(p.value, c if c is not None else self.ssa(index, op), op))
        if isinstance(p, VarPointer):
            t = p.pointee
            if isinstance(t, spirv.COOP_MATRIX_TYPES):
                self.const_index(index, op, "an element of a cooperative matrix in a variable (m[i]) needs a constant "
                                            "index to be lifted (coop.extract/insert take a literal)")
                return VarPointer(p.key, (*p.path, self.const_index(index, op)), t.element_type)
            c = self.const_or_none(index)
            parts = components(t) if is_aggregate(t) else refuse(op, f"indexes into {t}")
            sub = parts[c] if c is not None else parts[0]
            return VarPointer(p.key, (*p.path, c if c is not None else self.ssa(index, op)), sub)
        refuse(op, "indexes a pointer that is not lifted (a buffer, push constant, variable or builtin)")

    def buffer_step(self, p: BufferPointer, index: SSAValue, op: Operation) -> BufferPointer:
        t = p.pointee
        if isinstance(t, spirv.StructType):
            k = self.const_index(index, op)
            return replace(p, const=p.const + member_offset(t, k), pointee=t.members.data[k])
        if not isinstance(t, spirv.ArrayType | spirv.RuntimeArrayType | VectorType):
            refuse(op, f"indexes into {t}")
        stride = element_stride(t)
        c = self.const_or_none(index)
        if c is not None:
            return replace(p, const=p.const + c * stride, pointee=t.element_type)
        i = self.ssa(index, op)
        if not isinstance(i.type, IntegerType) or i.type.width.data != 32:
            refuse(op, f"an index of type {i.type} is not lifted (32-bit indices)")
        esize = scalar_bytes(p.buffer.type.element_type)
        if stride % esize == 0:
            return replace(p, elem=self.iadd(p.elem, self.imul(i, stride // esize)), pointee=t.element_type)
        return replace(p, byte=self.iadd(p.byte, self.imul(i, stride)), pointee=t.element_type)

    def iadd(self, a: SSAValue | None, b: SSAValue) -> SSAValue:
        return b if a is None else self.emit(arith.AddiOp(a, b)).results[0]

    def imul(self, a: SSAValue, c: int) -> SSAValue:
        return a if c == 1 else self.emit(arith.MuliOp(a, self.const(c, i32))).results[0]

    def element_index(self, p: BufferPointer, op: Operation) -> SSAValue:
        """The memref element (i32) where `p` points; refused when it is inside an element."""
        esize = scalar_bytes(p.buffer.type.element_type)
        if p.byte is not None or p.const % esize:
            refuse(op, "addresses a memref between two of its elements")
        c = p.const // esize
        if p.elem is None:
            return self.const(c, i32)
        return p.elem if c == 0 else self.emit(arith.AddiOp(p.elem, self.const(c, i32))).results[0]

    def matrix_pointer(self, v: SSAValue, op: Operation) -> tuple[SSAValue, SSAValue]:
        """(memref, element index) of a matrix load/store's Pointer."""
        p = self.value(v, op)
        if not isinstance(p, BufferPointer):
            refuse(op, "a matrix load/store must address a storage buffer element")
        return p.buffer, self.element_index(p, op)

    # -- loads and stores -----------------------------------------------------------------------
    def load(self, op: spirv.LoadOp) -> object:
        p = self.value(op.pointer, op)
        if isinstance(p, VarPointer):
            return self.var_get(p, op)
        if isinstance(p, ValuePointer):
            return p.value
        if isinstance(p, BuiltinPointer):
            if p.component is None and not isinstance(op.result.type, VectorType):
                return self.builtin(p.name, 0, op)
            return BuiltinVector(p.name) if p.component is None else self.builtin(p.name, p.component, op)
        if isinstance(p, BufferPointer):
            return self.buffer_read(p, op)
        refuse(op, "loads from a pointer that is not lifted")

    def store(self, op: spirv.StoreOp) -> None:
        p = self.value(op.pointer, op)
        v = self.value(op.value, op)
        if isinstance(p, VarPointer):
            self.var_set(p, v, op)
        elif isinstance(p, BufferPointer):
            self.buffer_write(p, v, op)
        else:
            refuse(op, "stores to a pointer that is not lifted (a read-only block or a builtin)")

    def sub_pointers(self, p: BufferPointer, op: Operation) -> list[BufferPointer]:
        t = p.pointee
        if isinstance(t, spirv.StructType):
            return [replace(p, const=p.const + member_offset(t, k), pointee=m) for k, m in enumerate(t.members.data)]
        stride = element_stride(t)
        return [replace(p, const=p.const + k * stride, pointee=m) for k, m in enumerate(components(t))]

    def check_size(self, t: Attribute, op: Operation) -> None:
        if sum(1 for _ in leaves(t)) > _MAX_AGGREGATE_LEAVES:
            refuse(op, f"a whole {t} is loaded or stored at once: more than {_MAX_AGGREGATE_LEAVES} scalars")

    def buffer_read(self, p: BufferPointer, op: Operation) -> object:
        t = p.pointee
        if is_scalar(t):
            return self.read_scalar(p, t, op)
        if not is_aggregate(t):
            refuse(op, f"loads a {t} from a buffer")
        self.check_size(t, op)
        return Composite(tuple(self.buffer_read(s, op) for s in self.sub_pointers(p, op)))

    def buffer_write(self, p: BufferPointer, v: object, op: Operation) -> None:
        t = p.pointee
        if is_scalar(t):
            if not isinstance(v, SSAValue):
                refuse(op, "stores a value that is not a scalar into a scalar")
            self.write_scalar(p, t, v, op)
            return
        if not is_aggregate(t):
            refuse(op, f"stores a {t} to a buffer")
        self.check_size(t, op)
        v = self.as_composite(v, op)
        for s, part in zip(self.sub_pointers(p, op), v.parts):
            self.buffer_write(s, part, op)

    def read_scalar(self, p: BufferPointer, t: Attribute, op: Operation) -> SSAValue:
        mt = p.buffer.type.element_type
        want = scalar_type(t)
        esize, size = scalar_bytes(mt), scalar_bytes(t)
        if size == esize:
            r = self.emit(memref.LoadOp.get(p.buffer, [self.index(self.element_index(p, op))]), op).results[0]
            return self.reinterpret(r, want, op)
        if size < esize and isinstance(t, IntegerType) and isinstance(mt, IntegerType):
            # byte `off` of the memref: element off / esize, shifted right by 8 * (off % esize)
            off = self.const(p.const, i32)
            if p.byte is not None:
                off = self.emit(arith.AddiOp(off, p.byte)).results[0]
            word = self.emit(arith.DivUIOp(off, self.const(esize, i32))).results[0]
            if p.elem is not None:
                word = self.emit(arith.AddiOp(word, p.elem)).results[0]
            shift = self.emit(arith.MuliOp(self.emit(arith.RemUIOp(off, self.const(esize, i32))).results[0],
                                           self.const(8, i32))).results[0]
            w = self.emit(memref.LoadOp.get(p.buffer, [self.index(word)]), op).results[0]
            w = self.reinterpret(w, IntegerType(esize * 8), op)
            if esize < 4:
                w = self.emit(arith.ExtUIOp(w, i32)).results[0]
            elif esize > 4:
                shift = self.emit(arith.ExtUIOp(shift, w.type)).results[0]
            w = self.emit(arith.ShRUIOp(w, shift)).results[0]
            return self.emit(arith.TruncIOp(w, want), op).results[0]
        refuse(op, f"reads a {t} from a memref of {mt} (a wider scalar than its elements, or of another kind)")

    def write_scalar(self, p: BufferPointer, t: Attribute, v: SSAValue, op: Operation) -> None:
        mt = p.buffer.type.element_type
        if scalar_bytes(mt) != scalar_bytes(t):
            refuse(op, f"writes a {t} into a memref of {mt} (only whole elements are written)")
        v = self.reinterpret(v, mt, op)
        self.emit(memref.StoreOp.get(v, p.buffer, [self.index(self.element_index(p, op))]), op)

    def reinterpret(self, v: SSAValue, t: Attribute, op: Operation) -> SSAValue:
        """`v` as type `t` of its width (arith.bitcast between an integer and a float)."""
        if v.type == t:
            return v
        if isinstance(v.type, IntegerType) and isinstance(t, IntegerType):
            refuse(op, f"accesses a memref of {v.type} as {t}")
        return self.emit(arith.BitcastOp(v, t), op).results[0]

    # -- variables ------------------------------------------------------------------------------
    def var_value(self, key: object) -> object:
        """The current value of a variable; one not stored yet gets a zero placeholder (read
        before written, its value is undefined)."""
        v = self.vars.get(key)
        if v is None:
            v = self.vars[key] = self.zero(self.var_types[key], at_entry=True)
        return v

    def var_get(self, p: VarPointer, op: Operation) -> object:
        v = self.var_value(p.key)
        for k in p.path:
            v = self.part(v, k, op)
        return v

    def var_set(self, p: VarPointer, value: object, op: Operation) -> None:
        if not p.path:
            self.vars[p.key] = value
            return
        self.vars[p.key] = self.with_part(self.var_value(p.key), p.path, value, op)

    def with_part(self, whole: object, path: tuple, value: object, op: Operation) -> object:
        k, rest = path[0], path[1:]
        if isinstance(whole, SSAValue) and isinstance(whole.type, coop.MatrixType):
            if rest or not isinstance(k, int):
                refuse(op, "stores into a cooperative-matrix element with a non-constant index")
            return self.emit(coop.InsertOp(self.ssa_of(value, op), whole, k), op).results[0]
        whole = self.as_composite(whole, op)
        if isinstance(k, int):
            parts = list(whole.parts)
            parts[k] = value if not rest else self.with_part(parts[k], rest, value, op)
            return Composite(tuple(parts))
        # a dynamic index: every element is replaced where the index selects it
        if rest or not all(isinstance(x, SSAValue) for x in whole.parts) or not isinstance(value, SSAValue):
            refuse(op, "stores through a non-constant index into an aggregate of aggregates")
        return Composite(tuple(
            self.emit(arith.SelectOp(self.emit(arith.CmpiOp(k, self.const(i, k.type), "eq")).results[0],
                                     value, x)).results[0] for i, x in enumerate(whole.parts)))

    def part(self, whole: object, k: object, op: Operation) -> object:
        """Member / element / component `k` (an int, or a lifted i32 SSA value) of a lifted value."""
        if isinstance(k, SSAValue) and isinstance(k.owner, arith.ConstantOp) and isinstance(k.owner.value, IntegerAttr):
            k = k.owner.value.value.data
        if isinstance(whole, SSAValue) and isinstance(whole.type, coop.MatrixType):
            if not isinstance(k, int):
                refuse(op, "an element of a cooperative matrix (m[i]) with a non-constant i is not lifted "
                           "(coop.extract takes a literal index)")
            return self.emit(coop.ExtractOp(whole, k), op).results[0]
        whole = self.as_composite(whole, op)
        if isinstance(k, int):
            return whole.parts[k]
        if not all(isinstance(x, SSAValue) for x in whole.parts):
            refuse(op, "indexes an aggregate of aggregates with a non-constant index")
        # a dynamic index selects among the elements
        r = whole.parts[-1]
        for i in range(len(whole.parts) - 2, -1, -1):
            eq = self.emit(arith.CmpiOp(k, self.const(i, k.type), "eq")).results[0]
            r = self.emit(arith.SelectOp(eq, whole.parts[i], r)).results[0]
        return r

    def as_composite(self, v: object, op: Operation) -> Composite:
        if isinstance(v, Composite):
            return v
        if isinstance(v, BuiltinVector):
            return Composite(tuple(self.builtin(v.name, c, op) for c in range(3)))
        refuse(op, "uses a scalar or matrix where a vector or aggregate is expected")

    def ssa_of(self, v: object, op: Operation) -> SSAValue:
        if not isinstance(v, SSAValue):
            refuse(op, "uses a pointer, vector or aggregate where a scalar or matrix is expected")
        return v

    @staticmethod
    def const_or_none(v: object) -> int | None:
        if isinstance(v, int):
            return v
        owner = v.owner if isinstance(v, SSAValue) else None
        # a specialization constant counts as its default value, as everywhere in the raising
        if isinstance(owner, spirv.ConstantOp | spirv_general.SpecConstantOp | arith.ConstantOp) \
                and isinstance(owner.value, IntegerAttr):
            return owner.value.value.data
        return None

    def const_index(self, v: SSAValue, user: Operation, why: str = "needs a constant index here") -> int:
        c = self.const_or_none(v)
        if c is None:
            refuse(user, why)
        return c

    def static_key(self, v: SSAValue) -> object:
        """The variable a pointer points into, found without lifting (None if not a variable)."""
        while isinstance(v.owner, spirv.AccessChainOp):
            v = v.owner.base
        owner = v.owner
        if isinstance(owner, spirv_general.VariableOp):
            return v
        if isinstance(owner, spirv.AddressOfOp):
            var = self.globals.get(owner.variable.root_reference.data)
            if var is not None and var.type.storage_class.data == "Private":
                return var.sym_name.data
            return None
        if isinstance(v, BlockArgument):
            p = self.values.get(v)
            return p.key if isinstance(p, VarPointer) else None
        return None

    def is_push_constant(self, pointer: SSAValue) -> bool:
        name = root_variable(pointer)
        var = self.globals.get(name) if name else None
        return var is not None and var.type.storage_class.data == "PushConstant"

    def unchanged_in(self, pointer: SSAValue, blocks) -> bool:
        """Whether nothing in `blocks` can write what `pointer` points into (a push constant or
        uniform, or a buffer no store or call there writes)."""
        name = root_variable(pointer)
        var = self.globals.get(name) if name else None
        if var is None:
            return False
        if var.type.storage_class.data in ("PushConstant", "Uniform"):
            return True
        if var.type.storage_class.data != "StorageBuffer":
            return False
        for b in blocks:
            for op in b.ops:
                if isinstance(op, spirv_general.FunctionCallOp):
                    return False
                if isinstance(op, spirv.StoreOp | spirv.KHRCooperativeMatrixStoreOp | spirv.NVCooperativeMatrixStoreOp
                              | spirv_nv2.CooperativeMatrixStoreTensorOp) and root_variable(op.pointer) == name:
                    return False
        return True

    def zero_scalar(self, t: Attribute) -> SSAValue:
        return self.const(0, scalar_type(t)) if t != i1 else self.const(0, i1)
