"""The producer warpgroup of a staged kernel (`pipelined.py`): each group of copies becomes
`mbarrier.arrive.expect_tx` on full[g mod S] plus one `cp.async.bulk.tensor.2d` per copy (half
of the box into both CTAs of a cluster pair when multicast), after waiting on empty[g mod S]
before a slot is refilled."""

from __future__ import annotations



from coopdialect.dialects import ptx
from coopdialect.dialects.coop_async import AsyncCopyOp, AsyncWaitGroupOp
from coopdialect.ptx.kernel_lowering import width
from coopdialect.ptx.pipelined_plan import constant_of
from coopdialect.ptx.pipelined_roles import PRODUCER_RULES, RoleLowering, ring_offset, skip


def _p_copy(lw: RoleLowering, op: AsyncCopyOp) -> None:
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
    src = lw.vmap[op.source]
    dst = lw.vmap[op.destination]
    stride = constant_of(op.source_stride) * plan.packed.get(plan.args.index(op.source), 1)
    off = lw.scalar(op.source_offset)
    if off.const is not None:
        row, col = (lw.imm("b32", str(int(off.const) // stride)),
                    lw.imm("b32", str(int(off.const) % stride)))
    else:
        r, c = lw.udiv_const(off.reg, stride, 64), lw.udiv_const(off.reg, stride, 64, rem=True)
        row, col = (lw.inst(ptx.CvtOp, ".u32.u64", [r], "b32"), lw.inst(ptx.CvtOp, ".u32.u64", [c], "b32"))
    es = width(op.destination.type.element_type) // 8
    doff = lw.scalar(op.destination_offset)
    dbytes = lw.index_op("mul", doff, lw.idx_const(es))
    daddr = lw.inst(ptx.AddOp, ".u32", [dst.base, ring_offset(lw, op.destination, lw.b32(dbytes))], "b32")
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


PRODUCER_RULES[AsyncCopyOp] = _p_copy
PRODUCER_RULES[AsyncWaitGroupOp] = skip
