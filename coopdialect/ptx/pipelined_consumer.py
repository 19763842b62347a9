"""The consumer warpgroups of a staged kernel (`pipelined.py`), dense products: waits on
full[g mod S], A/B loads from workgroup buffers as swizzled K-major tiles, the wgmma descriptors
of those tiles, `coop.mul_add` as one `wgmma.mma_async` per 32 bytes of K (k16 f16/bf16 into
f32, k32 s8/u8 into s32), 64-row block and N chunk (wgmma.n_chunks), Workgroup-scope
accumulators loaded, stored and constructed in the wgmma D layout, and the release of stages
(`commit_and_release`: one arrival per warp on empty[g mod S], on both CTAs of a pair)."""

from __future__ import annotations


from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IndexType, IntegerType
from xdsl.ir import SSAValue

from coopdialect.dialects import coop, ptx
from coopdialect.dialects.coop import Layout, MatrixOperand, Scope, Use
from coopdialect.dialects.coop_async import AsyncCopyOp, AsyncCopyTensorOp, AsyncWaitGroupOp, is_workgroup
from coopdialect.ptx.kernel_lowering import RULES, Buf, Frag, Scalar, Skipped, float_literal, op_error, width
from coopdialect.ptx.pipelined_plan import constant_of, reads_workgroup_after, use_kind
from coopdialect.ptx.wgmma import SLICE_BYTES, n_chunks
from coopdialect.ptx.pipelined_roles import (CONSUMER_RULES, acc_geometry, MetaTile, RoleLowering, SwizzledTile, ring_offset,
                                             skip)


_DESC_MODE = {128: 1, 64: 2, 32: 3}  # descriptor bits 62-63


def _c_wait(lw: RoleLowering, op: AsyncWaitGroupOp) -> None:
    base, per = lw.plan.group_of[op]
    if not per and (base < 0 or not reads_workgroup_after(op)):
        return
    g = lw.group_index(op)
    lw.spin_wait(lw.barrier("full", g), lw.parity(g))
    lw.wait_group, lw.wait_local = g, lw.group_index(op, local=True) if lw.goff is not None else g
    lw.released = False


def _c_load(lw: RoleLowering, op: coop.LoadOp) -> None:
    if not is_workgroup(op.pointer.type):
        t = op.result.type
        if t.scope_value == Scope.Workgroup:
            return _acc_load(lw, op)
        return RULES[coop.LoadOp](lw, op)
    t = op.result.type
    buf = lw.vmap[op.pointer]
    es = width(t.element_type) // 8
    off = lw.index_op("mul", lw.scalar(op.offset), lw.idx_const(es))
    addr = lw.inst(ptx.AddOp, ".u32", [buf.base, ring_offset(lw, op.pointer, lw.b32(off))], "b32")
    row_bytes = constant_of(op.stride) * es
    if t.use_value == Use.MatrixA:  # this consumer's rows start 64 * blocks * row_bytes further
        shift = lw.imm("b32", str((64 * lw.plan.blocks * row_bytes).bit_length() - 1))
        first = lw.inst(ptx.ShlOp, ".b32", [lw.sh["consumer"], shift], "b32")
        addr = lw.inst(ptx.AddOp, ".u32", [addr, first], "b32")
    if {use_kind(u) for u in op.result.uses} == {"meta"}:
        lw.vmap[op.result] = MetaTile(t, addr, row_bytes)
    else:
        lw.vmap[op.result] = SwizzledTile(t, addr, row_bytes)


def _acc_base(lw: RoleLowering, buf: Buf, op, layout: Layout, es: int) -> tuple[SSAValue, Scalar]:
    """Address of this thread's element (row0, col0) of a Workgroup accumulator access."""
    if layout != Layout.RowMajor:
        raise op_error(op, "a Workgroup-scope accumulator in a staged kernel is loaded and stored "
                           "RowMajor")
    stride = lw.scalar(op.stride)
    row = Scalar(IndexType(), reg=lw.sh["acc_row"])
    col = Scalar(IndexType(), reg=lw.sh["acc_col"])
    idx = lw.index_op("add", lw.scalar(op.offset), lw.index_op("add", lw.index_op("mul", row, stride), col))
    addr = lw.index_op("add", Scalar(IndexType(), reg=buf.base), lw.index_op("mul", idx, lw.idx_const(es)))
    return lw.reg(addr), stride


def _acc_load(lw: RoleLowering, op: coop.LoadOp) -> None:
    t = op.result.type
    buf = lw.vmap[op.pointer]
    es = width(t.element_type) // 8
    base, stride = _acc_base(lw, buf, op, op.layout.data, es)
    if stride.const is None:
        raise op_error(op, "needs a constant stride in a staged kernel")
    regs = []
    for r, c in acc_geometry(lw, t, op):
        kind = "f32" if isinstance(t.element_type, Float32Type) else "b16" if es == 2 else "b32"
        suffix = "f32" if kind == "f32" else f"b{es * 8}"
        regs.append(lw.emit(ptx.LdOp(f".{buf.space}.{suffix}", base, (r * int(stride.const) + c) * es,
                                     [ptx.reg_type(kind)])).outs[0])
    lw.vmap[op.result] = Frag(t, regs)


def _c_store(lw: RoleLowering, op: coop.StoreOp) -> None:
    t = op.object.type
    if t.scope_value != Scope.Workgroup:
        return RULES[coop.StoreOp](lw, op)
    if lw.wgmma_in_flight:
        lw.emit(ptx.WgmmaWaitGroupOp(0))
        lw.wgmma_in_flight = False
    buf = lw.vmap[op.pointer]
    frag = lw.vmap[op.object]
    es = width(t.element_type) // 8
    base, stride = _acc_base(lw, buf, op, op.layout.data, es)
    if stride.const is None:
        raise op_error(op, "needs a constant stride in a staged kernel")
    geo = acc_geometry(lw, t, op)
    regs = list(frag.regs)
    for i in range(0, len(regs), 2):  # registers 2j, 2j+1 hold adjacent columns
        r, c = geo[i]
        off = (r * int(stride.const) + c) * es
        if es == 2:
            pair = lw.emit(ptx.PackOp(".b32", [regs[i], regs[i + 1]], ptx.B32)).out
            lw.emit(ptx.StOp(f".{buf.space}.b32", base, off, [pair]))
        else:
            lw.emit(ptx.StOp(f".{buf.space}.v2.{'f32' if isinstance(t.element_type, Float32Type) else 'b32'}",
                             base, off, [regs[i], regs[i + 1]]))


def _c_construct(lw: RoleLowering, op: coop.CompositeConstructOp) -> None:
    t = op.result.type
    if t.scope_value != Scope.Workgroup:
        return RULES[coop.CompositeConstructOp](lw, op)
    if not op.result.uses:  # e.g. the Object of a tensor load that was staged
        lw.vmap[op.result] = Skipped(t)
        return
    s = lw.scalar(op.constituent)
    et = t.element_type
    bits = width(et)
    if s.const is None or t.use_value != Use.MatrixAcc or bits not in (16, 32) or \
            not isinstance(et, Float16Type | BFloat16Type | Float32Type | IntegerType):
        raise op_error(op, "a Workgroup-scope matrix in a staged kernel is an accumulator "
                           "constructed from a 16- or 32-bit constant")
    acc_geometry(lw, t, op)
    if isinstance(et, IntegerType):
        mods, lit = f".b{bits}", str(int(s.const) & ((1 << bits) - 1))
    else:
        mods, lit = (".f32" if bits == 32 else ".b16"), float_literal(et, float(s.const))
    ty = ptx.F32 if mods == ".f32" else ptx.reg_type(f"b{bits}")
    # Distinct registers: wgmma reads and writes each accumulator register in place.
    lw.vmap[op.result] = Frag(t, [lw.emit(ptx.MovImmOp(mods, lit, ty)).out
                                  for _ in range(lw.plan.blocks * t.columns // 2)])


def split_blocks(regs, n: int) -> list[list]:
    """The accumulator registers of each of the consumer's `n` 64-row blocks."""
    per = len(regs) // n
    return [list(regs[j * per:(j + 1) * per]) for j in range(n)]


def tile_descriptor(lw: RoleLowering, tile: SwizzledTile, k_bytes: int) -> SSAValue:
    """wgmma descriptor of a swizzled K-major tile (ptx-wgmma-sparse.md section 5): start
    addr>>4 advanced by `k_bytes` (along K, or whole 8-row groups down the rows), LBO 1 (unused
    by swizzled K-major), SBO = 8 rows, the swizzle mode of the row width."""
    lo = lw.inst(ptx.ShrOp, ".u32", [tile.addr, lw.imm("b32", "4")], "b32")
    lo = lw.inst(ptx.OrOp, ".b32", [lo, lw.imm("b32", str(1 << 16))], "b32")
    if k_bytes:
        lo = lw.inst(ptx.AddOp, ".u32", [lo, lw.imm("b32", str(k_bytes >> 4))], "b32")
    hi = lw.imm("b32", str((_DESC_MODE[tile.row_bytes] << 30) | ((8 * tile.row_bytes) >> 4)))
    return lw.emit(ptx.PackOp(".b64", [lo, hi], ptx.B64)).out


def _c_mul_add(lw: RoleLowering, op: coop.MulAddOp) -> None:
    a, b, c = (lw.vmap[v] for v in (op.a, op.b, op.c))
    if not isinstance(a, SwizzledTile) or not isinstance(b, SwizzledTile):
        raise op_error(op, "in a staged kernel A and B must come from workgroup buffers")
    ta, tb, tc = op.a.type, op.b.type, op.c.type
    ea, eb = ta.element_type, tb.element_type
    integer = isinstance(ea, IntegerType) and isinstance(eb, IntegerType) and \
        width(ea) == width(eb) == 8
    if integer:
        if MatrixOperand.SaturatingAccumulation in op.operand_flags:
            raise op_error(op, "SaturatingAccumulation in a staged kernel: the addition of C "
                               "saturates once per product, which the pipelined chain (products "
                               "in flight across K steps) has no place for; lower it op by op")
        if not (isinstance(tc.element_type, IntegerType) and width(tc.element_type) == 32):
            raise op_error(op, "the wgmma pipeline accumulates 8-bit products in 32-bit integers")
        at, bt = ("s8" if op.is_signed("A") else "u8"), ("s8" if op.is_signed("B") else "u8")
        dt, k_inst, imms = "s32", 32, "1"
    else:
        et = {Float16Type: "f16", BFloat16Type: "bf16"}.get(type(ea))
        if et is None or type(eb) is not type(ea):
            raise op_error(op, "the wgmma pipeline multiplies f16, bf16 or 8-bit integer A and B")
        if not isinstance(tc.element_type, Float32Type) or op.operand_flags:
            raise op_error(op, "the wgmma pipeline accumulates f16/bf16 products in f32 without "
                               "operand flags")
        at = bt = et
        dt, k_inst, imms = "f32", 16, "1, 1, 1, 0, 0"
    n, k = tb.columns, ta.columns
    if ta.rows != tc.rows or n != tc.columns or k % k_inst or n % 8:
        raise op_error(op, f"{ta.rows}x{k} * {tb.rows}x{n}: N must be a multiple of 8 and K of "
                           f"{k_inst}")
    chunks = n_chunks(n, integer)
    nb = lw.plan.blocks
    shapes = ", ".join(dict.fromkeys(f"m64n{w}k{k_inst}.{dt}.{at}.{bt}" for _, w in chunks))
    lw.comment(f"{op.name} {ta.rows}x{n}x{k} -> {nb * len(chunks) * k // k_inst} x "
               f"wgmma.mma_async ({shapes})")
    blocks = split_blocks(c.regs, nb)
    lw.emit(ptx.WgmmaFenceOp())
    for kk in range(k // k_inst):
        step = kk * SLICE_BYTES  # 32 bytes of K per instruction, for 16- and 8-bit operands
        for j in range(nb):
            da = tile_descriptor(lw, a, step + 64 * j * a.row_bytes)
            for n0, w in chunks:  # N chunk n0 starts n0 rows of the K-major B tile further
                mma = lw.emit(ptx.WgmmaMmaAsyncOp(f".m64n{w}k{k_inst}.{dt}.{at}.{bt}", da,
                                                  tile_descriptor(lw, b, step + n0 * b.row_bytes),
                                                  blocks[j][n0 // 2:(n0 + w) // 2], imms))
                blocks[j][n0 // 2:(n0 + w) // 2] = list(mma.outs)
    regs = [r for blk in blocks for r in blk]
    commit_and_release(lw, 1)
    lw.vmap[op.result] = Frag(op.result.type, regs)


def commit_and_release(lw: RoleLowering, in_flight: int, groups: int = 1) -> None:
    """Close the batch and wait until at most `in_flight` batches run. The batch issued
    `in_flight` batches earlier is then complete: release the stages of the `groups` groups it
    read, the ones ending `in_flight * groups` before g (the group of the last wait). A dense
    product keeps one batch in flight (stage g - 1 freed); a 2:4 product one (stage g - 1 freed,
    `pipelined_loop._unrolled_for`) or none (stage g, or g - 1 and g for a batch of two K steps)."""
    lw.emit(ptx.WgmmaCommitGroupOp())
    lw.emit(ptx.WgmmaWaitGroupOp(in_flight))
    lw.wgmma_in_flight = True
    lw.unreleased = (in_flight, groups)
    if lw.released or lw.wait_group is None:
        return
    back = in_flight * groups
    # the first batches of a tile have no batch of that tile so far back
    some = (lw.inst(ptx.SetpOp, ".ge.u32", [lw.wait_local, lw.imm("b32", str(back))], "pred")
            if back else None)
    release(lw, lw.wait_group, range(back + groups - 1, back - 1, -1), some)
    lw.released = True


def release(lw: RoleLowering, g: SSAValue, back, when: SSAValue | None = None) -> None:
    """Free the stages of groups g - d for each d of `back` (oldest first): one arrival per
    warp, by its lane 0 (and only `when` that predicate holds)."""
    pred = lw.inst(ptx.SetpOp, ".eq.u32", [lw.sh["lane"], lw.imm("b32", "0")], "pred")
    if when is not None:
        pred = lw.inst(ptx.AndOp, ".pred", [when, pred], "pred")
    join = lw.when(pred)
    for d in back:
        _arrive_empty(lw, lw.inst(ptx.SubOp, ".u32", [g, lw.imm("b32", str(d))], "b32") if d else g)
    lw.join(join)


def _arrive_empty(lw: RoleLowering, g: SSAValue) -> None:
    """This warp's arrival on empty[g mod S] (and on the peer CTA's, in a cluster pair)."""
    local = lw.barrier("empty", g)
    lw.emit(ptx.MbarrierArriveOp(local))
    if lw.plan.cluster_m > 1:  # the peer's producer multicasts into this CTA's slot too
        remote = lw.emit(ptx.MapaOp(local, lw.sh["peer"])).out
        lw.emit(ptx.MbarrierArriveOp(remote, remote=True))


CONSUMER_RULES.update({
    AsyncCopyOp: skip, AsyncCopyTensorOp: skip, AsyncWaitGroupOp: _c_wait, coop.LoadOp: _c_load, coop.StoreOp: _c_store,
    coop.MulAddOp: _c_mul_add, coop.CompositeConstructOp: _c_construct,
})
