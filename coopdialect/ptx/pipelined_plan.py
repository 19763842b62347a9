"""The analysis of a staged kernel for the warp-specialized wgmma pipeline (`pipelined.py`):
whether it applies (`analyze`, None for a kernel without staged ops, a one-line refusal on the
offending op for one it cannot lower), and the `Plan` it lowers by: stages, consumer
warpgroups, the shared-memory layout (buffers, barriers, scratch words), the TMA boxes,
swizzles, packing and multicast of the copied arguments, the static group numbering; the
register budgets of the roles (`Options`, `pool`) and the consumers' 2:4 schedule
(`sparse_schedule`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, SSAValue

from coopdialect.dialects import coop
from coopdialect.dialects import sparse_mma as sm
from coopdialect.dialects import gpu as cgpu
from coopdialect.dialects.coop import Layout, Scope, Use
from coopdialect.dialects.coop_async import (
    AllocWorkgroupOp,
    AsyncCommitGroupOp,
    AsyncCopyOp,
    AsyncCopyTensorOp,
    AsyncWaitGroupOp,
    is_workgroup,
)
from coopdialect.dialects.tensor_addr import ClampMode
from coopdialect.errors import CoopError
from coopdialect.index_facts import divides
from coopdialect.ptx.host_values import LayoutFields, layout_fields
from coopdialect.ptx.kernel_lowering import max_shared_bytes, width

COPIES = (AsyncCopyOp, AsyncCopyTensorOp)
"""The asynchronous copies the pipeline turns into bulk tensor copies (TMA)."""



STAGES_ATTR = "coop.pipeline_stages"


SHARED_LIMIT = max_shared_bytes("sm_90a")  # bytes of shared memory per CTA on sm_90 (227 KB)


SCRATCH_BYTES = 16  # after the barriers: one st.shared.v4.b32 of retired sp-meta words


_THREAD_IDS = (cgpu.ThreadIdOp, cgpu.SubgroupIdOp, cgpu.LaneIdOp, cgpu.GlobalIdOp, cgpu.NumSubgroupsOp,
               cgpu.BlockDimOp)


@dataclass(frozen=True)
class Options:
    """Knobs of the lowering (pass options of convert-coop-to-ptx)."""

    producer_registers: int = 40
    consumer_registers: int = 0  # 0: the most that fits beside the producer, at most 232
    raster_group: int = 16
    cluster_m: int = 1  # CTAs per cluster along workgroup y; 2 multicasts the tiles they share
    # K steps of a 2:4 product per wgmma-group (commit_group; pipelined_loop._unrolled_for)
    sparse_batch: int = 1
    sparse_in_flight: int = 1  # 2:4 batches left running at each wgmma.wait_group (0 or 1)
    persistent: bool = False  # one CTA per SM loops over the tiles (tile_loop)
    bulk_copies: bool = True  # op by op: bulk tensor copies where they can (staged_tma.py)

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
    scratch_offset: int  # bytes: where consumers store retired sp-meta words (retire_meta)
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
    persistent: bool = False  # one CTA per multiprocessor loops over the tiles (tile_loop)
    tile_groups: int | None = None  # persistent: the groups one tile fills (None: run time)
    # args copied through tensor layouts -> the layout's host-side fields (the tensor map's
    # dims and strides, computed at launch from the scalar arguments)
    tensor_layouts: dict[int, LayoutFields] = field(default_factory=dict)


def buffer_bytes(t: MemRefType) -> int:
    """Bytes of a workgroup buffer (its S stages together)."""
    return width(t.element_type) // 8 * t.element_count()


def _tensor_copy_fields(cp: AsyncCopyTensorOp) -> LayoutFields:
    """The layout of a tensor copy as a bulk tensor copy sees it, or the refusal: a 2-D layout
    of block size 1 whose innermost stride is 1, whose dimensions and outer stride the host can
    compute from the scalar arguments (coopdialect.ptx.host_values), whose span is the copied
    box, and whose out-of-bounds elements are the hardware's zero fill (clamp mode Constant with
    clampValue 0) or undefined (Undefined)."""
    f = layout_fields(cp.layout)
    rows, cols = cp.box
    if f is None:
        raise _refuse(cp, "the copy's tensor layout must come from tensor_addr ops (create, set, "
                          "slice) the compiler can follow")
    if len(f.dimension) != 2:
        raise _refuse(cp, f"a tensor copy through a {len(f.dimension)}-D layout is not lowered "
                          "(2-D layouts are bulk tensor copies)")
    if f.mode == ClampMode.Constant and f.clamp_value != 0:
        raise _refuse(cp, f"clamp mode Constant with clampValue {f.clamp_value!r}: a bulk tensor "
                          "copy fills out-of-bounds elements with 0 (use clampValue 0)")
    if f.mode not in (ClampMode.Constant, ClampMode.Undefined):
        raise _refuse(cp, f"clamp mode {f.mode.value} is not a bulk tensor copy (which fills "
                          "out-of-bounds elements with 0); use Constant with clampValue 0")
    if f.block_size != (1, 1):
        raise _refuse(cp, f"block sizes {f.block_size}: a bulk tensor copy reads blocks of 1")
    if f.stride[1] != 1:
        raise _refuse(cp, f"the innermost stride must be 1 (contiguous rows), got {f.stride[1]!r}")
    if f.span != (rows, cols):
        raise _refuse(cp, f"the layout's span {f.span} must be the copied {rows}x{cols} box")
    if None in f.dimension or f.stride[0] is None:
        raise _refuse(cp, "the layout's dimensions and row stride must be computed by arith ops "
                          "from constants and the kernel's integer scalar arguments (the host "
                          "encodes the tensor map from them at launch)")
    return f


def _refuse(op: Operation, why: str):
    # a CoopError: `file:line:col: error: ...` at the op (the staged loop's location); the
    # dispatcher lowers the kernel op by op instead where it can (lower.py)
    return CoopError(op, f"the staged form's warp-specialized wgmma pipeline (sm_90a): {why}")


def analyze(fn: func.FuncOp, target: str, cluster_m: int = 1, persistent: bool = False) -> Plan | None:
    """The plan for a staged kernel, None for a kernel without staged ops; raises the one-line
    diagnostic (on the offending op) for a staged kernel this lowering cannot do."""
    staged = [op for op in fn.walk() if isinstance(op, AllocWorkgroupOp | AsyncCopyOp |
                                                    AsyncCopyTensorOp |
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
    copies = [op for op in staged if isinstance(op, COPIES)]
    args = list(fn.args)
    tensor_layouts: dict[int, LayoutFields] = {}
    boxes: dict[int, tuple[int, int]] = {}
    role = _buffer_roles(fn)
    swizzle: dict[int, int] = {}
    for cp in copies:
        if cp.source not in args:
            raise _refuse(cp, "the copy source must be a kernel argument")
        i = args.index(cp.source)
        if not cp.source.type.has_static_shape() and not isinstance(cp, AsyncCopyTensorOp):
            raise _refuse(cp, f"the copy source {cp.source.type} has a dynamic size; a copy by "
                              "offset and stride reads it as rows of its static shape (copy it "
                              "through a tensor layout sized by scalar arguments instead)")
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
        if isinstance(cp, AsyncCopyTensorOp):
            fields = _tensor_copy_fields(cp)
            if tensor_layouts.setdefault(i, fields) != fields:
                raise _refuse(cp, "all tensor copies of one argument must use one layout's "
                                  "dimensions, strides and clamp mode")
            if constant_of(cp.destination_stride) != cols:
                raise _refuse(cp, "needs a destination row pitch equal to the box's cols")
        elif constant_of(cp.source_stride) is None or constant_of(cp.destination_stride) != cols:
            raise _refuse(cp, "needs a constant source stride and a destination row pitch equal "
                              "to the box's cols")
        elif i in tensor_layouts or any(isinstance(o, AsyncCopyTensorOp) and o.source is cp.source
                                        for o in copies):
            raise _refuse(cp, "an argument is copied either through tensor layouts or by offset "
                              "and stride, not both")
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
        size = buffer_bytes(b.result.type)
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
                sorted(boxes), boxes, swizzle, args=args, blocks=blocks,
                tensor_layouts=tensor_layouts)
    _number_groups(fn, plan)
    if cluster_m not in (1, 2):
        raise _refuse(loop, f"cluster-m must be 1 or 2, got {cluster_m}")
    plan.cluster_m = cluster_m
    if persistent:
        if cluster_m != 1:
            raise _refuse(loop, "a persistent kernel runs without clusters (cluster-m 1)")
        plan.persistent = True
        plan.tile_groups = _tile_groups(plan)
    if cluster_m == 2:
        if tensor_layouts:
            raise _refuse(loop, "cluster-m 2 multicasts copies by offset and stride; tensor "
                                "copies are not multicast (cluster-m 1)")
        for cp in copies:
            i = args.index(cp.source)
            if not _depends_on_block_y(cp.source_offset) and cp.rows.data % 16 == 0:
                plan.multicast.add(i)
        for cp in copies:  # every copy of a multicast argument must be shareable
            i = args.index(cp.source)
            if i in plan.multicast and _depends_on_block_y(cp.source_offset):
                plan.multicast.discard(i)
    for i, (rows, cols) in boxes.items():
        if i in tensor_layouts:
            continue
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
    if swz or any(constant_of(cp.source_stride) != cols for cp in copies):
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


def _conflicting_uses(load: coop.LoadOp) -> bool:
    """A workgroup-buffer load must feed wgmma operands only (or only sparsity metadata)."""
    kinds = {use_kind(u) for u in load.result.uses}
    return None in kinds or len(kinds) > 1


def use_kind(u) -> str | None:
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
            kinds = {use_kind(u) for u in op.result.uses} - {None}
            if kinds:
                roles[op.pointer.owner] = next(iter(kinds))
    return roles


def constant_of(v: SSAValue) -> int | None:
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
            elif isinstance(op, COPIES):
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
                if after_loop[0] and reads_workgroup_after(op):
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
            elif any(isinstance(o, (*COPIES, AsyncCommitGroupOp, AsyncWaitGroupOp))
                     for r in op.regions for b in r.blocks for o in b.walk()):
                raise _refuse(op, "async copies are allowed only at the kernel's top level, in "
                                  "scf.if and in the staged loop")
            if after_loop[0] and isinstance(op, (*COPIES, AsyncCommitGroupOp)) and not in_loop:
                raise _refuse(op, "no async copies may follow the staged loop")

    after_loop = [False]
    visit(fn.body.block, False, [0], 0)


def reads_workgroup_after(op: Operation) -> bool:
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


def _tile_groups(plan: Plan) -> int | None:
    """The groups one tile fills (its trip count T; None when the bounds are run-time values),
    for the persistent tile loop, where the barriers' phases count the groups of all the CTA's
    tiles (group k of a tile is k plus the groups of the CTA's earlier tiles). That needs the
    form pipeline-coop-loads writes: iteration i waiting for group i, prologue groups that
    carry data only below T (below a constant T, or guarded by `lb + k * step < ub`), and the
    loop's own copies (group P + i) guarded by `iv + P * step < ub` — so that exactly the groups
    0 .. T-1 carry data, each once."""
    loop = plan.loop
    lb, ub, step = (constant_of(v) for v in (loop.lb, loop.ub, loop.step))
    trips = None
    if None not in (lb, ub, step):
        if step <= 0 or ub <= lb:
            raise _refuse(loop, "a persistent kernel needs a staged loop that runs")
        trips = -(-(ub - lb) // step)
    elif step is None or step <= 0:
        raise _refuse(loop, "a persistent kernel needs a staged loop of constant positive step")
    iv = loop.body.block.args[0]
    for op, (base, per) in plan.group_of.items():
        if isinstance(op, AsyncWaitGroupOp) and per and base != 0:
            raise _refuse(op, "a persistent kernel needs iteration i to wait for group i")
        if isinstance(op, COPIES) and not per:
            if trips is not None and base >= trips:
                raise _refuse(op, f"a persistent kernel's prologue may fill only the {trips} "
                                  "groups its loop reads")
            if trips is None and not isinstance(op.parent_op(), scf.IfOp):
                raise _refuse(op, "a persistent kernel with a run-time trip count needs its "
                                  "prologue copies guarded by `lb + k * step < ub` (the form "
                                  "pipeline-coop-loads writes)")
        if isinstance(op, COPIES) and per:
            guard = op.parent_op()
            cmp = guard.cond.owner if isinstance(guard, scf.IfOp) else None
            add = cmp.lhs.owner if isinstance(cmp, arith.CmpiOp) else None
            ok = (isinstance(add, arith.AddiOp) and _predicate(cmp) in ("slt", "ult")
                  and (cmp.rhs is loop.ub or (ub is not None and constant_of(cmp.rhs) == ub))
                  and {add.lhs, add.rhs} & {iv}
                  and constant_of(add.rhs if add.lhs is iv else add.lhs) == base * step)
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


def _unrollable_trips(plan: Plan) -> int | None:
    """The staged loop's trip count where the consumers may run several of its iterations per
    trip of their loop: a constant trip count and exactly one `sparse_mma.mma_sp` in the loop (no
    `coop.mul_add`), accumulating into a loop-carried value that only the yield uses. None
    otherwise."""
    loop = plan.loop
    lb, ub, step = (constant_of(v) for v in (loop.lb, loop.ub, loop.step))
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
