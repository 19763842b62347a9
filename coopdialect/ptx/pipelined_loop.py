"""The staged `scf.for` in both roles of a staged kernel (`pipelined.py`): lowered as it is, or by
the consumers `lw.unroll` iterations per trip (`_unrolled_for`, the 2:4 schedule of
`sparse_schedule`); at its end the consumers wait for their last wgmma batch, release the
stages it held and retire its sp-meta words."""

from __future__ import annotations


from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType

from coopdialect.dialects import ptx
from coopdialect.dialects import sparse_mma as sm
from coopdialect.ptx.kernel_lowering import RULES, LoopFrame, Scalar
from coopdialect.ptx.pipelined_consumer import release
from coopdialect.ptx.pipelined_roles import CONSUMER_RULES, PRODUCER_RULES, RoleLowering
from coopdialect.ptx.pipelined_sparse import retire_meta
from coopdialect.ptx.scalar_rules import open_loop


def _staged_for(lw: RoleLowering, op: scf.ForOp) -> None:
    if op is lw.plan.loop and lw.unroll > 1:
        _unrolled_for(lw, op)
    else:
        RULES[scf.ForOp](lw, op)
    if op is lw.plan.loop and lw.role == "consumer" and lw.wgmma_in_flight:
        lw.emit(ptx.WgmmaWaitGroupOp(0))
        lw.wgmma_in_flight = False
        in_flight, groups = lw.unreleased
        if lw.goff is not None and in_flight:
            # the batches still in flight at the loop's end read the tile's last groups; a
            # persistent CTA's producer refills their stages for the next tile
            if lw.plan.tile_groups is not None:
                trips = None
                last = lw.inst(ptx.AddOp, ".u32",
                               [lw.goff, lw.imm("b32", str(lw.plan.tile_groups - 1))], "b32")
            else:
                trips = lw.tile_trips()
                last = lw.inst(ptx.SubOp, ".u32", [lw.inst(ptx.AddOp, ".u32", [lw.goff, trips],
                                                           "b32"), lw.imm("b32", "1")], "b32")
            if trips is not None:  # a tile of no K steps has nothing to release
                ran = lw.inst(ptx.SetpOp, ".ne.u32", [trips, lw.imm("b32", "0")], "pred")
                join = lw.when(ran)
                release(lw, last, range(in_flight * groups - 1, -1, -1))
                lw.join(join)
            else:
                release(lw, last, range(in_flight * groups - 1, -1, -1))
        if lw.in_flight:  # the last batch's words live to here
            retire_meta(lw)


def _unrolled_for(lw: RoleLowering, op: scf.ForOp) -> None:
    """The consumers' staged loop, `lw.unroll` iterations per trip (`sparse_schedule`).

    Iterations that do not end a batch only load their sp-meta words and compute their
    descriptors (`Deferred`); the batch's last issues the wgmma.mma_async.sp of all its K steps,
    so the tensor cores drain once per batch instead of every step. Measured on the H200
    (consumers alone, no copies): 1091 TFLOP/s with two wgmma.mma_async.sp per batch, 1328
    with four.

    With one batch in flight (`lw.in_flight`) a trip runs two batches, each closed by
    `wgmma.wait_group 1`, which retires the other. The hardware reads a batch's sp-meta
    registers while it runs and ptxas (13.0) does not know it, so nothing may be written into
    them until the wait that retires it: each batch's words are stored to a scratch word of
    shared memory after that wait (`retire_meta`), and the words of the trip's second batch,
    which run on across the back edge, are written with `ptx.prmt_into` into the registers the
    loop carries (a block-argument copy would give ptxas a register to reuse)."""
    step = lw.scalar(op.step)
    extra = []
    if lw.in_flight:
        sp = next(o for o in op.body.block.ops if isinstance(o, sm.MmaSpOp))
        words = lw.batch * sp.dims()[2] * lw.plan.blocks
        extra = [lw.imm("b32", "0")] * words
    header, iv, carried, exit_ = open_loop(lw, op, extra)
    if lw.in_flight:
        lw.tied = list(header.args[-len(extra):])
        lw.live_meta = list(lw.tied)
    block = op.body.block
    # the back edge passes the words of the batch still in flight (the trip's last)
    lw.loop_stack.append(LoopFrame(header, iv, lw.idx_const(lw.unroll * int(step.const)),
                                   lambda: list(lw.live_meta)))
    values, here = carried, Scalar(IndexType(), reg=iv)
    for part in range(lw.unroll):
        lw.part = part
        lw.vmap[block.args[0]] = here
        for arg, v in zip(block.args[1:], values):
            lw.vmap[arg] = v
        for o in block.ops:
            if isinstance(o, scf.YieldOp) and part < lw.unroll - 1:
                values = [lw.vmap[v] for v in o.arguments]
            else:
                lw.lower_op(o)
        if part < lw.unroll - 1:
            here = lw.index_op("add", here, step)
    lw.part = 0
    lw.loop_stack.pop()
    lw.blocks.append(exit_)
    lw.cur = exit_
    if lw.in_flight:  # what the last trip left in the carried registers
        lw.live_meta = list(header.args[-len(extra):])
    for res, v in zip(op.results, carried):
        lw.vmap[res] = v


PRODUCER_RULES[scf.ForOp] = _staged_for
CONSUMER_RULES[scf.ForOp] = _staged_for
