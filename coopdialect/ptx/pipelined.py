"""The staged form on Hopper: a warp-specialized TMA + mbarrier + wgmma pipeline (sm_90a).

Input: a kernel after `pipeline-coop-loads` (docs/staging.md): workgroup buffers filled by
`coop.async_copy` in committed groups, one `scf.for` marked `coop.pipeline_stages = S` whose
iterations wait for their group (`coop.async_wait_group`), load Workgroup-scope A/B matrices from
slot `i mod S` and `coop.mul_add` them into a Workgroup-scope accumulator.

Output: one CTA of `128 * (C + 1)` threads: C consumer warpgroups, each owning 64 rows of the
accumulator (64, 128 or 192 rows: C = rows / 64) or 128 rows as two 64-row blocks (256 rows:
C = 2; four 64-row consumers would start with 96 registers a thread, too few):

* **producer** (warpgroup 0, `setmaxnreg.dec` to `producer_registers`; one thread works): runs
  the kernel's copy slice — the same IR with every matrix op dropped — and turns each group of
  copies into `mbarrier.arrive.expect_tx` on `full[g mod S]` plus one
  `cp.async.bulk.tensor.2d` per copy (the tensor map of the source argument, box = the copy's
  rows x cols, swizzled by its row width: 32, 64 or 128 bytes; sparsity metadata unswizzled);
  before refilling a slot it waits on `empty[g mod S]`.
* **consumers** (warpgroups 1..C, `setmaxnreg.inc` to `consumer_registers`): run the IR with the
  copies dropped; `coop.async_wait_group` waits on `full[g mod S]` (parity `(g / S) & 1`); an A/B
  load from a workgroup buffer is a wgmma shared-memory descriptor (K-major, swizzled,
  SBO = 8 rows); each `coop.mul_add` is K/16 `wgmma.mma_async.m64nNk16` per 64-row block of
  the consumer, committed, then `wgmma.wait_group 1` — so one batch is in flight while the next
  stage's copy lands — after which the previous stage is released (`mbarrier.arrive` on
  `empty`, one per warp). A `sparse_mma.mma_sp` is the same with `wgmma.mma_async.sp` and
  sp-meta words packed from the metadata tile; since the hardware reads the sp-meta register
  while the instruction runs, a 2:4 batch stays in flight only where the loop keeps its words:
  with `sparse_in_flight` 1 (the default) the consumers run a loop of constant, even trip count
  two batches per trip, each closed by `wgmma.wait_group 1`, and keep every word in its
  register until the wait that retires its batch (`_unrolled_for`); otherwise a batch ends with
  `wgmma.wait_group 0` and releases its own stage, and with `sparse_batch` 2 a trip's two
  iterations issue their K steps as one batch.
* `persistent` (`_tile_loop`): one CTA per multiprocessor; each role loops over the dispatch's
  tiles (the grid comes as two kernel parameters), group k of the CTA's n-th tile is n * G + k
  (G: the tile's K steps), and the IR's slot `i mod S` is rotated by (n * G) mod S in every
  buffer's ring, so the barrier phases run on across tiles; the producer fills the next tile's
  stages while the consumers store the last tile.
* `cluster_m = 2` pairs CTAs along workgroup y: each copies half of the boxes both read into
  both (multicast), and releases stages on both CTAs' barriers (measured slower; not default).

Group numbering is static: the function body's commits before the staged loop count P, each
iteration commits c, so the copies/waits of iteration i refer to group `P + i*c + k`. Workgroup
ids are remapped in groups of `raster_group` tile rows (a bijection of the grid: workgroups are
independent, so their order is the compiler's to choose) so that concurrently running CTAs
share A and B tiles in L2. The launch description (`coopdialect.ptx.launch`) says how the host
encodes the tensor maps and how much dynamic shared memory to ask for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (BFloat16Type, DenseArrayBase, Float16Type, Float32Type, IndexType,
                                   IntegerType, MemRefType)
from xdsl.ir import Block, Operation, SSAValue

from coopdialect.diagnostics import CoopError
from coopdialect.dialects import coop, ptx
from coopdialect.dialects import sparse_mma as sm
from coopdialect.dialects import gpu as cgpu
from coopdialect.dialects.coop import Layout, Scope, Use
from coopdialect.dialects.coop_async import (
    AllocWorkgroupOp,
    AsyncCommitGroupOp,
    AsyncCopyOp,
    AsyncWaitGroupOp,
    is_workgroup,
)
from coopdialect.index_facts import divides
from coopdialect.ptx.lower import (
    RULES,
    Buf,
    Frag,
    KernelLowering,
    LoopFrame,
    Scalar,
    Skipped,
    op_error,
    open_loop,
    scalar_param,
    width,
)
from coopdialect.dialects.coop_kernel import GRID_ATTR
from coopdialect.ptx.launch import arg_descs, grid_desc, scalar_param_desc

STAGES_ATTR = "coop.pipeline_stages"
SHARED_LIMIT = 232448  # bytes of dynamic shared memory per CTA on sm_90 (227 KB)
SCRATCH_BYTES = 16  # after the barriers: one st.shared.v4.b32 of retired sp-meta words
_DTYPE = {Float16Type: "FLOAT16", BFloat16Type: "BFLOAT16", Float32Type: "FLOAT32"}


def _tensor_map_type(t) -> str | None:
    """CU_TENSOR_MAP_DATA_TYPE_* of an element type; 8-bit types (s8, u8, fp8) move as UINT8."""
    if type(t) in _DTYPE:
        return _DTYPE[type(t)]
    w = width(t)
    return {8: "UINT8", 16: "UINT16", 32: "INT32"}.get(w)
_THREAD_IDS = (cgpu.ThreadIdOp, cgpu.SubgroupIdOp, cgpu.LaneIdOp, cgpu.GlobalIdOp, cgpu.NumSubgroupsOp,
               cgpu.BlockDimOp)


@dataclass(frozen=True)
class Options:
    """Knobs of the lowering (pass options of convert-coop-to-ptx)."""

    producer_registers: int = 40
    consumer_registers: int = 0  # 0: the most that fits beside the producer, at most 232
    raster_group: int = 16
    cluster_m: int = 1  # CTAs per cluster along workgroup y; 2 multicasts the tiles they share
    sparse_batch: int = 1  # K steps of a 2:4 product per wgmma-group (commit_group; _unrolled_for)
    sparse_in_flight: int = 1  # 2:4 batches left running at each wgmma.wait_group (0 or 1)
    persistent: bool = False  # one CTA per SM loops over the tiles (_tile_loop)

    def budgets(self, consumers: int) -> tuple[int, int]:
        """(producer, consumer) registers per thread for `consumers` consumer warpgroups."""
        c = self.consumer_registers
        if not c:
            c = min(232, (pool(consumers) - 128 * self.producer_registers) // (128 * consumers) // 8 * 8)
        return self.producer_registers, c


# Registers a consumer thread needs beside its accumulators: ptxas 13.0 asked for 155 to compile
# a 64x256 f32 wgmma.sp accumulator (128 registers) at 192 rows (sparse f16).
ACC_OVERHEAD = 27


def launch_registers(consumers: int) -> int:
    """Registers per thread the CTA starts with: ptxas gives a kernel that uses setmaxnreg the
    most `.maxntid` allows, 65536 / threads rounded down to 8 (HOPPER.md)."""
    return min(248, 65536 // (128 * (consumers + 1)) // 8 * 8)


def pool(consumers: int) -> int:
    """Registers of one CTA. setmaxnreg only moves registers inside the CTA's launch allocation:
    an `.inc` that needs more than the `.dec`s released waits forever (found on the H200 with
    four consumer warpgroups)."""
    return 128 * (consumers + 1) * launch_registers(consumers)


@dataclass
class Plan:
    """What the analysis of a staged kernel found."""

    loop: scf.ForOp
    stages: int
    consumers: int
    buffers: list[AllocWorkgroupOp]
    buffer_offset: dict[AllocWorkgroupOp, int]  # bytes from the aligned dynamic-smem base
    barrier_offset: int
    smem_bytes: int
    scratch_offset: int  # bytes: where consumers store retired sp-meta words (_retire_meta)
    sources: list[int]  # function argument indices read by async copies (tensor maps)
    boxes: dict[int, tuple[int, int]]  # arg -> (rows, cols) of its copies
    swizzle: dict[int, int] = field(default_factory=dict)  # arg -> swizzle bytes (0: none)
    multicast: set[int] = field(default_factory=set)  # args whose box the cluster pair shares
    args: list = field(default_factory=list)  # the function's arguments
    cluster_m: int = 1
    blocks: int = 1  # 64-row accumulator blocks per consumer warpgroup
    packed: dict[int, int] = field(default_factory=dict)  # arg -> rows folded into one box row
    group_of: dict[Operation, tuple[int, int]] = field(default_factory=dict)  # op -> (const, per-iter)
    group_bytes: dict[Operation, int] = field(default_factory=dict)  # first copy of a group -> bytes
    tile_groups: int = 0  # persistent: the groups one tile fills (0: not persistent)


def _bytes(t: MemRefType) -> int:
    """Bytes of a workgroup buffer (its S stages together)."""
    return width(t.element_type) // 8 * t.element_count()


def _refuse(op: Operation, why: str):
    # a CoopError: `file:line:col: error: ...` at the op (the staged loop's location)
    return CoopError(op, f"the staged form lowers only to a warp-specialized wgmma pipeline "
                         f"(sm_90a) and {why}")


def analyze(fn: func.FuncOp, target: str, cluster_m: int = 1, persistent: bool = False) -> Plan | None:
    """The plan for a staged kernel, None for a kernel without staged ops; raises the one-line
    diagnostic (on the offending op) for a staged kernel this lowering cannot do."""
    staged = [op for op in fn.walk() if isinstance(op, AllocWorkgroupOp | AsyncCopyOp |
                                                    AsyncCommitGroupOp | AsyncWaitGroupOp)]
    if not staged:
        return None
    workgroup_products = [op for op in fn.walk() if isinstance(op, coop.MulAddOp | sm.MmaSpOp)
                          and op.c.type.scope_value == Scope.Workgroup]
    if target != "sm_90a" or not workgroup_products:
        # op by op: cp.async copies and barriers (staged_generic.py); Workgroup-scope products
        # on targets before sm_90a are refused there by the wgmma rules
        return None
    loops = [op for op in fn.walk() if isinstance(op, scf.ForOp) and STAGES_ATTR in op.attributes]
    if len(loops) != 1:
        raise _refuse(staged[0], f"needs exactly one scf.for with {STAGES_ATTR}, found {len(loops)}")
    loop = loops[0]
    attr = loop.attributes[STAGES_ATTR]
    stages = attr.value.data if hasattr(attr, "value") else attr.data
    for op in fn.walk():
        if isinstance(op, _THREAD_IDS):
            raise _refuse(op, "the kernel must not depend on invocation or subgroup ids (the "
                              "compiler chooses the warp roles)")
    buffers = [op for op in staged if isinstance(op, AllocWorkgroupOp)]
    copies = [op for op in staged if isinstance(op, AsyncCopyOp)]
    args = list(fn.args)
    boxes: dict[int, tuple[int, int]] = {}
    role = _buffer_roles(fn)
    swizzle: dict[int, int] = {}
    for cp in copies:
        if cp.source not in args:
            raise _refuse(cp, "the copy source must be a kernel argument")
        i = args.index(cp.source)
        if not cp.source.type.has_static_shape():
            raise _refuse(cp, f"the copy source {cp.source.type} has a dynamic size; its tensor "
                              "map needs the global sizes at compile time (a static shape)")
        es = width(cp.source.type.element_type) // 8
        rows, cols = cp.rows.data, cp.cols.data
        row_bytes = cols * es
        kind = role.get(cp.destination.owner, "operand")
        if kind == "operand" and row_bytes not in SWIZZLES:
            raise _refuse(cp, f"a copy feeding a wgmma operand must have rows of 32, 64 or 128 "
                              f"bytes (the swizzle modes), got {cols} x {cp.source.type.element_type}")
        if kind == "meta" and row_bytes % 16:
            raise _refuse(cp, "a copy of sparsity metadata must have rows of a multiple of 16 bytes")
        if rows > 256 or rows % 8 or cols * es > 256:
            raise _refuse(cp, f"a copied box must have a multiple of 8 (<= 256) rows, got {rows}")
        if _const(cp.source_stride) is None or _const(cp.destination_stride) != cols:
            raise _refuse(cp, "needs a constant source stride and a destination row pitch equal "
                              "to the box's cols")
        if boxes.setdefault(i, (rows, cols)) != (rows, cols):
            raise _refuse(cp, "all copies of one argument must have the same box")
        if swizzle.setdefault(i, row_bytes if kind == "operand" else 0) != (row_bytes if kind == "operand" else 0):
            raise _refuse(cp, "one argument is copied both as a wgmma operand and as metadata")
    accs = []
    for op in fn.walk():
        if isinstance(op, coop.LoadOp) and is_workgroup(op.pointer.type):
            t = op.result.type
            ok = (t.scope_value == Scope.Workgroup and
                  ((t.use_value == Use.MatrixA and op.layout.data == Layout.RowMajor) or
                   (t.use_value == Use.MatrixB and op.layout.data == Layout.ColumnMajor)))
            ok = ok and not _conflicting_uses(op)
            if not ok:
                raise _refuse(op, "workgroup buffers must be read as Workgroup-scope MatrixA "
                                  "RowMajor / MatrixB ColumnMajor (K-major wgmma operands)")
        if isinstance(op, coop.MulAddOp | sm.MmaSpOp):
            accs.append(op)
    if not accs:
        raise _refuse(staged[0], "has no coop.mul_add or sparse_mma.mma_sp to pipeline")
    rows = {op.c.type.rows for op in accs}
    if len(rows) != 1 or next(iter(rows)) % 64 or not 64 <= next(iter(rows)) <= 256:
        raise _refuse(accs[0], f"accumulators must have 64, 128, 192 or 256 rows (one consumer "
                               f"warpgroup per 64, or two per 128 of 256), got {sorted(rows)}")
    blocks = 2 if next(iter(rows)) == 256 else 1
    consumers = next(iter(rows)) // (64 * blocks)
    for op in accs:  # ptxas compiles the kernel at its launch registers a thread (see pool)
        acc_regs = blocks * op.c.type.columns // 2
        if acc_regs + ACC_OVERHEAD > launch_registers(consumers):
            raise _refuse(op, f"{op.c.type.rows}x{op.c.type.columns} accumulators need {acc_regs} "
                              f"registers a consumer thread plus about {ACC_OVERHEAD} more, and a "
                              f"CTA of {consumers} consumer warpgroups starts with "
                              f"{launch_registers(consumers)} (fewer rows or columns)")
    offsets, off = {}, 0
    for b in buffers:
        size = _bytes(b.result.type)
        offsets[b] = off
        off += -(-size // 1024) * 1024
    barrier_offset = off
    # full and empty barriers (8 bytes each per stage), the scratch words, the alignment slack
    # of the dynamic base
    smem = off + 16 * stages + SCRATCH_BYTES + 1024
    if smem > SHARED_LIMIT:
        raise _refuse(loop, f"{stages} stages need {smem} bytes of shared memory, more than the "
                            f"{SHARED_LIMIT} an sm_90 CTA may have (fewer stages or smaller tiles)")
    plan = Plan(loop, stages, consumers, buffers, offsets, barrier_offset, smem, off + 16 * stages,
                sorted(boxes), boxes, swizzle, args=args, blocks=blocks)
    _number_groups(fn, plan)
    if cluster_m not in (1, 2):
        raise _refuse(loop, f"cluster-m must be 1 or 2, got {cluster_m}")
    plan.cluster_m = cluster_m
    if persistent:
        if cluster_m != 1:
            raise _refuse(loop, "a persistent kernel runs without clusters (cluster-m 1)")
        plan.tile_groups = _tile_groups(plan)
    if cluster_m == 2:
        for cp in copies:
            i = args.index(cp.source)
            if not _depends_on_block_y(cp.source_offset) and cp.rows.data % 16 == 0:
                plan.multicast.add(i)
        for cp in copies:  # every copy of a multicast argument must be shareable
            i = args.index(cp.source)
            if i in plan.multicast and _depends_on_block_y(cp.source_offset):
                plan.multicast.discard(i)
    for i, (rows, cols) in boxes.items():
        mine = [cp for cp in copies if args.index(cp.source) == i]
        f = _packing(mine, rows, cols, swizzle[i], fn.args[i].type)
        if f > 1 and i not in plan.multicast:
            plan.packed[i] = f
    return plan


# Bytes per box row of a packed copy: one L2 request carries at most 4 sectors of 32 bytes.
PACKED_ROW_BYTES = 128


def _packing(copies: list[AsyncCopyOp], rows: int, cols: int, swz: int, t: MemRefType) -> int:
    """How many box rows one TMA box row can carry: an unswizzled copy whose rows are contiguous
    in global memory (source stride = cols) is the same bytes as `rows / f` rows of `f * cols`.
    TMA reads every box row as its own L2 requests, so 16-byte metadata rows cost a request per
    16 bytes; Nsight Compute showed the 2:4 kernel bound by L2 tag lookups (docs/performance.md).
    Needs every source offset to be a known multiple of the wider row."""
    es = width(t.element_type) // 8
    if swz or any(_const(cp.source_stride) != cols for cp in copies):
        return 1
    total = t.element_count()
    f = 1
    while (2 * f * cols * es <= PACKED_ROW_BYTES and rows % (2 * f) == 0
           and total % (2 * f * cols) == 0
           and all(divides(2 * f * cols, cp.source_offset) for cp in copies)):
        f *= 2
    return f


def _depends_on_block_y(v: SSAValue, seen: set | None = None) -> bool:
    """Whether a value may differ between the workgroups (x, 2j) and (x, 2j+1) of a cluster pair:
    arith of constants, grid sizes, workgroup id x and loop induction variables does not."""
    seen = set() if seen is None else seen
    op = v.owner
    if isinstance(op, Block):
        parent = op.parent_op()
        if isinstance(parent, scf.ForOp) and v.index == 0:  # the induction variable
            return any(_depends_on_block_y(b, seen) for b in (parent.lb, parent.ub, parent.step))
        return True
    if op in seen:
        return False
    seen.add(op)
    if isinstance(op, cgpu.BlockIdOp):
        return op.dim != "x"
    if isinstance(op, arith.ConstantOp | cgpu.GridDimOp):
        return False
    if op.name.startswith("arith."):
        return any(_depends_on_block_y(o, seen) for o in op.operands)
    return True


SWIZZLES = (32, 64, 128)  # bytes per swizzled row: the wgmma descriptor / TMA swizzle modes
_DESC_MODE = {128: 1, 64: 2, 32: 3}  # descriptor bits 62-63


def _conflicting_uses(load: coop.LoadOp) -> bool:
    """A workgroup-buffer load must feed wgmma operands only (or only sparsity metadata)."""
    kinds = {_use_kind(u) for u in load.result.uses}
    return None in kinds or len(kinds) > 1


def _use_kind(u) -> str | None:
    op = u.operation
    if isinstance(op, coop.MulAddOp) and u.index in (0, 1):
        return "operand"
    if isinstance(op, sm.MmaSpOp):
        return {0: "operand", 1: "meta", 2: "operand"}.get(u.index)
    return None


def _buffer_roles(fn: func.FuncOp) -> dict[Operation, str]:
    """Each workgroup buffer's role: `operand` (swizzled wgmma tile) or `meta` (sparsity bytes)."""
    roles: dict[Operation, str] = {}
    for op in fn.walk():
        if isinstance(op, coop.LoadOp) and is_workgroup(op.pointer.type):
            kinds = {_use_kind(u) for u in op.result.uses} - {None}
            if kinds:
                roles[op.pointer.owner] = next(iter(kinds))
    return roles


def _const(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp):
        return op.value.value.data
    return None


def _number_groups(fn: func.FuncOp, plan: Plan) -> None:
    """Give every async copy/wait its group `(P + k, per_iteration)` and every group's first copy
    the bytes of the group; refuse structures the static numbering cannot follow."""
    block_of_group: dict[tuple[int, int], Block] = {}

    def visit(block: Block, in_loop: bool, count: list[int], shift: int) -> None:
        first: Operation | None = None
        for op in block.ops:
            if isinstance(op, AsyncCommitGroupOp):
                count[0] += 1
                first = None
            elif isinstance(op, AsyncCopyOp):
                key = (count[0] + shift, int(in_loop))
                plan.group_of[op] = key
                if block_of_group.setdefault(key, block) is not block:
                    raise _refuse(op, "the copies of one group must be issued in one block")
                es = width(op.source.type.element_type) // 8
                if first is None:
                    first = op
                    plan.group_bytes[op] = 0
                plan.group_bytes[first] += op.rows.data * op.cols.data * es
            elif isinstance(op, AsyncWaitGroupOp):
                g = count[0] - 1 - op.pending.data + shift
                if in_loop and g < 0:
                    raise _refuse(op, "waits for a group before the first one")
                if after_loop[0] and _reads_workgroup_after(op):
                    raise _refuse(op, "workgroup memory is read after the staged loop")
                plan.group_of[op] = (g, int(in_loop))
            elif op is plan.loop:
                inner = [0]
                visit(op.body.block, True, inner, count[0])
                if inner[0] != 1:
                    raise _refuse(op, f"the staged loop must commit exactly one group per "
                                      f"iteration, it commits {inner[0]}")
                after_loop[0] = True
            elif isinstance(op, scf.IfOp):
                for region in op.regions:
                    for b in region.blocks:
                        if any(isinstance(o, AsyncCommitGroupOp) for o in b.walk()):
                            raise _refuse(op, "commits must not be conditional")
                        visit(b, in_loop, count, shift)
            elif any(isinstance(o, AsyncCopyOp | AsyncCommitGroupOp | AsyncWaitGroupOp)
                     for r in op.regions for b in r.blocks for o in b.walk()):
                raise _refuse(op, "async copies are allowed only at the kernel's top level, in "
                                  "scf.if and in the staged loop")
            if after_loop[0] and isinstance(op, AsyncCopyOp | AsyncCommitGroupOp) and not in_loop:
                raise _refuse(op, "no async copies may follow the staged loop")

    after_loop = [False]
    visit(fn.body.block, False, [0], 0)


def _tile_groups(plan: Plan) -> int:
    """The groups one tile fills, for the persistent tile loop, where the barriers' phases count
    the groups of all the CTA's tiles (group k of its t-th tile is t * G + k). That needs the
    form pipeline-coop-loads writes: a constant trip count T, iteration i waiting for group i,
    prologue groups below T, and the loop's own copies (group P + i) guarded by
    `iv + P * step < ub` — so that exactly the groups 0 .. T-1 carry data, each once."""
    loop = plan.loop
    lb, ub, step = (_const(v) for v in (loop.lb, loop.ub, loop.step))
    if None in (lb, ub, step) or step <= 0 or ub <= lb:
        raise _refuse(loop, "a persistent kernel needs a staged loop of constant trip count")
    trips = -(-(ub - lb) // step)
    iv = loop.body.block.args[0]
    for op, (base, per) in plan.group_of.items():
        if isinstance(op, AsyncWaitGroupOp) and per and base != 0:
            raise _refuse(op, "a persistent kernel needs iteration i to wait for group i")
        if isinstance(op, AsyncCopyOp) and not per and base >= trips:
            raise _refuse(op, f"a persistent kernel's prologue may fill only the {trips} groups "
                              "its loop reads")
        if isinstance(op, AsyncCopyOp) and per:
            guard = op.parent_op()
            cmp = guard.cond.owner if isinstance(guard, scf.IfOp) else None
            add = cmp.lhs.owner if isinstance(cmp, arith.CmpiOp) else None
            ok = (isinstance(add, arith.AddiOp) and _predicate(cmp) in ("slt", "ult")
                  and (cmp.rhs is loop.ub or _const(cmp.rhs) == ub)
                  and {add.lhs, add.rhs} & {iv}
                  and _const(add.rhs if add.lhs is iv else add.lhs) == base * step)
            if not ok:
                raise _refuse(op, f"a persistent kernel needs the loop's copies guarded by "
                                  f"`iv + {base * step} < ub` (the form pipeline-coop-loads writes)")
    return trips


def _predicate(cmp: arith.CmpiOp) -> str:
    """The comparison's MLIR name (`slt`, `ult`, ...)."""
    return arith.CMPI_COMPARISON_OPERATIONS[cmp.predicate.value.data]


def _inside(op: Operation, ancestor: Operation) -> bool:
    p = op.parent_op()
    while p is not None:
        if p is ancestor:
            return True
        p = p.parent_op()
    return False


# ---------------------------------------------------------------------------------------------
# Values of the role lowerings
# ---------------------------------------------------------------------------------------------


@dataclass
class SwizzledTile:
    """A K-major wgmma operand in shared memory, TMA-written with rows of `row_bytes` (32, 64 or
    128) in the swizzle mode of that width."""

    ty: coop.MatrixType
    addr: SSAValue  # .b32 shared-window address of the tile's first row
    row_bytes: int


@dataclass
class Deferred:
    """A 2:4 product of an iteration that is not the last of its batch (`_unrolled_for`): its
    wgmma.mma_async.sp, not issued yet, as (modifiers, sel, immediates, A descriptor,
    B descriptor, sp-meta word, 64-row block) on the accumulator registers `regs`."""

    regs: list
    issue: list


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
        iteration of a trip of `_unrolled_for`: the induction variable of each)."""
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

    def spin_wait(self, bar: SSAValue, parity: SSAValue) -> None:
        """`try_wait.parity` loop: returns once the phase of that parity has completed."""
        loop = self.new_block()
        self.emit(ptx.BraOp(loop))
        self.cur = loop
        done = self.emit(ptx.MbarrierTryWaitParityOp(bar, parity)).out
        after = self.new_block()
        self.emit(ptx.CbraOp(done, after, loop))
        self.cur = after

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


def _is_matrix_op(op: Operation) -> bool:
    if any(isinstance(r.type, coop.MatrixType) for r in op.results):
        return True
    return op.name.startswith(("coop.", "sparse_mma.")) and not isinstance(
        op, AllocWorkgroupOp | AsyncCopyOp | AsyncCommitGroupOp | AsyncWaitGroupOp)


# ---------------------------------------------------------------------------------------------
# Rules shared by both roles
# ---------------------------------------------------------------------------------------------


def _alloc(lw: RoleLowering, op: AllocWorkgroupOp) -> None:
    off = lw.plan.buffer_offset[op]
    base = lw.sh["smem"]
    addr = lw.inst(ptx.AddOp, ".u32", [base, lw.imm("b32", str(off))], "b32") if off else base
    lw.vmap[op.result] = Buf(op.result.type, addr, "shared")
    if lw.goff is not None:  # persistent: the ring's slot k holds group k mod S of all tiles
        size = _bytes(op.result.type)
        rot = lw.inst(ptx.MulOp, ".lo.u32", [lw.rotation, lw.imm("b32", str(size // lw.plan.stages))], "b32")
        lw.ring[op.result] = (rot, size)


def _ring_offset(lw: RoleLowering, buffer: SSAValue, off: SSAValue) -> SSAValue:
    """Byte offset into a staged buffer: the IR's slot (i mod S of the tile's own iterations)
    rotated by the slots earlier tiles used, (t * G) mod S, in a persistent CTA."""
    if buffer not in lw.ring:
        return off
    rot, size = lw.ring[buffer]
    o = lw.inst(ptx.AddOp, ".u32", [rot, off], "b32")
    wrapped = lw.inst(ptx.SubOp, ".u32", [o, lw.imm("b32", str(size))], "b32")
    return lw.inst(ptx.MinOp, ".u32", [o, wrapped], "b32")  # o < size: o - size wraps above o


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
            last = lw.inst(ptx.AddOp, ".u32", [lw.goff, lw.imm("b32", str(lw.plan.tile_groups - 1))], "b32")
            _release(lw, last, range(in_flight * groups - 1, -1, -1))
        if lw.in_flight:  # the last batch's words live to here
            _retire_meta(lw)


def _unrollable_trips(plan: Plan) -> int | None:
    """The staged loop's trip count where the consumers may run several of its iterations per
    trip of their loop: a constant trip count and exactly one `sparse_mma.mma_sp` in the loop (no
    `coop.mul_add`), accumulating into a loop-carried value that only the yield uses. None
    otherwise."""
    loop = plan.loop
    lb, ub, step = (_const(v) for v in (loop.lb, loop.ub, loop.step))
    if None in (lb, ub, step) or step <= 0 or ub <= lb or (ub - lb) % step:
        return None
    body = loop.body.block
    products = [op for op in loop.walk() if isinstance(op, sm.MmaSpOp | coop.MulAddOp)]
    if len(products) != 1 or not isinstance(products[0], sm.MmaSpOp) or products[0].parent is not body:
        return None
    sp, last = products[0], body.last_op
    if sp.c not in body.args[1:] or not isinstance(last, scf.YieldOp):
        return None
    i = list(body.args[1:]).index(sp.c)
    if last.arguments[i] is not sp.result or sum(1 for _ in sp.result.uses) != 1:
        return None
    return (ub - lb) // step


def sparse_schedule(plan: Plan, options: Options) -> tuple[int, int]:
    """(K steps per 2:4 batch, batches left in flight at each `wgmma.wait_group`) of the
    consumers' staged loop: the options' `sparse_batch` and `sparse_in_flight` where the loop's
    trip count (`_unrollable_trips`) is a multiple of the iterations one trip then runs, batch x
    (1 + in flight); else the first of (1, in flight), (batch, 0) and (1, 0) it allows."""
    trips = _unrollable_trips(plan)
    if trips is None:
        return 1, 0
    b, f = options.sparse_batch, options.sparse_in_flight
    for batch, flight in ((b, f), (1, f), (b, 0)):
        if trips % (batch * (1 + flight)) == 0:
            return batch, flight
    return 1, 0


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
    shared memory after that wait (`_retire_meta`), and the words of the trip's second batch,
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


# ---------------------------------------------------------------------------------------------
# Producer
# ---------------------------------------------------------------------------------------------


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
    stride = _const(op.source_stride) * plan.packed.get(plan.args.index(op.source), 1)
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
    daddr = lw.inst(ptx.AddOp, ".u32", [dst.base, _ring_offset(lw, op.destination, lw.b32(dbytes))], "b32")
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


def _p_nothing(lw: RoleLowering, op: Operation) -> None:
    pass


# ---------------------------------------------------------------------------------------------
# Consumers
# ---------------------------------------------------------------------------------------------


def _reads_workgroup_after(op: Operation) -> bool:
    """Whether a workgroup-memory load follows `op` (in its block or after its ancestors)."""
    cur = op
    while cur is not None:
        nxt = cur.next_op
        while nxt is not None:
            if any(isinstance(o, coop.LoadOp) and is_workgroup(o.pointer.type) for o in nxt.walk()):
                return True
            nxt = nxt.next_op
        cur = cur.parent_op()
        if isinstance(cur, func.FuncOp):
            break
    return False


def _c_wait(lw: RoleLowering, op: AsyncWaitGroupOp) -> None:
    base, per = lw.plan.group_of[op]
    if not per and (base < 0 or not _reads_workgroup_after(op)):
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
    addr = lw.inst(ptx.AddOp, ".u32", [buf.base, _ring_offset(lw, op.pointer, lw.b32(off))], "b32")
    row_bytes = _const(op.stride) * es
    if t.use_value == Use.MatrixA:  # this consumer's rows start 64 * blocks * row_bytes further
        shift = lw.imm("b32", str((64 * lw.plan.blocks * row_bytes).bit_length() - 1))
        first = lw.inst(ptx.ShlOp, ".b32", [lw.sh["consumer"], shift], "b32")
        addr = lw.inst(ptx.AddOp, ".u32", [addr, first], "b32")
    if {_use_kind(u) for u in op.result.uses} == {"meta"}:
        lw.vmap[op.result] = MetaTile(t, addr, row_bytes)
    else:
        lw.vmap[op.result] = SwizzledTile(t, addr, row_bytes)


def _acc_geometry(lw: RoleLowering, t: coop.MatrixType, op) -> list[tuple[int, int]]:
    """Element (row, col) of each accumulator register relative to the thread's lane terms: the
    wgmma D fragment of each 64-row block of the consumer, block after block."""
    if t.columns % 8 or not 8 <= t.columns <= 256:
        raise op_error(op, f"accumulator columns must be a multiple of 8 in 8..256, got {t.columns}")
    return [(64 * j + 8 * ((i >> 1) & 1), 8 * (i >> 2) + (i & 1))
            for j in range(lw.plan.blocks) for i in range(t.columns // 2)]


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
    for r, c in _acc_geometry(lw, t, op):
        kind = "f32" if isinstance(t.element_type, Float32Type) else "b16" if es == 2 else "b32"
        suffix = "f32" if kind == "f32" else f"b{es * 8}"
        regs.append(lw.emit(ptx.LdOp(f".{buf.space}.{suffix}", base, (r * int(stride.const) + c) * es,
                                     [ptx.RegType(kind)])).outs[0])
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
    geo = _acc_geometry(lw, t, op)
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
    s = lw.scalar(op.constituent)
    et = t.element_type
    if s.const is None or not (isinstance(et, Float32Type) or
                               (isinstance(et, IntegerType) and width(et) == 32)):
        raise op_error(op, "a Workgroup-scope matrix in a staged kernel is constructed from an "
                           "f32 or 32-bit integer constant")
    _acc_geometry(lw, t, op)
    from coopdialect.ptx.lower import float_literal
    if isinstance(et, Float32Type):
        mods, lit, ty = ".f32", float_literal(et, float(s.const)), ptx.F32
    else:
        mods, lit, ty = ".b32", str(int(s.const) & 0xFFFFFFFF), ptx.B32
    # Distinct registers: wgmma reads and writes each accumulator register in place.
    lw.vmap[op.result] = Frag(t, [lw.emit(ptx.MovImmOp(mods, lit, ty)).out
                                  for _ in range(lw.plan.blocks * t.columns // 2)])


def _split(regs, n: int) -> list[list]:
    """The accumulator registers of each of the consumer's `n` 64-row blocks."""
    per = len(regs) // n
    return [list(regs[j * per:(j + 1) * per]) for j in range(n)]


def _desc(lw: RoleLowering, tile: SwizzledTile, k_bytes: int) -> SSAValue:
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
    et = {Float16Type: "f16", BFloat16Type: "bf16"}.get(type(ta.element_type))
    if et is None or type(tb.element_type) is not type(ta.element_type):
        raise op_error(op, "the wgmma pipeline multiplies f16 or bf16 A and B")
    if not isinstance(tc.element_type, Float32Type) or op.operand_flags:
        raise op_error(op, "the wgmma pipeline accumulates in f32 without operand flags")
    n, k = tb.columns, ta.columns
    if ta.rows != tc.rows or n != tc.columns or k % 16 or n % 8 or n > 256:
        raise op_error(op, f"{ta.rows}x{k} * {tb.rows}x{n}: N must be a multiple of 8 up to 256 "
                           "and K a multiple of 16")
    es = width(ta.element_type) // 8
    nb = lw.plan.blocks
    lw.comment(f"{op.name} {ta.rows}x{n}x{k} -> {nb * k // 16} x wgmma.mma_async.m64n{n}k16.f32.{et}.{et}")
    blocks = _split(c.regs, nb)
    lw.emit(ptx.WgmmaFenceOp())
    for kk in range(k // 16):
        step = kk * 16 * es
        for j in range(nb):
            mma = lw.emit(ptx.WgmmaMmaAsyncOp(f".m64n{n}k16.f32.{et}.{et}",
                                              _desc(lw, a, step + 64 * j * a.row_bytes),
                                              _desc(lw, b, step), blocks[j]))
            blocks[j] = list(mma.outs)
    regs = [r for blk in blocks for r in blk]
    _commit_and_release(lw, 1)
    lw.vmap[op.result] = Frag(op.result.type, regs)


def _commit_and_release(lw: RoleLowering, in_flight: int, groups: int = 1) -> None:
    """Close the batch and wait until at most `in_flight` batches run. The batch issued
    `in_flight` batches earlier is then complete: release the stages of the `groups` groups it
    read, the ones ending `in_flight * groups` before g (the group of the last wait). A dense
    product keeps one batch in flight (stage g - 1 freed); a 2:4 product one (stage g - 1 freed,
    `_unrolled_for`) or none (stage g, or g - 1 and g for a batch of two K steps)."""
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
    _release(lw, lw.wait_group, range(back + groups - 1, back - 1, -1), some)
    lw.released = True


def _release(lw: RoleLowering, g: SSAValue, back, when: SSAValue | None = None) -> None:
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


def _nibbles(lw: RoleLowering, x: SSAValue) -> SSAValue:
    """Four metadata bytes (one chunk each, low nibble significant) -> bytes 0 and 2 of the
    result hold chunks 0|1<<4 and 2|3<<4 (the other bytes are don't-care; `_meta_word` picks
    bytes 0 and 2 with one `prmt`). Three instructions: this runs on the consumers' path from
    one 2:4 batch's `wgmma.wait_group 0` to the next batch's issue, where every instruction
    shows in the kernel's speed."""
    low = lw.inst(ptx.AndOp, ".b32", [x, lw.imm("b32", str(0x0F0F0F0F))], "b32")
    sh = lw.inst(ptx.ShrOp, ".u32", [low, lw.imm("b32", "4")], "b32")
    return lw.inst(ptx.OrOp, ".b32", [low, sh], "b32")


def _meta_word(lw: RoleLowering, e: MetaTile, fam, s: int, block: int = 0,
               into: SSAValue | None = None) -> SSAValue:
    """The sp-meta register of instruction `s` for this thread (ptx-wgmma-sparse.md section 3),
    written into the register `into` if given (`ptx.prmt_into`)."""
    g = lw.sh["g"]
    lane = lw.sh["lane"]
    # rows relative to this consumer's 64 (the MatrixA load already added 64 * consumer rows)
    r0 = lw.inst(ptx.MadOp, ".lo.u32", [lw.sh["warp"], lw.imm("b32", "16"), g], "b32")
    p = lw.inst(ptx.AndOp, ".b32", [lane, lw.imm("b32", "1")], "b32")
    rb = e.row_bytes
    if fam.k == 32 and fam.group == 4:  # f16/bf16: chunks 8s+4p..+3 of rows r and r+8
        col = lw.inst(ptx.MadOp, ".lo.u32", [p, lw.imm("b32", "4"), lw.imm("b32", str(8 * s))], "b32")
        a0 = lw.inst(ptx.MadOp, ".lo.u32", [r0, lw.imm("b32", str(rb)), col], "b32")
        a0 = lw.inst(ptx.AddOp, ".u32", [a0, e.addr], "b32")
        x = lw.emit(ptx.LdOp(".shared.b32", a0, 64 * block * rb, [ptx.B32])).outs[0]
        y = lw.emit(ptx.LdOp(".shared.b32", a0, (64 * block + 8) * rb, [ptx.B32])).outs[0]
    elif fam.k == 64:  # 8-bit types: row r + 8(l&1), chunks 16s + 8((l>>1)&1) + 0..7
        r = lw.inst(ptx.MadOp, ".lo.u32", [p, lw.imm("b32", "8"), r0], "b32")
        h = lw.inst(ptx.ShrOp, ".u32", [lane, lw.imm("b32", "1")], "b32")
        h = lw.inst(ptx.AndOp, ".b32", [h, lw.imm("b32", "1")], "b32")
        col = lw.inst(ptx.MadOp, ".lo.u32", [h, lw.imm("b32", "8"), lw.imm("b32", str(16 * s))], "b32")
        a0 = lw.inst(ptx.MadOp, ".lo.u32", [r, lw.imm("b32", str(rb)), col], "b32")
        a0 = lw.inst(ptx.AddOp, ".u32", [a0, e.addr], "b32")
        x = lw.emit(ptx.LdOp(".shared.b32", a0, 64 * block * rb, [ptx.B32])).outs[0]
        y = lw.emit(ptx.LdOp(".shared.b32", a0, 64 * block * rb + 4, [ptx.B32])).outs[0]
    else:
        raise AssertionError(fam)
    # bytes 0 and 2 of x's pairs, then of y's: x's 16 bits of nibbles low, y's high
    sel = lw.imm("b32", str(0x6420))
    args = [_nibbles(lw, x), _nibbles(lw, y), sel]
    if into is not None:
        return lw.emit(ptx.PrmtIntoOp(".b32", args, into)).out
    return lw.inst(ptx.PrmtOp, ".b32", args, "b32")


def _retire_meta(lw: RoleLowering) -> None:
    """Store the sp-meta words of the batch just retired to the scratch words of shared memory
    (`Plan.scratch_offset`; nothing reads them): a use after the `wgmma.wait_group` that retires
    the batch, so ptxas keeps each word in its register until then (`_unrolled_for`). A store,
    not arithmetic: ptxas may move arithmetic above the wait, but no shared-memory store above
    a `wgmma.wait_group` (the wgmma reads shared memory)."""
    words, lw.live_meta = lw.live_meta, []
    base = lw.inst(ptx.AddOp, ".u32", [lw.sh["smem"], lw.imm("b32", str(lw.plan.scratch_offset))], "b32")
    while words:  # st.shared.v4 / .v2 / scalar, each over the same SCRATCH_BYTES
        n = next(n for n in (4, 2, 1) if n <= len(words))
        lw.emit(ptx.StOp(".shared" + (f".v{n}" if n > 1 else "") + ".b32", base, 0, words[:n]))
        words = words[n:]


def _c_mma_sp(lw: RoleLowering, op: sm.MmaSpOp) -> None:
    a, e, b, c = (lw.vmap[v] for v in (op.a, op.meta, op.b, op.c))
    if not (isinstance(a, SwizzledTile) and isinstance(b, SwizzledTile) and isinstance(e, MetaTile)):
        raise op_error(op, "in a staged kernel A, the metadata and B must come from workgroup buffers")
    fam = op.family()
    if fam.k == 16 or op.trans_a or op.trans_b or op.a_registers is not None:
        raise op_error(op, "the wgmma pipeline does tf32, transposed and register-A sparse "
                           "products not yet (f16, bf16 and 8-bit K-major only)")
    if not isinstance(op.c.type.element_type, Float32Type | IntegerType):
        raise op_error(op, "the wgmma pipeline keeps f32 or s32 accumulators")
    dt, at, bt = op.types()
    n, kk, steps = op.dims()
    sat = ".satfinite" if op.satfinite is not None else ""
    mods = f".m64n{n}k{fam.k}{sat}.{dt}.{at}.{bt}"
    ea = width(op.a.type.element_type) // 8
    nb = lw.plan.blocks
    lw.comment(f"{op.name} {op.c.type.rows}x{n}x{kk} -> {nb * steps} x wgmma.mma_async.sp{mods}")
    into = [None] * (steps * nb)
    if lw.in_flight and lw.part // lw.batch == lw.unroll // lw.batch - 1:
        # the trip's last batch runs on across the back edge: its words go into the carried
        # registers (_unrolled_for)
        first = lw.part % lw.batch * steps * nb
        into = lw.tied[first:first + steps * nb]
    metas = [[_meta_word(lw, e, fam, s, j, into[s * nb + j]) for j in range(nb)] for s in range(steps)]
    imms = ["1"]
    if fam.has_scale:
        imms += [str(op.scale_a), str(op.scale_b)]
    if fam.has_trans:
        imms += ["0", "0"]
    issue = []
    for s in range(steps):
        db = _desc(lw, b, s * fam.k * ea)
        for j in range(nb):
            da = _desc(lw, a, s * (fam.k // 2) * ea + 64 * j * a.row_bytes)
            issue.append((mods, op.sel, ", ".join(imms), da, db, metas[s][j], j))
    if (lw.part + 1) % lw.batch:  # issued with the batch's last iteration (_unrolled_for)
        lw.vmap[op.result] = Deferred(list(c.regs), issue)
        return
    if isinstance(c, Deferred):
        issue = c.issue + issue
    blocks = _split(c.regs, nb)
    lw.emit(ptx.WgmmaFenceOp())
    for mods_, sel, imm, da, db, meta, j in issue:
        mma = lw.emit(ptx.WgmmaMmaAsyncSpOp(mods_, [da], db, meta, sel, blocks[j], imm))
        blocks[j] = list(mma.outs)
    regs = [r for blk in blocks for r in blk]
    # The sp-meta register is read while the instruction runs, and ptxas (13.0) neither tracks
    # it nor injects a wait, so a later metadata word may land in the same physical register.
    # Measured on the H200: with one sparse batch in flight and nothing else done, 14-99% of
    # the outputs were wrong depending on register allocation. So no batch stays in flight,
    # unless the loop keeps each word live until its batch retires (lw.in_flight).
    _commit_and_release(lw, lw.in_flight, len(issue) // (steps * nb))
    if lw.in_flight:
        _retire_meta(lw)
        lw.live_meta = [t[5] for t in issue]
    lw.vmap[op.result] = Frag(op.result.type, regs)


PRODUCER_RULES = {
    AllocWorkgroupOp: _alloc, AsyncCopyOp: _p_copy, AsyncCommitGroupOp: _p_nothing,
    AsyncWaitGroupOp: _p_nothing, scf.ForOp: _staged_for,
}
CONSUMER_RULES = {
    AllocWorkgroupOp: _alloc, AsyncCopyOp: _p_nothing, AsyncCommitGroupOp: _p_nothing,
    AsyncWaitGroupOp: _c_wait, coop.LoadOp: _c_load, coop.StoreOp: _c_store,
    coop.MulAddOp: _c_mul_add, sm.MmaSpOp: _c_mma_sp, coop.CompositeConstructOp: _c_construct,
    scf.ForOp: _staged_for,
}


# ---------------------------------------------------------------------------------------------
# The kernel
# ---------------------------------------------------------------------------------------------


def lower_staged(fn: func.FuncOp, target: str, plan: Plan, options: Options = Options()) -> ptx.KernelOp:
    """The warp-specialized kernel of a staged function (see the module docstring)."""
    name = fn.sym_name.data
    C, S = plan.consumers, plan.stages
    threads = 128 * (C + 1)
    preg, creg = options.budgets(C)
    if preg * 128 + creg * 128 * C > pool(C) or not 24 <= preg <= 256 or not 24 <= creg <= 256:
        raise op_error(fn, f"register budget: {preg} x 128 producer + {creg} x {128 * C} consumer "
                           f"registers must each be 24..256 and fit the {pool(C)} the CTA is "
                           f"launched with ({launch_registers(C)} per thread)")
    schedule = sparse_schedule(plan, options)
    blocks: list[Block] = []
    prologue: list[Operation] = []
    shared: dict = {"consts": {}, "cache": {}}
    entry = Block()
    blocks.append(entry)
    base = KernelLowering(fn, target)
    base.blocks, base.prologue, base.consts, base.cache = blocks, prologue, shared["consts"], shared["cache"]
    base.cur = entry

    params, tmaps, launch_params = [], [], []
    arg_regs: dict[int, SSAValue] = {}
    tmap_regs: dict[int, SSAValue] = {}
    args = list(fn.args)
    scalar_regs: dict[int, SSAValue] = {}
    scalar_params: dict[str, str] = {}
    for i, arg in enumerate(args):
        hint = arg.name_hint or str(i)
        if not isinstance(arg.type, MemRefType):
            pname = f"{name}_param_{hint}"
            params.append(pname)
            ld, scalar_params[pname] = scalar_param(fn, i, arg.type, pname)
            prologue.append(ld)
            scalar_regs[i] = ld.out
            launch_params.append(scalar_param_desc(i, arg.type))
            continue
        if i in plan.sources:
            pname = f"{name}_tmap_{hint}"
            params.append(pname)
            tmaps.append(pname)
            mov = ptx.MovImmOp(".b64", pname, ptx.B64)
            cvta = ptx.CvtaOp(".param.u64", [mov.out], [ptx.B64])
            prologue += [mov, cvta]
            tmap_regs[i] = cvta.outs[0]
            launch_params.append(_tensor_map_param(fn, i, plan))
        if i not in plan.sources or _used_directly(fn, arg):
            pname = f"{name}_param_{hint}"
            params.append(pname)
            ld = ptx.LdParamOp(pname)
            cvta = ptx.CvtaOp(".to.global.u64", [ld.out], [ptx.B64])
            prologue += [ld, cvta]
            arg_regs[i] = cvta.outs[0]
            launch_params.append({"kind": "pointer", "arg": i})

    grid_regs = {}
    if plan.tile_groups:  # persistent: the dispatch grid the tiles come from
        for d in "xy":
            pname = f"{name}_grid_{d}"
            params.append(pname)
            ld = ptx.LdParamOp(pname)
            cvt = ptx.CvtOp(".u32.u64", [ld.out], [ptx.B32])
            prologue += [ld, cvt]
            grid_regs[f"grid_{d}"] = cvt.outs[0]
            launch_params.append({"kind": "grid", "dim": d})
    e = base.inst
    tid = base.special("%tid.x")
    wg = e(ptx.ShrOp, ".u32", [tid, base.imm("b32", "7")], "b32")
    smem = base.emit(ptx.MovImmOp(".u32", f"{name}_dsmem", ptx.B32)).out
    smem = e(ptx.AddOp, ".u32", [smem, base.imm("b32", "1023")], "b32")
    smem = e(ptx.AndOp, ".b32", [smem, base.imm("b32", "-1024")], "b32")
    full = e(ptx.AddOp, ".u32", [smem, base.imm("b32", str(plan.barrier_offset))], "b32")
    empty = e(ptx.AddOp, ".u32", [full, base.imm("b32", str(8 * S))], "b32")
    lane = e(ptx.AndOp, ".b32", [tid, base.imm("b32", "31")], "b32")
    # thread 0 initializes the barriers: full[s] expects the producer's arrival (+ bytes),
    # empty[s] one arrival per consumer warp.
    is0 = e(ptx.SetpOp, ".eq.u32", [tid, base.imm("b32", "0")], "pred")
    init, after = Block(), Block()
    base.emit(ptx.CbraOp(is0, init, after))
    blocks.append(init)
    base.cur = init
    for s in range(S):
        base.emit(ptx.MbarrierInitOp(full, 8 * s, 1))
        base.emit(ptx.MbarrierInitOp(empty, 8 * s, 4 * C * plan.cluster_m))
    base.emit(ptx.FenceMbarrierInitOp())
    base.emit(ptx.BraOp(after))
    blocks.append(after)
    base.cur = after
    if plan.cluster_m > 1:  # the peer may multicast into this CTA once its barriers exist
        base.emit(ptx.BarrierClusterOp())
        rank = base.inst(ptx.AndOp, ".b32", [base.special("%ctaid.y"), base.imm("b32", "1")], "b32")
        peer = base.inst(ptx.XorOp, ".b32", [rank, base.imm("b32", "1")], "b32")
    else:
        base.emit(ptx.BarSyncOp(0))
        rank = peer = None
    if not plan.tile_groups:
        _remap_block_ids(base, options.raster_group, plan.cluster_m)
    is_prod = e(ptx.SetpOp, ".eq.u32", [wg, base.imm("b32", "0")], "pred")
    prod, cons = Block(), Block()
    base.emit(ptx.CbraOp(is_prod, prod, cons))

    # Consumer lane geometry: row = 64*blocks*(wg-1) + 16*warp + g, col = 2*q (wgmma D layout).
    sh = dict(shared, smem=smem, full=full, empty=empty, lane=lane, rank=rank, peer=peer, **grid_regs)

    def role(kind: str, start: Block) -> None:
        blocks.append(start)
        lw = RoleLowering(fn, target, kind, plan, sh, blocks, prologue)
        lw.cur = start
        lw.block_ids = None if plan.tile_groups else base.block_ids  # persistent: per tile
        for i, arg in enumerate(args):
            if i in tmap_regs:
                lw.vmap[arg] = Buf(arg.type, tmap_regs[i], "tensormap")
            if i in arg_regs:
                lw.vmap[arg] = Buf(arg.type, arg_regs[i], "global")
            if i in scalar_regs:
                lw.vmap[arg] = Scalar(arg.type, reg=scalar_regs[i])
        if kind == "producer":
            if C > 1:  # with one consumer the register file is no constraint
                lw.emit(ptx.SetmaxnregOp("dec", preg // 8 * 8))
            not0 = lw.inst(ptx.SetpOp, ".ne.u32", [tid, lw.imm("b32", "0")], "pred")
            work, done = lw.new_block(), lw.new_block()
            lw.emit(ptx.CbraOp(not0, done, work))
            lw.cur = done
            if plan.cluster_m > 1:
                lw.emit(ptx.BarrierClusterOp())
            lw.emit(ptx.RetOp())
            lw.cur = work
        else:
            if C > 1:
                lw.emit(ptx.SetmaxnregOp("inc", creg // 8 * 8))
            c = lw.inst(ptx.SubOp, ".u32", [wg, lw.imm("b32", "1")], "b32")
            ltid = lw.inst(ptx.AndOp, ".b32", [tid, lw.imm("b32", "127")], "b32")
            warp = lw.inst(ptx.ShrOp, ".u32", [ltid, lw.imm("b32", "5")], "b32")
            g = lw.inst(ptx.ShrOp, ".u32", [lane, lw.imm("b32", "2")], "b32")
            q = lw.inst(ptx.AndOp, ".b32", [lane, lw.imm("b32", "3")], "b32")
            row = lw.inst(ptx.MadOp, ".lo.u32", [c, lw.imm("b32", str(64 * plan.blocks)), g], "b32")
            row = lw.inst(ptx.MadOp, ".lo.u32", [warp, lw.imm("b32", "16"), row], "b32")
            col = lw.inst(ptx.ShlOp, ".b32", [q, lw.imm("b32", "1")], "b32")
            lw.sh["acc_row"] = lw.u64(row)
            lw.sh["acc_col"] = lw.u64(col)
            lw.sh.update(consumer=c, warp=warp, g=g)
            lw.batch, lw.in_flight = schedule
            lw.unroll = lw.batch * (1 + lw.in_flight)
        if plan.tile_groups:
            _tile_loop(lw, fn, options.raster_group)
        else:
            lw.lower_ops(fn.body.block)

    role("producer", prod)
    role("consumer", cons)
    first = entry.first_op
    for op in prologue:
        if first is None:
            entry.add_op(op)
        else:
            entry.insert_op_before(op, first)
    types = [a.type for a in fn.args]
    grid = ({"grid": "persistent"} if plan.tile_groups
            else grid_desc(fn.attributes.get(GRID_ATTR), types))
    launch = {"name": name, "block": [threads, 1, 1], **grid,
              **({"cluster": [1, plan.cluster_m, 1]} if plan.cluster_m > 1 else {}),
              "dynamic_shared_bytes": plan.smem_bytes,
              "args": arg_descs([a.name_hint or str(i) for i, a in enumerate(fn.args)], types),
              "params": launch_params}
    return ptx.KernelOp(name, params, blocks, None, types,
                        maxntid=[threads, 1, 1], tensor_maps=tmaps,
                        dynamic_shared=plan.smem_bytes, launch=json.dumps(launch),
                        cluster=[1, plan.cluster_m, 1] if plan.cluster_m > 1 else None,
                        scalar_params=scalar_params)


def _tile_loop(lw: RoleLowering, fn: func.FuncOp, raster_group: int) -> None:
    """A persistent CTA's role: `for (t = ctaid.x, n = 0; t < X * Y; t += nctaid.x, n++)` over
    the dispatch grid's tiles (X, Y: the `grid` parameters), each the function body with the
    workgroup ids of tile t (remapped as `_remap_block_ids`) and its groups numbered after the
    n * G of the CTA's earlier tiles; then the function's return."""
    e = lw.inst
    nx, ny = lw.sh["grid_x"], lw.sh["grid_y"]
    total = e(ptx.MulOp, ".lo.u32", [nx, ny], "b32")
    header = lw.new_block(["b32", "b32"])
    lw.emit(ptx.BraOp(header, [lw.special("%ctaid.x"), lw.imm("b32", "0")]))
    lw.cur = header
    t, n = header.args
    body, exit_ = lw.new_block(), Block()
    lw.emit(ptx.CbraOp(e(ptx.SetpOp, ".ge.u32", [t, total], "pred"), exit_, body))
    lw.cur = body
    _remap_block_ids(lw, raster_group, 1, (t, nx, ny))
    lw.goff = e(ptx.MulOp, ".lo.u32", [n, lw.imm("b32", str(lw.plan.tile_groups))], "b32")
    lw.rotation = lw.mod_stages(lw.goff)
    ret = fn.body.block.last_op
    for op in fn.body.block.ops:
        if op is not ret:
            lw.lower_op(op)
    nt = e(ptx.AddOp, ".u32", [t, lw.special("%nctaid.x")], "b32")
    nn = e(ptx.AddOp, ".u32", [n, lw.imm("b32", "1")], "b32")
    lw.emit(ptx.BraOp(header, [nt, nn]))
    lw.blocks.append(exit_)
    lw.cur = exit_
    lw.goff = None
    lw.lower_op(ret)


def _used_directly(fn: func.FuncOp, arg: SSAValue) -> bool:
    return any(not isinstance(u.operation, AsyncCopyOp) or u.index != 0 for u in arg.uses)


def _tensor_map_param(fn: func.FuncOp, i: int, plan: Plan) -> dict:
    t = fn.args[i].type
    copies = [u.operation for u in fn.args[i].uses if isinstance(u.operation, AsyncCopyOp)]
    stride = _const(copies[0].source_stride)
    es = width(t.element_type) // 8
    total = t.element_count()
    if total % stride:
        raise op_error(copies[0], f"the source stride {stride} does not divide the argument's "
                                  f"{total} elements (no 2-D tensor map)")
    rows, cols = plan.boxes[i]
    if i in plan.multicast:  # each CTA of the pair copies half of the box to both
        rows //= plan.cluster_m
    f = plan.packed.get(i, 1)
    rows, cols, stride = rows // f, cols * f, stride * f
    dt = _tensor_map_type(t.element_type)
    if dt is None:
        raise op_error(copies[0], f"no tensor map data type for {t.element_type}")
    return {"kind": "tensor_map", "arg": i, "data_type": dt,
            "global_dims": [stride, total // stride], "global_strides": [stride * es],
            "box_dims": [cols, rows], "element_strides": [1, 1], "interleave": "NONE",
            "swizzle": f"{plan.swizzle[i]}B" if plan.swizzle[i] else "NONE",
            "l2_promotion": "L2_256B", "oob_fill": "NONE"}


def _remap_block_ids(lw: KernelLowering, group: int, cluster_m: int = 1,
                     tile: tuple[SSAValue, SSAValue, SSAValue] | None = None) -> None:
    """Workgroup ids (x, y) in grouped order: `group` consecutive y rows share each sweep of x.
    With clusters of `cluster_m` along y, whole clusters are remapped (the pair keeps x and
    consecutive y). `tile`: (linear tile index, grid x, grid y) of a persistent CTA's tile
    instead of the CTA's own ids."""
    e = lw.inst
    if tile is not None:
        lin, nx, ny = tile
    else:
        x, y = lw.special("%ctaid.x"), lw.special("%ctaid.y")
        nx, ny = lw.special("%nctaid.x"), lw.special("%nctaid.y")
    if cluster_m > 1:
        sh = lw.imm("b32", str(cluster_m.bit_length() - 1))
        y = e(ptx.ShrOp, ".u32", [y, sh], "b32")
        ny = e(ptx.ShrOp, ".u32", [ny, sh], "b32")
        group = max(1, group // cluster_m)
    if tile is None:
        lin = e(ptx.MadOp, ".lo.u32", [y, nx, x], "b32")
    per = e(ptx.MulOp, ".lo.u32", [nx, lw.imm("b32", str(group))], "b32")
    gid = e(ptx.DivOp, ".u32", [lin, per], "b32")
    first = e(ptx.MulOp, ".lo.u32", [gid, lw.imm("b32", str(group))], "b32")
    rows = e(ptx.SubOp, ".u32", [ny, first], "b32")
    rows = e(ptx.MinOp, ".u32", [rows, lw.imm("b32", str(group))], "b32")
    inner = e(ptx.RemOp, ".u32", [lin, per], "b32")
    ry = e(ptx.AddOp, ".u32", [first, e(ptx.RemOp, ".u32", [inner, rows], "b32")], "b32")
    rx = e(ptx.DivOp, ".u32", [inner, rows], "b32")
    if cluster_m > 1:
        rank = e(ptx.AndOp, ".b32", [lw.special("%ctaid.y"), lw.imm("b32", str(cluster_m - 1))], "b32")
        ry = e(ptx.MadOp, ".lo.u32", [ry, lw.imm("b32", str(cluster_m)), rank], "b32")
    lw.block_ids = {"x": lw.u64(rx), "y": lw.u64(ry)}


def _block_id(lw: RoleLowering, op: cgpu.BlockIdOp) -> None:
    ids = lw.block_ids
    if ids is not None and op.dim in ids:
        lw.vmap[op.result] = Scalar(IndexType(), reg=ids[op.dim])
        return
    RULES[cgpu.BlockIdOp](lw, op)


def _return(lw: RoleLowering, op: func.ReturnOp) -> None:
    if lw.plan.cluster_m > 1:  # neither CTA of a pair leaves while the other may still write to it
        lw.emit(ptx.BarrierClusterOp())
    RULES[func.ReturnOp](lw, op)


PRODUCER_RULES[func.ReturnOp] = _return
CONSUMER_RULES[func.ReturnOp] = _return
PRODUCER_RULES[cgpu.BlockIdOp] = _block_id
CONSUMER_RULES[cgpu.BlockIdOp] = _block_id


def workgroup_size_of(fn: func.FuncOp) -> list[int] | None:
    attr = fn.attributes.get("coop.workgroup_size")
    if isinstance(attr, DenseArrayBase):
        return [int(x) for x in attr.get_values()]
    return None
