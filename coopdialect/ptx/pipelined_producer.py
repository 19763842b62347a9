"""The producer warpgroup of a staged kernel (`pipelined.py`): each group of copies becomes
`mbarrier.arrive.expect_tx` on full[g mod S] plus one `cp.async.bulk.tensor.2d` per copy (half
of the box into both CTAs of a cluster pair when multicast; a tensor copy's box at its layout's
offsets), after waiting on empty[g mod S] before a slot is refilled."""

from __future__ import annotations



from coopdialect.dialects import ptx
from xdsl.ir import SSAValue

from coopdialect.dialects.coop_async import AsyncCopyOp, AsyncCopyTensorOp, AsyncWaitGroupOp
from coopdialect.ptx.affine import Arith
from coopdialect.ptx.kernel_lowering import width
from coopdialect.ptx.pipelined_plan import constant_of
from coopdialect.ptx.pipelined_roles import PRODUCER_RULES, RoleLowering, ring_offset, skip


def _group_start(lw: RoleLowering, op: AsyncCopyOp | AsyncCopyTensorOp) -> SSAValue:
    """The copy's group number; the first copy of a group also waits for its slot's release
    and arms full[g mod S] with the group's bytes."""
    plan = lw.plan
    g = lw.group_index(op)
    if op in plan.group_bytes:
        base, per = plan.group_of[op]
        # Refill of a slot: wait until the consumers released the use S groups earlier (in a
        # persistent CTA the prologue's groups too refill the slots of the tile before).
        if per or base >= plan.stages or lw.goff is not None:
            S = plan.stages
            need = lw.inst(ptx.SetpOp, ".ge.u32", [g, lw.imm("b32", str(S))], "pred")
            join = lw.when(need)
            lw.spin_wait(lw.barrier("empty", g), lw.parity(g, minus_one=True))
            lw.join(join)
        lw.emit(ptx.MbarrierArriveOp(lw.barrier("full", g), plan.group_bytes[op]))
    return g


def _destination(lw: RoleLowering, op: AsyncCopyOp | AsyncCopyTensorOp) -> SSAValue:
    """The .b32 shared address of the copy's destination box (in the slot's ring)."""
    es = width(op.destination.type.element_type) // 8
    dst = lw.vmap[op.destination]
    dbytes = lw.index_op("mul", lw.scalar(op.destination_offset), lw.idx_const(es))
    return lw.inst(ptx.AddOp, ".u32", [dst.base, ring_offset(lw, op.destination, lw.b32(dbytes))],
                   "b32")


def _p_copy(lw: RoleLowering, op: AsyncCopyOp) -> None:
    plan = lw.plan
    g = _group_start(lw, op)
    src = lw.vmap[op.source]
    stride = constant_of(op.source_stride) * plan.packed.get(plan.args.index(op.source), 1)
    off = lw.scalar(op.source_offset)
    if off.const is not None:
        row, col = (lw.imm("b32", str(int(off.const) // stride)),
                    lw.imm("b32", str(int(off.const) % stride)))
    else:
        r, c = lw.udiv_const(off.reg, stride, 64), lw.udiv_const(off.reg, stride, 64, rem=True)
        row, col = (lw.inst(ptx.CvtOp, ".u32.u64", [r], "b32"), lw.inst(ptx.CvtOp, ".u32.u64", [c], "b32"))
    es = width(op.destination.type.element_type) // 8
    daddr = _destination(lw, op)
    mask = None
    if plan.args.index(op.source) in plan.multicast:
        # this CTA's half of the box, written into both CTAs of the pair
        half = op.rows.data // plan.cluster_m
        rank = lw.sh["rank"]
        row = lw.inst(ptx.MadOp, ".lo.u32", [rank, lw.imm("b32", str(half)), row], "b32")
        skip = lw.inst(ptx.MulOp, ".lo.u32", [rank, lw.imm("b32", str(half * op.cols.data * es))], "b32")
        daddr = lw.inst(ptx.AddOp, ".u32", [daddr, skip], "b32")
        mask = lw.imm("b16", str((1 << plan.cluster_m) - 1))
    lw.emit(ptx.CpAsyncBulkTensorOp(daddr, src.base, [col, row], lw.barrier("full", g), mask))


def _p_copy_tensor(lw: RoleLowering, op: AsyncCopyTensorOp) -> None:
    """A tensor copy is one bulk tensor copy of the layout's span (the box) at the layout's
    offsets (signed: a box that starts above or left of the tensor is in bounds where it
    overlaps it); the tensor map (pipelined_launch) holds the layout's dimensions and strides,
    and the hardware zero-fills what lies outside them (tensor_copy_fields says when that is the
    layout's clamp rule)."""
    g = _group_start(lw, op)
    layout = lw.vmap[op.layout]
    ar = Arith(lw)
    row, col = (ar.low32(x) for x in layout.offset)
    lw.emit(ptx.CpAsyncBulkTensorOp(_destination(lw, op), lw.vmap[op.source].base, [col, row],
                                    lw.barrier("full", g), None))


PRODUCER_RULES[AsyncCopyOp] = _p_copy
PRODUCER_RULES[AsyncCopyTensorOp] = _p_copy_tensor
PRODUCER_RULES[AsyncWaitGroupOp] = skip
