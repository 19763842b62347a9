"""The warp roles of a staged kernel (`pipelined.py`): `RoleLowering`, the KernelLowering of the
producer or of a consumer warpgroup, its values (a swizzled wgmma operand tile, a metadata tile)
and its rule tables: `PRODUCER_RULES` / `CONSUMER_RULES`, filled by the role modules
(`pipelined_producer.py`, `pipelined_consumer.py`, `pipelined_sparse.py`, `pipelined_loop.py`,
`pipelined_tiles.py`, `pipelined.py`), before the common `RULES`; the producer drops every matrix
op. Also the rules both roles share: workgroup buffers at their plan offsets (rotated per tile in
a persistent CTA)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, SSAValue

from coopdialect.dialects import coop, ptx
from coopdialect.dialects.coop_async import (
    AllocWorkgroupOp,
    AsyncCommitGroupOp,
    AsyncCopyOp,
    AsyncCopyTensorOp,
    AsyncWaitGroupOp,
)
from coopdialect.ptx.kernel_lowering import RULES, Buf, KernelLowering, Scalar, Skipped, op_error
from coopdialect.ptx.pipelined_plan import Plan, buffer_bytes


@dataclass
class SwizzledTile:
    """A K-major wgmma operand in shared memory, TMA-written with rows of `row_bytes` (32, 64 or
    128) in the swizzle mode of that width."""

    ty: coop.MatrixType
    addr: SSAValue  # .b32 shared-window address of the tile's first row
    row_bytes: int


@dataclass
class MetaTile:
    """Sparsity metadata in shared memory: one byte per chunk, rows of `row_bytes`, no swizzle."""

    ty: coop.MatrixType
    addr: SSAValue
    row_bytes: int


class RoleLowering(KernelLowering):
    """KernelLowering of one warp role (`producer` or `consumer`) of a staged kernel."""

    def __init__(self, fn: func.FuncOp, target: str, role: str, plan: Plan, shared: dict,
                 blocks: list[Block], prologue: list[Operation]):
        super().__init__(fn, target)
        self.role = role
        self.plan = plan
        self.sh = shared  # registers set up by the kernel entry: smem base, barriers, ids
        self.blocks = blocks
        self.prologue = prologue
        self.consts = shared["consts"]
        self.cache = shared["cache"]
        self.workgroup_size = None
        self.wait_group: SSAValue | int | None = None  # group of the last consumer wait
        self.released = True
        self.wgmma_in_flight = False
        self.trip: SSAValue | None = None
        self.trip_key: tuple | None = None
        # the consumers' 2:4 schedule (sparse_schedule): iterations per batch, batches left
        # in flight, iterations per trip of the staged loop, and which one is being lowered
        self.batch, self.in_flight, self.unroll, self.part = 1, 0, 1, 0
        self.live_meta: list[SSAValue] = []  # sp-meta words of the batch in flight
        self.tied: list[SSAValue] = []  # the registers the trip's last batch's words go into
        self.wait_local: SSAValue | int | None = None  # that group within the tile
        self.goff: SSAValue | None = None  # persistent: t * G, the groups of earlier tiles
        self.rotation: SSAValue | None = None  # persistent: (t * G) mod S
        self.ring: dict[SSAValue, tuple[SSAValue, int]] = {}  # buffer -> (rotation bytes, bytes)
        self.unreleased = (0, 1)  # (batches in flight, groups a batch) after the last commit
        self.block_ids: dict[str, SSAValue] | None = None  # remapped workgroup ids (x, y)

    def lower_ops(self, block: Block) -> None:
        for op in block.ops:
            self.lower_op(op)

    def workgroup_acc_positions(self, op: Operation, t) -> list:
        """A consumer's accumulator elements: row acc_row + r, column acc_col + c for the
        (r, c) of `acc_geometry`, so the Workgroup-scope rules of coopmat2 (load_tensor,
        store_tensor, per_element_op) address the tile this consumer holds."""
        from coopdialect.ptx import affine as af

        if self.role != "consumer":
            raise op_error(op, "a Workgroup-scope matrix op in the producer's copy slice")
        rows = 64 * self.plan.blocks * self.plan.consumers
        row = af.atom(self.sh["acc_row"], 0, rows - 1)
        col = af.atom(self.sh["acc_col"], 0, 6)
        return [(af.add(row, af.const(r)), af.add(col, af.const(c)))
                for r, c in acc_geometry(self, t, op)]

    # -- helpers ----------------------------------------------------------------------------

    def b32(self, v: Scalar) -> SSAValue:
        """A .b32 register of an index scalar (the low half; addresses and coords fit)."""
        if v.const is not None:
            return self.imm("b32", str(int(v.const)))
        return self.inst(ptx.CvtOp, ".u32.u64", [v.reg], "b32")

    def group_index(self, op: Operation, local: bool = False) -> SSAValue:
        """The runtime (.b32) group number of an async copy/wait: P + i*c, plus t * G in the
        t-th tile of a persistent CTA unless `local`."""
        base, per = self.plan.group_of[op]
        if not per:
            g = self.imm("b32", str(base))
        else:
            i = self.trip_index()
            g = self.inst(ptx.AddOp, ".u32", [i, self.imm("b32", str(base))], "b32") if base else i
        if self.goff is not None and not local:
            g = self.inst(ptx.AddOp, ".u32", [self.goff, g], "b32")
        return g

    def trip_index(self) -> SSAValue:
        """(iv - lb) / step of the staged loop, as .b32, computed once per iteration (once per
        iteration of a trip of `pipelined_loop._unrolled_for`: the induction variable of each)."""
        loop = self.plan.loop
        iv = self.scalar(loop.body.block.args[0])
        if self.trip_key != (self.cur, iv.reg):
            lb, step = self.scalar(loop.lb), self.scalar(loop.step)
            d = self.index_op("sub", iv, lb)
            self.trip = self.b32(d)
            if step.const is not None and step.const > 0:
                self.trip = self.udiv_const(self.trip, int(step.const), 32)
            else:
                d = Scalar(IndexType(), reg=self.inst(ptx.DivOp, ".u64", [self.reg(d), self.reg(step)], "b64"))
                self.trip = self.b32(d)
            self.trip_key = (self.cur, iv.reg)
        return self.trip

    def tile_trips(self) -> SSAValue:
        """The staged loop's trip count as .b32: the groups a tile fills (`plan.tile_groups`,
        or ceil((ub - lb) / step) from the loop's bounds, which must be lowered already)."""
        if self.plan.tile_groups is not None:
            return self.imm("b32", str(self.plan.tile_groups))
        loop = self.plan.loop
        lb, ub, step = (self.scalar(v) for v in (loop.lb, loop.ub, loop.step))
        span = self.index_op("sub", ub, lb)
        span = self.index_op("add", span, self.idx_const(int(step.const) - 1))
        trips = self.udiv_const(self.reg(span), int(step.const), 64)
        ge = self.inst(ptx.SetpOp, ".gt.s64", [self.reg(span), self.imm("b64", "0")], "pred")
        trips = self.inst(ptx.SelpOp, ".b64", [trips, self.imm("b64", "0"), ge], "b64")
        return self.inst(ptx.CvtOp, ".u32.u64", [trips], "b32")

    def barrier(self, which: str, g: SSAValue) -> SSAValue:
        """Shared address (.b32) of full[g mod S] or empty[g mod S]."""
        slot = self.mod_stages(g)
        off = self.inst(ptx.ShlOp, ".b32", [slot, self.imm("b32", "3")], "b32")
        base = self.sh["full"] if which == "full" else self.sh["empty"]
        return self.inst(ptx.AddOp, ".u32", [base, off], "b32")

    def mod_stages(self, g: SSAValue) -> SSAValue:
        return self.udiv_const(g, self.plan.stages, 32, rem=True)

    def parity(self, g: SSAValue, minus_one: bool = False) -> SSAValue:
        r = self.udiv_const(g, self.plan.stages, 32)
        if minus_one:
            r = self.inst(ptx.AddOp, ".u32", [r, self.imm("b32", "1")], "b32")
        return self.inst(ptx.AndOp, ".b32", [r, self.imm("b32", "1")], "b32")

    def when(self, pred: SSAValue, negate: bool = False) -> Block:
        """Start a block executed only when `pred` (or its negation) holds; returns the join block."""
        body, join = self.new_block(), Block()
        self.emit(ptx.CbraOp(pred, join, body, negate=not negate))
        self.cur = body
        return join

    def join(self, join: Block) -> None:
        self.emit(ptx.BraOp(join))
        self.blocks.append(join)
        self.cur = join


def acc_geometry(lw: RoleLowering, t: coop.MatrixType, op) -> list[tuple[int, int]]:
    """Element (row, col) of each accumulator register relative to the thread's lane terms: the
    wgmma D fragment of each 64-row block of the consumer, block after block."""
    if t.columns % 8 or not 8 <= t.columns <= 256:
        raise op_error(op, f"accumulator columns must be a multiple of 8 in 8..256, got {t.columns}")
    return [(64 * j + 8 * ((i >> 1) & 1), 8 * (i >> 2) + (i & 1))
            for j in range(lw.plan.blocks) for i in range(t.columns // 2)]


def _is_matrix_op(op: Operation) -> bool:
    if any(isinstance(r.type, coop.MatrixType) for r in op.results):
        return True
    return op.name.startswith(("coop.", "sparse_mma.")) and not isinstance(
        op, AllocWorkgroupOp | AsyncCopyOp | AsyncCopyTensorOp | AsyncCommitGroupOp | AsyncWaitGroupOp)


def skip(lw: RoleLowering, op: Operation) -> None:
    pass


def _alloc(lw: RoleLowering, op: AllocWorkgroupOp) -> None:
    off = lw.plan.buffer_offset[op]
    base = lw.sh["smem"]
    addr = lw.inst(ptx.AddOp, ".u32", [base, lw.imm("b32", str(off))], "b32") if off else base
    lw.vmap[op.result] = Buf(op.result.type, addr, "shared")
    if lw.goff is not None:  # persistent: the ring's slot k holds group k mod S of all tiles
        size = buffer_bytes(op.result.type)
        rot = lw.inst(ptx.MulOp, ".lo.u32", [lw.rotation, lw.imm("b32", str(size // lw.plan.stages))], "b32")
        lw.ring[op.result] = (rot, size)


def ring_offset(lw: RoleLowering, buffer: SSAValue, off: SSAValue) -> SSAValue:
    """Byte offset into a staged buffer: the IR's slot (i mod S of the tile's own iterations)
    rotated by the slots earlier tiles used, (t * G) mod S, in a persistent CTA."""
    if buffer not in lw.ring:
        return off
    rot, size = lw.ring[buffer]
    o = lw.inst(ptx.AddOp, ".u32", [rot, off], "b32")
    wrapped = lw.inst(ptx.SubOp, ".u32", [o, lw.imm("b32", str(size))], "b32")
    return lw.inst(ptx.MinOp, ".u32", [o, wrapped], "b32")  # o < size: o - size wraps above o


PRODUCER_RULES: dict = {}
CONSUMER_RULES: dict = {}


def _lower_one(self: RoleLowering, op: Operation) -> None:
    """Lower one op through the role's tables (scf.if bodies are lowered op by op)."""
    table = PRODUCER_RULES if self.role == "producer" else CONSUMER_RULES
    fn = table.get(type(op))
    if fn is not None:
        return fn(self, op)
    if self.role == "producer" and _is_matrix_op(op):
        for r in op.results:
            self.vmap[r] = Skipped(r.type)
        return
    rule = RULES.get(type(op))
    if rule is None:
        raise op_error(op, f"has no PTX lowering (convert-coop-to-ptx, target {self.target})")
    rule(self, op)


RoleLowering.lower_op = _lower_one


for _table in (PRODUCER_RULES, CONSUMER_RULES):
    _table[AllocWorkgroupOp] = _alloc
    _table[AsyncCommitGroupOp] = skip
