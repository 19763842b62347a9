"""convert-coop-to-spirv rules for the staged form (`coopdialect.dialects.coop_async`); registered
into `_KernelLowering.RULES` when `passes/convert_coop_to_spirv.py` imports this module.

Vulkan has no asynchronous copy, so a copy is done by the invocations of the workgroup at its
issue point and the waits are barriers (what the NVIDIA driver ran fastest among the structures
measured by benchmarks/vk_gemm_sweep.py, docs/performance.md):

* `coop.alloc_workgroup` -> one OpVariable in the Workgroup storage class (in the entry point's
  interface, SPIR-V 1.4+): an OpTypeArray of 16-byte vectors (`vector<4xi32>`) when every access
  to the buffer is provably 16-byte aligned ("vector buffer"), else of its element type.
* `coop.async_copy` (rows x cols box) -> every invocation copies the box's 16-byte pieces
  `x = LocalInvocationIndex + i*invocations` (i = 0, 1, ..., unrolled; the last one guarded when
  the count does not divide), row `x / (cols/v)`, piece `x mod (cols/v)`, through an OpLoad of a
  `vector<4xi32>` view of the source buffer (a second StorageBuffer variable at the same
  descriptor set and binding) and an OpStore into the Workgroup array. Scalar buffers copy one
  element per piece. The copy is complete when the invocation passes it; the OpControlBarrier of
  the next `coop.async_wait_group` publishes it to the workgroup, which is all the staged form's
  semantics ask (a destination is written "at some moment before the wait that retires it").
* `coop.async_commit_group` -> nothing (groups are complete at issue).
* `coop.async_wait_group N` -> OpControlBarrier(Workgroup, Workgroup,
  AcquireRelease|WorkgroupMemory) for any N; `gpu.barrier` -> the same instruction.
* `coop.load` / `coop.store` of a Workgroup buffer -> OpCooperativeMatrixLoadKHR/StoreKHR on
  the Workgroup array (vector buffers: offset and stride in vectors, which the spec allows:
  "Stride is in elements of the pointee type (which can be different than the matrix component
  type)").

Row padding (`convert-coop-to-spirv{workgroup_pad=B}`, bytes, default 16): a buffer whose every
access is a row-structured box with one constant row pitch P (the copies' destination stride and
every load/store stride equal P, and each matrix row stays inside one row of P elements) is laid
out with a physical row pitch of P + B/element-size elements, so that the 8 rows one 16x16
fragment load fetches fall into different shared-memory banks (the sweep's p0 vs p8 variants).
Element e of the buffer lives at `(e div P)*(P+pad) + e mod P`. Buffers that do not qualify keep
pitch P (no padding).

Refused (one-line CoopError): a Workgroup buffer used by anything but these ops; a copy box whose
unrolled per-invocation count exceeds 256 pieces; flavor=nv loads of Workgroup buffers work as
the KHR ones do.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import scf
from xdsl.dialects import gpu as xgpu
from xdsl.dialects.builtin import IntegerAttr, MemRefType, VectorType, i1, i32
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import is_side_effect_free

from coopdialect.errors import CoopError
from coopdialect.index_facts import divides, known_residue, row_fits
from coopdialect.dialects import coop, coop_async
from coopdialect.dialects import spirv as sp
from coopdialect.dialects.spirv_general import ControlBarrierOp
from coopdialect.spirv.grammar_tables import ENUMS

STAGES_ATTR = "coop.pipeline_stages"  # set by pipeline-coop-loads on the loops it pipelined

VEC = VectorType(i32, [4])
"""The 16-byte piece a vector copy moves (glslang's uvec4)."""
MAX_PIECES = 256


# --------------------------------------------------------------------------------------------
# One workgroup buffer
# --------------------------------------------------------------------------------------------


@dataclass
class WorkgroupBuffer:
    sym: str
    pointer_type: sp.PointerType      # the variable: Workgroup pointer to the array
    element_pointer: sp.PointerType   # Workgroup pointer to one array element
    element: Attribute                # the memref's element type
    per_piece: int                    # elements per array element (16 bytes / size, or 1)
    pitch: int | None                 # logical row pitch P of a padded buffer
    pad: int                          # physical padding per row (elements)
    slot: int | None = None           # aliased slots: element e lives at e mod slot
    staged: "_Registers | None" = None  # register staging of the copies into this buffer


@dataclass
class _Registers:
    """Private variables holding a copy between its issue and the wait that lands it: one
    16-byte (or scalar) value and one destination index per piece, and an `issued` flag."""

    values: list[tuple[str, sp.PointerType]]
    indices: list[tuple[str, sp.PointerType]]
    flag: tuple[str, sp.PointerType]
    total: int = 0  # pieces of one copy; an invocation holds piece i only if its number < total


def _uses(op: coop_async.AllocWorkgroupOp) -> list[Operation]:
    users = [u.operation for u in op.result.uses]
    for u in users:
        if not isinstance(u, coop_async.AsyncCopyOp | coop.LoadOp | coop.StoreOp) or (
                isinstance(u, coop_async.AsyncCopyOp) and u.source is op.result):
            raise CoopError(u, "a workgroup buffer lowers to SPIR-V only when coop.async_copy "
                               "(as destination), coop.load and coop.store use it")
    return users


def _span(u: coop.LoadOp | coop.StoreOp) -> int:
    """Elements one row (RowMajor) / column (ColumnMajor) of the matrix covers."""
    m = u.result.type if isinstance(u, coop.LoadOp) else u.object.type
    return m.columns if u.layout.data == coop.Layout.RowMajor else m.rows


def _plan(op: coop_async.AllocWorkgroupOp, pad_bytes: int) -> tuple[int, int | None, int]:
    """(elements per array element, padded pitch P or None, padding in elements)."""
    t = op.result.type
    assert isinstance(t, MemRefType)
    size = coop.bit_width(t.element_type) // 8
    users = _uses(op)
    v = 16 // size if size and 16 % size == 0 else 1
    for u in users:
        if isinstance(u, coop_async.AsyncCopyOp):
            ok = (u.cols.data % v == 0 and all(divides(v, x) for x in (
                u.source_offset, u.source_stride, u.destination_offset, u.destination_stride)))
        else:
            ok = divides(v, u.offset) and divides(v, u.stride) and u.layout.data in (
                coop.Layout.RowMajor, coop.Layout.ColumnMajor)
        if not ok:
            v = 1
            break
    pad = pad_bytes // size if size else 0
    pitch = None
    if pad and pad % v == 0:
        pitches = {coop.constant_int(u.destination_stride if isinstance(u, coop_async.AsyncCopyOp)
                                     else u.stride) for u in users}
        if len(pitches) == 1 and (p := pitches.pop()) is not None and p > 0:
            fits = True
            for u in users:
                off = u.destination_offset if isinstance(u, coop_async.AsyncCopyOp) else u.offset
                span = u.cols.data if isinstance(u, coop_async.AsyncCopyOp) else _span(u)
                if not row_fits(off, p, span) or (isinstance(u, coop.LoadOp | coop.StoreOp)
                                                 and u.layout.data not in (coop.Layout.RowMajor,
                                                                           coop.Layout.ColumnMajor)):
                    fits = False
                    break
            pitch = p if fits else None
    return v, pitch, (pad if pitch is not None else 0)


def lower_alloc(low, op: coop_async.AllocWorkgroupOp) -> None:
    t = op.result.type
    assert isinstance(t, MemRefType)
    per_piece, pitch, pad = _plan(op, low.workgroup_pad)
    n = 1
    for d in t.get_shape():
        n *= d
    plan = low.staging_plan.get(op.result) if low.staging_plan else None
    slot = plan[0] if plan else None
    if slot is not None:  # one physical slot (pipeline-coop-loads' schedule, module docstring)
        n = slot if pitch is None else slot // pitch * (pitch + pad)
    elif pitch is not None:
        n = -(-n // pitch) * (pitch + pad)
    elem = VEC if per_piece > 1 else t.element_type
    count = -(-n // per_piece)
    # no ArrayStride: Workgroup memory has no explicit layout without
    # WorkgroupMemoryExplicitLayoutKHR (VUID-StandaloneSpirv-None-10684)
    ptr = sp.PointerType(sp.ArrayType(count, elem), "Workgroup")
    sym = f"{low.name}_wg{len(low.workgroup)}"
    low.globals.append(sp.GlobalVariableOp(sym, ptr))
    low.interface.append(sym)
    buf = WorkgroupBuffer(sym, ptr, sp.PointerType(elem, "Workgroup"), t.element_type, per_piece,
                          pitch, pad, slot)
    if plan:
        buf.staged = _private_registers(low, sym, elem, plan[1])
        buf.staged.total = plan[0] // per_piece
    low.workgroup[op.result] = buf


def _private(low, sym: str, t: Attribute, init: SSAValue | None = None) -> tuple[str, sp.PointerType]:
    ptr = sp.PointerType(t, "Private")
    low.globals.append(sp.GlobalVariableOp(sym, ptr))
    low.interface.append(sym)
    if init is not None:
        low.emit(sp.StoreOp(low.emit(sp.AddressOfOp(sym, ptr)).pointer, init))
    return sym, ptr


def _private_registers(low, sym: str, elem: Attribute, pieces: int) -> _Registers:
    values = [_private(low, f"{sym}_r{i}", elem) for i in range(pieces)]
    indices = [_private(low, f"{sym}_i{i}", i32) for i in range(pieces)]
    return _Registers(values, indices, _private(low, f"{sym}_issued", i1, low.const(False, i1)))


# --------------------------------------------------------------------------------------------
# Index arithmetic helpers (i32, as `index` is in SPIR-V)
# --------------------------------------------------------------------------------------------


def _mul(low, a: SSAValue, k: int) -> SSAValue:
    return a if k == 1 else low.emit(sp.IMulOp(a, low.const(k, i32), i32)).results[0]


def _add(low, a: SSAValue, b: SSAValue) -> SSAValue:
    return low.emit(sp.IAddOp(a, b, i32)).results[0]


def _div(low, a: SSAValue, k: int) -> SSAValue:
    # the operands are non-negative element offsets, so unsigned division is exact
    return a if k == 1 else low.emit(sp.UDivOp(a, low.const(k, i32), i32)).results[0]


def _pieces(low, op: Operation, v: SSAValue, per_piece: int) -> SSAValue:
    """`v / per_piece` (v provably divisible), folded when `v` is a constant."""
    k = coop.constant_int(v)
    if k is not None:
        return low.const(k // per_piece, i32)
    return _div(low, low.get(op, v), per_piece)


def _physical(low, buf: WorkgroupBuffer, op: Operation, offset: SSAValue) -> SSAValue:
    """The physical element index of logical element `offset` (padding applied)."""
    value = low.get(op, offset)
    if buf.slot is not None:
        value = low.emit(sp.UModOp(value, low.const(buf.slot, i32), i32)).results[0]
    if buf.pitch is None:
        return value
    r = known_residue(offset, buf.pitch)
    if r is not None:  # o = q*P + r with r known: no remainder to compute
        base = low.emit(sp.ISubOp(value, low.const(r, i32), i32)).results[0] if r else value
        phys = _mul(low, _div(low, base, buf.pitch), buf.pitch + buf.pad)
        return _add(low, phys, low.const(r, i32)) if r else phys
    rows = _mul(low, _div(low, value, buf.pitch), buf.pitch + buf.pad)
    rem = low.emit(sp.UModOp(value, low.const(buf.pitch, i32), i32)).results[0]
    return _add(low, rows, rem)


def _element_pointer(low, buf: WorkgroupBuffer, index: SSAValue) -> SSAValue:
    base = low.emit(sp.AddressOfOp(buf.sym, buf.pointer_type)).pointer
    return low.emit(sp.AccessChainOp(base, [index], buf.element_pointer)).result


def matrix_pointer(low, op: coop.LoadOp | coop.StoreOp) -> tuple[SSAValue, SSAValue]:
    """(pointer, stride operand) of a coop.load/store of a Workgroup buffer."""
    buf: WorkgroupBuffer = low.workgroup[op.pointer]
    phys = _physical(low, buf, op, op.offset)
    index = _div(low, phys, buf.per_piece)
    if buf.pitch is not None:
        stride = low.const((buf.pitch + buf.pad) // buf.per_piece, i32)
    else:
        stride = _pieces(low, op, op.stride, buf.per_piece)
    return _element_pointer(low, buf, index), stride


# --------------------------------------------------------------------------------------------
# The copy, commit and wait
# --------------------------------------------------------------------------------------------


def _vector_source(low, op: coop_async.AsyncCopyOp) -> tuple[sp.PointerType, sp.PointerType, str]:
    """A `vector<4xi32>` view of the source storage buffer: a second variable at the same
    descriptor set and binding (aliasing is how Vulkan shaders view one buffer as two types)."""
    key = ("vec", op.source)
    if key not in low.buffer_views:
        sym, _ = low.buffers[op.source]
        var = next(g for g in low.globals if isinstance(g, sp.GlobalVariableOp)
                   and g.sym_name.data == sym)
        struct = sp.StructType([sp.RuntimeArrayType(VEC, 16)], [0], block=True)
        ptr = sp.PointerType(struct, "StorageBuffer")
        vsym = f"{sym}_v16"
        low.globals.append(sp.GlobalVariableOp(vsym, ptr, var.descriptor_set.data,
                                               var.binding.data))
        low.interface.append(vsym)
        low.buffer_views[key] = (ptr, sp.PointerType(VEC, "StorageBuffer"), vsym)
    return low.buffer_views[key]


def lower_async_copy(low, op: coop_async.AsyncCopyOp) -> None:
    if op.source not in low.buffers:
        raise CoopError(op, "the copy's source must be a kernel memref argument")
    buf: WorkgroupBuffer = low.workgroup.get(op.destination)
    if buf is None:
        raise CoopError(op, "the copy's destination must be a coop.alloc_workgroup buffer")
    rows, cols = op.box
    v = buf.per_piece
    per_row = cols // v
    total = rows * per_row
    x, y, z = low.workgroup_size
    invocations = x * y * z
    count = -(-total // invocations)
    if count > MAX_PIECES:
        raise CoopError(op, f"a {rows}x{cols} box is {count} pieces per invocation for "
                            f"{invocations} invocations (at most {MAX_PIECES} are unrolled)")
    if v > 1:
        src_ptr, src_elem_ptr, src_sym = _vector_source(low, op)
    else:
        src_sym, src_ptr = low.buffers[op.source]
        src_elem_ptr = sp.PointerType(buf.element, "StorageBuffer")
    tid = low.builtin("LocalInvocationIndex", 1)
    soff = _pieces(low, op, op.source_offset, v)
    sstride = _pieces(low, op, op.source_stride, v)
    dbase = _physical(low, buf, op, op.destination_offset)
    dstride = (low.const(buf.pitch + buf.pad, i32) if buf.pitch is not None
               else low.get(op, op.destination_stride))
    zero = low.const(0, i32)
    for i in range(count):
        piece = _add(low, tid, low.const(i * invocations, i32)) if i else tid
        guarded = (i + 1) * invocations > total
        if guarded:
            cond = low.emit(sp.ULessThanOp(piece, low.const(total, i32))).results[0]
            then_b, merge = Block(), Block()
            low.add_blocks(then_b, merge)
            low.emit(sp.SelectionMergeOp(merge))
            low.emit(sp.BranchConditionalOp(cond, then_b, merge))
            low.block = then_b
        r = low.emit(sp.UDivOp(piece, low.const(per_row, i32), i32)).results[0]
        c = low.emit(sp.UModOp(piece, low.const(per_row, i32), i32)).results[0]
        s_index = _add(low, _add(low, soff, low.emit(sp.IMulOp(r, sstride, i32)).results[0]), c)
        d_elem = _add(low, dbase, low.emit(sp.IMulOp(r, dstride, i32)).results[0])
        d_index = _add(low, _div(low, d_elem, v), c)
        base = low.emit(sp.AddressOfOp(src_sym, src_ptr)).pointer
        s_ptr = low.emit(sp.AccessChainOp(base, [zero, s_index], src_elem_ptr)).result
        value = low.emit(sp.LoadOp(s_ptr)).result
        if buf.staged is None:
            low.emit(sp.StoreOp(_element_pointer(low, buf, d_index), value))
        else:  # held in registers until the wait that lands it
            for (rsym, rptr), held in ((buf.staged.values[i], value), (buf.staged.indices[i], d_index)):
                low.emit(sp.StoreOp(low.emit(sp.AddressOfOp(rsym, rptr)).pointer, held))
        if guarded:
            low.emit(sp.BranchOp(merge))
            low.block = merge
    if buf.staged is not None:
        fsym, fptr = buf.staged.flag
        low.emit(sp.StoreOp(low.emit(sp.AddressOfOp(fsym, fptr)).pointer, low.const(True, i1)))


def lower_commit(low, op: coop_async.AsyncCommitGroupOp) -> None:
    """Nothing to do: every copy is complete when its invocations pass it."""


def _barrier(low) -> None:
    scope = low.const(ENUMS["Scope"]["Workgroup"][0], i32)
    sem = ENUMS["MemorySemantics"]
    semantics = low.const(sem["AcquireRelease"][0] | sem["WorkgroupMemory"][0], i32)
    low.emit(ControlBarrierOp(scope, scope, semantics))


def lower_barrier(low, op: Operation) -> None:
    _barrier(low)


def lower_wait(low, op: coop_async.AsyncWaitGroupOp) -> None:
    staged = [b for b in low.workgroup.values() if b.staged is not None]
    if not staged:
        _barrier(low)
        return
    # register staging: every invocation is done reading the (single) slot, the issued copies
    # land from registers, and a second barrier publishes them
    _barrier(low)
    for buf in staged:
        fsym, fptr = buf.staged.flag
        issued = low.emit(sp.LoadOp(low.emit(sp.AddressOfOp(fsym, fptr)).pointer)).result
        then_b, merge = Block(), Block()
        low.add_blocks(then_b, merge)
        low.emit(sp.SelectionMergeOp(merge))
        low.emit(sp.BranchConditionalOp(issued, then_b, merge))
        low.block = then_b
        x, y, z = low.workgroup_size
        invocations = x * y * z
        for i, ((vsym, vptr), (isym, iptr)) in enumerate(zip(buf.staged.values, buf.staged.indices)):
            guarded = (i + 1) * invocations > buf.staged.total  # as in lower_async_copy
            if guarded:
                tid = low.builtin("LocalInvocationIndex", 1)
                piece = _add(low, tid, low.const(i * invocations, i32)) if i else tid
                cond = low.emit(sp.ULessThanOp(piece, low.const(buf.staged.total, i32))).results[0]
                g_then, g_merge = Block(), Block()
                low.add_blocks(g_then, g_merge)
                low.emit(sp.SelectionMergeOp(g_merge))
                low.emit(sp.BranchConditionalOp(cond, g_then, g_merge))
                low.block = g_then
            value = low.emit(sp.LoadOp(low.emit(sp.AddressOfOp(vsym, vptr)).pointer)).result
            index = low.emit(sp.LoadOp(low.emit(sp.AddressOfOp(isym, iptr)).pointer)).result
            low.emit(sp.StoreOp(_element_pointer(low, buf, index), value))
            if guarded:
                low.emit(sp.BranchOp(g_merge))
                low.block = g_merge
        low.emit(sp.StoreOp(low.emit(sp.AddressOfOp(fsym, fptr)).pointer, low.const(False, i1)))
        low.emit(sp.BranchOp(merge))
        low.block = merge
    _barrier(low)


def expand_tensor_copies(kernel) -> None:
    """Rewrite each `coop.async_copy_tensor` of `kernel` as what it means on a device without
    asynchronous copies: a Workgroup-scope `coop.load_tensor` of the rows x cols matrix through
    the layout (OpCooperativeMatrixLoadTensorNV: the driver does the tensor addressing and the
    clamping) and a row-major `coop.store` of it into the workgroup buffer, done at the copy's
    issue point like the plain copies above. The matrix is a MatrixA of the element type (any
    use would do: the values only pass through)."""
    from xdsl.dialects import arith
    from xdsl.rewriter import InsertPoint, Rewriter

    from coopdialect.dialects import coop_nv2

    for op in [o for o in kernel.walk() if isinstance(o, coop_async.AsyncCopyTensorOp)]:
        rows, cols = op.box
        elem = op.source.type.element_type
        m = coop.MatrixType(rows, cols, elem, coop.Scope.Workgroup, coop.Use.MatrixA)
        zero = arith.ConstantOp(_zero(elem))
        obj = coop.CompositeConstructOp(zero.result, m)
        load = coop_nv2.LoadTensorOp(op.source, obj.result, op.layout)
        store = coop.StoreOp(load.result, op.destination, op.destination_offset,
                             op.destination_stride, coop.Layout.RowMajor)
        new = [zero, obj, load, store]
        for o in new:
            o.location = op.location
        Rewriter.insert_op(new, InsertPoint.before(op))
        Rewriter.erase_op(op)


def _zero(elem: Attribute):
    from xdsl.dialects.builtin import FloatAttr, IntegerAttr

    return FloatAttr(0.0, elem) if coop.is_float(elem) else IntegerAttr(0, elem)


def register(rules: dict) -> None:
    rules[xgpu.BarrierOp] = lower_barrier
    rules[coop_async.AllocWorkgroupOp] = lower_alloc
    rules[coop_async.AsyncCopyOp] = lower_async_copy
    rules[coop_async.AsyncCommitGroupOp] = lower_commit
    rules[coop_async.AsyncWaitGroupOp] = lower_wait


# --------------------------------------------------------------------------------------------
# Register staging (workgroup_copies=registers, the default): the plan, and the copy hoisting
# --------------------------------------------------------------------------------------------


def _in_order(block: Block):
    """The ops of `block` in program order, scf.if regions inlined (not scf.for bodies)."""
    for op in block.ops:
        yield op
        if isinstance(op, scf.IfOp):
            for region in op.regions:
                for b in region.blocks:
                    yield from _in_order(b)


def _pipelined(loop: scf.ForOp) -> bool:
    attr = loop.attributes.get(STAGES_ATTR)
    body = loop.body.blocks[0]
    return (isinstance(attr, IntegerAttr) and attr.value.data == 2 and body.first_op is not None
            and isinstance(body.first_op, coop_async.AsyncWaitGroupOp))


def staging_plan(kernel, invocations: int, pad_bytes: int) -> dict[SSAValue, tuple[int, int]]:
    """{buffer: (slot elements, pieces per invocation)} of the buffers whose copies are held in
    registers and whose two slots share one physical slot. A buffer qualifies when every wait of
    the kernel is `coop.async_wait_group 0`, all its copies have one box, it has two slots of
    that box, and each of its copies is in the kernel's entry block or in a loop that
    pipeline-coop-loads{stages=2} made (attribute coop.pipeline_stages = 2, body starting with
    the wait), at most one per buffer between two waits in program order. That schedule reads,
    in each iteration, only the slot the wait at its start completed, so the slots can share
    storage once the wait's first barrier has retired the previous iteration's reads."""
    ops = list(kernel.walk())
    if any(isinstance(o, coop_async.AsyncWaitGroupOp) and o.pending.data != 0 for o in ops):
        return {}
    plan = {}
    for alloc in (o for o in ops if isinstance(o, coop_async.AllocWorkgroupOp)):
        copies = [u.operation for u in alloc.result.uses
                  if isinstance(u.operation, coop_async.AsyncCopyOp)]
        if not copies or len({c.box for c in copies}) != 1:
            continue
        rows, cols = copies[0].box
        size = 1
        for d in alloc.result.type.get_shape():
            size *= d
        if size != 2 * rows * cols:
            continue
        ok = True
        for c in copies:
            p = c.parent_op()
            while isinstance(p, scf.IfOp):
                p = p.parent_op()
            if not (p is kernel or (isinstance(p, scf.ForOp) and _pipelined(p))):
                ok = False
        blocks = {c.parent_block() for c in copies}
        for c in copies:  # the enclosing block of each copy, through scf.if, is checked
            b = c.parent_block()
            while isinstance(b.parent_op(), scf.IfOp):
                b = b.parent_op().parent_block()
            blocks.add(b)
        for b in blocks:
            pending = 0
            for o in _in_order(b):
                if isinstance(o, coop_async.AsyncWaitGroupOp):
                    pending = 0
                elif o in copies:
                    pending += 1
                    ok = ok and pending <= 1
        if not ok:
            continue
        per_piece, _, _ = _plan(alloc, pad_bytes)
        pieces = -(-(rows * cols // per_piece) // invocations)
        plan[alloc.result] = (rows * cols, pieces)
    return plan


def _slice(op: Operation, body: Block, after: Operation) -> list[Operation] | None:
    """The ops of `body` after `after` that `op` (and its regions) depend on, in order; None
    when one of them has effects."""
    needed: set[Operation] = set()
    work = [op]
    while work:
        o = work.pop()
        for inner in o.walk():
            for v in inner.operands:
                d = v.owner
                if isinstance(d, Operation) and d.parent_block() is body and d not in needed \
                        and d is not op:
                    needed.add(d)
                    work.append(d)
    order = [o for o in body.ops if o in needed]
    # arith's divisions are not "side-effect free" to xDSL (division by zero); the copies'
    # index arithmetic divides by constants, and moving it within the body changes nothing
    if any(not (is_side_effect_free(o) or o.name.startswith("arith.")) or o.regions for o in order):
        return None
    index = {o: i for i, o in enumerate(body.ops)}
    if any(index[o] < index[after] for o in order):
        order = [o for o in order if index[o] > index[after]]
    return order


def hoist_copies(kernel) -> None:
    """In each stages=2 pipelined loop, issue the next iteration's copies right after the wait,
    before the compute: with register staging their global loads then overlap the compute (the
    sweep's `regs1`), and the staged semantics allow it (the copies land in the other slot, at
    the next wait)."""
    for loop in [o for o in kernel.walk() if isinstance(o, scf.ForOp) and _pipelined(o)]:
        body = loop.body.blocks[0]
        wait = body.first_op
        for guard in [o for o in body.ops if isinstance(o, scf.IfOp)
                      and any(isinstance(i, coop_async.AsyncCopyOp) for i in o.walk())]:
            deps = _slice(guard, body, wait)
            if deps is None:
                continue
            anchor = wait
            for o in (*deps, guard):
                o.detach()
                body.insert_op_after(o, anchor)
                anchor = o
