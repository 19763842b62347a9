"""`pipeline-coop-loads{stages=S}`: stage a loop's global matrix loads through workgroup memory and
software-pipeline them (docs/staging.md).

One rewrite, `StageLoopLoads`, applied to every `scf.for`, innermost loops first. For a loop

```
scf.for %i = %lb to %ub step %st iter_args(...) {
  ...  %m = coop.load %A[off(%i)], %s, RowMajor|ColumnMajor : memref<...> -> !M  ...
}
```

each *staged* load gets a workgroup buffer of S slots (`coop.alloc_workgroup` at the kernel's
entry; slot k at element k*rows*cols), and the loop becomes

```
for k in 0 .. S-2:        [scf.if lb + k*st < ub]  copies of iteration k -> slot k;   commit
scf.for %i ... {coop.pipeline_stages = S} {
  coop.async_wait_group S-2                         // iteration t = (i-lb)/st has landed
  scf.if i + (S-1)*st < ub { copies of iteration t+S-1 -> slot (t+S-1) mod S }
  coop.async_commit_group
  %m = coop.load %W[(t mod S) * rows*cols], cols, <same layout>      (for each staged load)
  ...                                               // the body, unchanged
}
coop.async_wait_group 0
```

The refill is issued before the body, so that it lands while the body computes: S - 1 copies
are in flight during iteration t (t+1 .. t+S-1), and even S = 2 overlaps one copy with each
iteration. Slot (t+S-1) mod S is slot (t-1) mod S, which iteration t does not read, and the
wait before it is a workgroup barrier: every invocation has finished iteration t-1's reads of
it.

A RowMajor RxC load with stride s is the box rows=R, cols=C of its memref; a ColumnMajor one the
box rows=C, cols=R (a column of the matrix is a row of the box); the slot keeps the box with row
pitch = cols, so the slot load uses the same layout with stride = cols and reads the same
elements. The copy of iteration j evaluates the load's offset at i = lb + j*st by cloning the
ops of the loop body that compute it.

Which loads qualify (the others, and loops with none, are left alone; the pass never fails on
valid IR):

* a `coop.load` directly in the loop body (run every iteration), RowMajor or ColumnMajor, from a
  kernel argument in global memory that nothing in the loop may write (no store to it, and no op
  of unknown effect in the loop);
* its stride is defined outside the loop; its offset is computed by `arith` ops of the loop body
  from the induction variable, constants and values defined outside the loop;
* the copies are workgroup-collective, so every value they use, the loop bounds and the
  conditions of the enclosing scf.if/scf.for must be the same in all invocations of the
  workgroup: built by `arith` from constants, kernel arguments, `gpu.block_id`/`grid_dim`/
  `block_dim`/`num_subgroups`/`subgroup_size` and the induction variables of such loops
  (a subgroup- or invocation-dependent offset is not staged).

Proof: tests/test_pipeline_coop_loads.py runs random kernels through the interpreter before and
after the pass and compares every output bit for bit (the interpreter raises on a read of a copy
that has not landed, so a wrong wait count fails the test, not just a wrong number).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NoneAttr,
)
from xdsl.dialects.builtin import LocationAttr as Location
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import is_side_effect_free

from coopdialect.errors import CoopError, warn
from coopdialect.dialects import coop, coop_async, coop_nv2, gpu, sparse_mma
from coopdialect.dialects import tensor_addr as ta

STAGES_ATTR = "coop.pipeline_stages"
"""Set on a staged scf.for: `{coop.pipeline_stages = S : i64}`, for the backends."""

_UNIFORM_IDS = (gpu.BlockIdOp, gpu.GridDimOp, gpu.BlockDimOp, gpu.NumSubgroupsOp,
                gpu.SubgroupSizeOp)
_READ_ONLY = (coop.LoadOp, memref.LoadOp, coop_nv2.LoadTensorOp)
_VALUE_OPS = (sparse_mma.MmaSpOp, sparse_mma.CompressOp, sparse_mma.DecompressOp)
_STORES = (coop.StoreOp, memref.StoreOp, coop_nv2.StoreTensorOp)
_STAGEABLE = (coop.Layout.RowMajor, coop.Layout.ColumnMajor)
_PRODUCTS = (coop.MulAddOp, sparse_mma.MmaSpOp)


# --------------------------------------------------------------------------------------------
# Analysis
# --------------------------------------------------------------------------------------------


def _inside(op: Operation | None, loop: scf.ForOp) -> bool:
    while op is not None:
        if op is loop:
            return True
        op = op.parent_op()
    return False


def _defined_outside(v: SSAValue, loop: scf.ForOp) -> bool:
    owner = v.owner.parent_op() if isinstance(v, BlockArgument) else v.owner
    return not _inside(owner, loop)


def is_uniform(v: SSAValue) -> bool:
    """Whether `v` is provably the same in every invocation of the workgroup (module docstring)."""
    if isinstance(v, BlockArgument):
        parent = v.owner.parent_op()
        if isinstance(parent, func.FuncOp):
            return True
        if isinstance(parent, scf.ForOp) and v.index == 0:  # the induction variable
            return all(is_uniform(x) for x in (parent.lb, parent.ub, parent.step))
        return False
    op = v.owner
    if isinstance(op, (arith.ConstantOp, *_UNIFORM_IDS)):
        return True
    if _pure_value_op(op):
        return all(is_uniform(x) for x in op.operands)
    return False


def _pure_value_op(op: Operation) -> bool:
    """An `arith` or `tensor_addr` op without regions or side effects: a copy issued ahead may
    recompute it."""
    return op.name.startswith(("arith.", "tensor_addr.")) and not op.regions and \
        is_side_effect_free(op)


def _uniform_control(loop: scf.ForOp) -> bool:
    """The loop and every region around it (up to the kernel) run in all invocations alike."""
    if not all(is_uniform(x) for x in (loop.lb, loop.ub, loop.step)):
        return False
    p = loop.parent_op()
    while not isinstance(p, func.FuncOp):
        if isinstance(p, scf.ForOp):
            if not all(is_uniform(x) for x in (p.lb, p.ub, p.step)):
                return False
        elif isinstance(p, scf.IfOp):
            if not is_uniform(p.cond):
                return False
        else:
            return False
        p = p.parent_op()
    return True


def _written_memrefs(loop: scf.ForOp) -> set[SSAValue] | None:
    """The memrefs stores in the loop may write; None if an op of unknown effect is in it (or
    it is already staged)."""
    written: set[SSAValue] = set()
    for op in loop.body.walk():
        if isinstance(op, _STORES):
            written.add(op.memref if isinstance(op, memref.StoreOp) else op.pointer)
        elif isinstance(op, (scf.ForOp, scf.IfOp, scf.YieldOp, *_READ_ONLY, *_VALUE_OPS)):
            continue
        elif op.regions or not is_side_effect_free(op):
            return None  # a barrier, a call, an async op, ...: keep away
    return written


def _offset_slice(v: SSAValue, loop: scf.ForOp) -> list[Operation] | None:
    """The ops of the loop body that compute `v` (in block order), or None if `v` is not an
    `arith` / `tensor_addr` function of the induction variable and loop-invariant uniform
    values."""
    body = loop.body.block
    ops: set[Operation] = set()
    stack = [v]
    while stack:
        x = stack.pop()
        if x is body.args[0]:
            continue
        if _defined_outside(x, loop):
            if not is_uniform(x):
                return None
            continue
        op = x.owner
        if not isinstance(op, Operation) or op.parent_block() is not body:
            return None  # an iter_arg, or a value of a nested region
        if not _pure_value_op(op):
            return None
        if op not in ops:
            ops.add(op)
            stack.extend(op.operands)
    return [op for op in body.ops if op in ops]


@dataclass
class _Staged:
    """One load to stage: the copied box (rows x cols), the slice of loop-body ops computing its
    offset (plain load) or layout (tensor load), its buffer, and how the matrix is read back
    from a slot (the layout of the slot load; its stride is always `cols`)."""

    load: coop.LoadOp | coop_nv2.LoadTensorOp
    rows: int
    cols: int
    slice: list[Operation]
    layout: coop.Layout
    buffer: SSAValue | None = None

    @property
    def slot(self) -> int:
        return self.rows * self.cols


_LOADS = (coop.LoadOp, coop_nv2.LoadTensorOp)


def _global_argument(op: coop.LoadOp | coop_nv2.LoadTensorOp, kernel: func.FuncOp) -> bool:
    """Whether `op` loads from a kernel argument in global memory (what a copy may read)."""
    p = op.pointer
    if not (isinstance(p, BlockArgument) and p.owner is kernel.body.block):
        return False
    space = p.type.memory_space
    return isinstance(space, NoneAttr) or space == coop.StorageClassAttr(
        coop.StorageClass.StorageBuffer)


def _static_span(layout: SSAValue, _depth: int = 0) -> tuple[int, ...] | None:
    """The span of tensor layout value `layout` when the op that last set it had constant
    operands (OpTensorLayoutSliceNV's Size operands, OpTensorLayoutSetDimensionNV's Dim)."""
    owner = layout.owner
    if isinstance(owner, ta.LayoutConstantOp):
        return tuple(owner.state.span)
    if isinstance(owner, ta.CreateLayoutOp):
        return (0,) * owner.result.type.rank
    if _depth > 1000 or not isinstance(owner, ta.LAYOUT_SET_OPS):
        return None
    if isinstance(owner, ta.LayoutSliceOp):
        spans = [ta.const_u32(v) for v in owner.values[1::2]]
        return None if None in spans else tuple(spans)
    if isinstance(owner, ta.LayoutSetDimensionOp):
        dims = [ta.const_u32(v) for v in owner.values]
        return None if None in dims else tuple(dims)
    return _static_span(owner.input, _depth + 1)


def _view_permutation(op: coop_nv2.LoadTensorOp) -> tuple[int, ...] | str:
    """The permutation of the load's tensor view when the view only permutes the layout's
    dimensions (hasDimensions false, no clip, no set ops) and leaves all but the last two in
    place, else why it is not staged."""
    vt, lt = op.view.type, op.layout.type
    state = ta.constant_view_state(op.view)
    rank = getattr(lt, "rank", 0)
    if (not isinstance(vt, ta.TensorViewType) or vt.has_dims or vt.rank != rank
            or state != ta.ViewState.create(rank)):
        return ("its tensor view does more than permute the layout's dimensions (dimensions, "
                "strides or a clip): only a plain view or one that swaps the last two "
                "dimensions is staged")
    ident = tuple(range(rank))
    if tuple(vt.perm) not in (ident, ident[:-2] + (rank - 1, rank - 2)):
        return (f"its tensor view permutes the dimensions as {tuple(vt.perm)}: only a plain view "
                "or one that swaps the last two dimensions is staged")
    return tuple(vt.perm)


def _stage(op: coop.LoadOp | coop_nv2.LoadTensorOp, loop: scf.ForOp) -> _Staged | str:
    """How to stage global load `op` of `loop`'s body, or why it cannot be."""
    m = op.result.type
    assert isinstance(m, coop.MatrixType)
    if isinstance(op, coop.LoadOp):
        if op.layout.data not in _STAGEABLE:
            return f"{op.layout.data.value} loads are not staged (RowMajor and ColumnMajor are)"
        if not _defined_outside(op.stride, loop) or not is_uniform(op.stride):
            return "its stride is not a loop-invariant value uniform over the workgroup"
        sl = _offset_slice(op.offset, loop)
        if sl is None:
            return ("its offset is not computed by arith ops from the induction variable and "
                    "loop-invariant values uniform over the workgroup")
        rows, cols = (m.rows, m.columns) if op.layout.data == coop.Layout.RowMajor else \
            (m.columns, m.rows)
        return _Staged(op, rows, cols, sl, op.layout.data)
    if op.decode_func is not None:
        return "a load with a DecodeFunc is not staged (a copy does not call functions)"
    sl = _offset_slice(op.layout, loop)
    if sl is None:
        return ("its tensor layout is not computed by arith/tensor_addr ops from the induction "
                "variable and loop-invariant values uniform over the workgroup")
    perm = None if op.view is None else _view_permutation(op)
    if isinstance(perm, str):
        return perm
    if perm is None or perm == tuple(sorted(perm)):
        # the copy reads each element through the layout exactly as the load does
        return _Staged(op, m.rows, m.columns, sl, coop.Layout.RowMajor)
    # a view swapping the last two dimensions reads matrix (r, c) from span coordinate
    # (0, ..., 0, c, r) when the span is 1 x ... x 1 x columns x rows (matrixCoordToTensor-
    # ElementWithView: the linear index r*cols + c splits in the view's order): the copy takes
    # the span as it lies (no view: (i, j) -> (0, ..., 0, i, j)) and the slot is read
    # column-major
    want = (1,) * (len(perm) - 2) + (m.columns, m.rows)
    if _static_span(op.layout) != want:
        return (f"its transposing view reads a {m.rows}x{m.columns} matrix from a layout whose "
                f"span is not the constant {'x'.join(map(str, want))}")
    return _Staged(op, m.columns, m.rows, sl, coop.Layout.ColumnMajor)


def _stageable_loads(loop: scf.ForOp) -> tuple[list[_Staged], list[tuple[Operation, str]]]:
    """The global matrix loads of `loop` to stage, and the others with why each is not staged
    (loads in a nested loop belong to that loop)."""
    kernel = loop.parent_op()
    while not isinstance(kernel, func.FuncOp):
        kernel = kernel.parent_op()
    loads = [op for op in loop.body.walk() if isinstance(op, _LOADS)
             and _global_argument(op, kernel) and _innermost_loop(op) is loop]
    if not any(isinstance(op, _PRODUCTS) for op in loop.body.walk()):
        return [], []  # no matrix product for the copies to overlap with: nothing to gain
    written = _written_memrefs(loop)
    if written is None:
        why = ("the loop holds an op of unknown memory effect (a barrier, a call, an "
               "asynchronous copy, ...), which a copy issued ahead could race with")
        return [], [(op, why) for op in loads]
    if not _uniform_control(loop):
        why = ("the loop's bounds, or a loop or condition around it, may differ between the "
               "invocations of a workgroup, and the copies are workgroup-collective")
        return [], [(op, why) for op in loads]
    found, refused = [], []
    for op in loads:
        if op.parent_block() is not loop.body.block:
            refused.append((op, "it is inside an scf.if (a copy issued ahead must be needed on "
                                "every iteration)"))
        elif op.pointer in written:
            refused.append((op, "the loop stores to the same memref"))
        else:
            how = _stage(op, loop)
            (refused.append((op, how)) if isinstance(how, str) else found.append(how))
    return found, refused


def _innermost_loop(op: Operation) -> scf.ForOp | None:
    p = op.parent_op()
    while p is not None and not isinstance(p, scf.ForOp):
        p = p.parent_op()
    return p


# --------------------------------------------------------------------------------------------
# Rewrite
# --------------------------------------------------------------------------------------------


class _Builder:
    """Appends ops at one insertion point; `index(n)` gives an index constant, made once per
    kernel at its entry (the `constants` dict shared by the builders of one rewrite)."""

    def __init__(self, rewriter: PatternRewriter, point: InsertPoint,
                 constants: tuple[InsertPoint, dict[int, SSAValue]], loc: Location):
        self.rewriter, self.point, self.constants, self.loc = rewriter, point, constants, loc

    def add(self, op: Operation, loc: Location | None = None) -> Operation:
        op.location = loc or self.loc  # diagnostics point at the loop (or the load) staged
        return self.rewriter.insert(op, self.point)

    def at(self, point: InsertPoint) -> _Builder:
        return _Builder(self.rewriter, point, self.constants, self.loc)

    def index(self, n: int) -> SSAValue:
        point, made = self.constants
        if n not in made:
            c = arith.ConstantOp(IntegerAttr(n, IndexType()))
            c.location = self.loc
            made[n] = self.rewriter.insert(c, point).results[0]
        return made[n]

    def affine(self, base: SSAValue, step: SSAValue, k: int) -> SSAValue:
        """base + k*step, folded where the operands are constants."""
        b, st = coop.constant_int(base), coop.constant_int(step)
        if b is not None and st is not None:
            return self.index(b + k * st)
        if k == 0:
            return base
        scaled = self.index(k * st) if st is not None else self.binop(arith.MuliOp, step,
                                                                        self.index(k))
        return self.binop(arith.AddiOp, base, scaled)

    def binop(self, cls, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(cls(a, b)).results[0]


def _copies(b: _Builder, staged: Sequence[_Staged], loop: scf.ForOp, iv: SSAValue,
            slot: SSAValue | int) -> None:
    """Issue the copies of the iteration whose induction variable is `iv` into `slot`."""
    for s in staged:
        mapper: dict[SSAValue, SSAValue] = {loop.body.block.args[0]: iv}
        for op in s.slice:
            b.add(op.clone(value_mapper=mapper))
        dst = b.index(slot * s.slot) if isinstance(slot, int) else b.binop(
            arith.MuliOp, slot, b.index(s.slot))
        if isinstance(s.load, coop_nv2.LoadTensorOp):
            layout = mapper.get(s.load.layout, s.load.layout)
            b.add(coop_async.AsyncCopyTensorOp(s.load.pointer, layout, s.buffer, dst,
                                               b.index(s.cols), s.rows, s.cols),
                  s.load.location)
            continue
        off = mapper.get(s.load.offset, s.load.offset)
        b.add(coop_async.AsyncCopyOp(s.load.pointer, off, s.load.stride, s.buffer, dst,
                                     b.index(s.cols), s.rows, s.cols), s.load.location)


def _guarded(b: _Builder, cond: SSAValue | bool, fill) -> None:
    """`fill(builder)` under `scf.if cond` (or unconditionally / not at all for a known cond)."""
    if cond is True:
        fill(b)
    elif cond is not False:
        block = Block()
        b.add(scf.IfOp(cond, [], [block]))
        inner = b.at(InsertPoint.at_end(block))
        fill(inner)
        inner.add(scf.YieldOp())


@dataclass
class StageLoopLoads(RewritePattern):
    """Stage and pipeline the qualifying loads of one scf.for (module docstring)."""

    stages: int
    strict: bool = False
    shared: dict = field(default_factory=dict)  # (block, k, buffer type) -> buffer of the block's loops

    def match_and_rewrite(self, loop: scf.ForOp, rewriter: PatternRewriter) -> None:
        if not isinstance(loop, scf.ForOp) or STAGES_ATTR in loop.attributes:
            return
        staged, refused = _stageable_loads(loop)
        for op, why in refused:
            message = f"not staged by pipeline-coop-loads: {why}"
            if self.strict:
                raise CoopError(op, message)
            warn(op, message)
        if not staged:
            return
        S = self.stages
        kernel = loop.parent_op()
        while not isinstance(kernel, func.FuncOp):
            kernel = kernel.parent_op()
        start = InsertPoint.at_start(kernel.body.block)
        entry = _Builder(rewriter, start, (start, {}), loop.location)
        for k, s in enumerate(staged):
            t = coop_async.workgroup_memref([S * s.slot], s.load.pointer.type.element_type)
            # Loops of one block run one after the other, each drained by its trailing
            # async_wait_group 0 (a workgroup barrier): the k-th staged load of each may share
            # one buffer, as the k-th tile of consecutive iterations of one loop does.
            key = (id(loop.parent_block()), k, t)
            if key in self.shared:
                s.buffer = self.shared[key]
                continue
            s.buffer = entry.add(coop_async.AllocWorkgroupOp(t), s.load.location).results[0]
            s.buffer.name_hint = (s.load.pointer.name_hint or "w") + "_stages"
            self.shared[key] = s.buffer
        lb, ub, step = loop.lb, loop.ub, loop.step
        trip = _static_trip(lb, ub, step)

        # prologue: iterations 0 .. S-2, one committed group each
        pro = entry.at(InsertPoint.before(loop))
        for k in range(S - 1):
            iv = pro.affine(lb, step, k)
            cond = (k < trip) if trip is not None else pro.add(
                arith.CmpiOp(iv, ub, "slt")).results[0]
            _guarded(pro, cond, lambda b, iv=iv, k=k: _copies(b, staged, loop, iv, k))
            pro.add(coop_async.AsyncCommitGroupOp())

        # the loop: wait for iteration t, refill slot (t+S-1) mod S, read slot t mod S, compute
        body = loop.body.block
        i = body.args[0]
        top = entry.at(InsertPoint.at_start(body))
        top.add(coop_async.AsyncWaitGroupOp(S - 2))
        t = i if coop.constant_int(lb) == 0 else top.binop(arith.SubiOp, i, lb)
        t = t if coop.constant_int(step) == 1 else top.binop(arith.DivUIOp, t, step)
        slot = top.binop(arith.RemUIOp, t, top.index(S))
        slot_offsets: dict[int, SSAValue] = {}
        for s in staged:
            if s.slot not in slot_offsets:
                slot_offsets[s.slot] = top.binop(arith.MuliOp, slot, top.index(s.slot))
        addresses = [(slot_offsets[s.slot], top.index(s.cols)) for s in staged]
        # the refill before the body (before the loads are replaced: the insertion point may be one)
        ahead = top.affine(i, step, S - 1)
        more = top.add(arith.CmpiOp(ahead, ub, "slt")).results[0]
        nslot = top.binop(arith.RemUIOp, top.binop(arith.AddiOp, t, top.index(S - 1)),
                          top.index(S))
        _guarded(top, more, lambda b: _copies(b, staged, loop, ahead, nslot))
        top.add(coop_async.AsyncCommitGroupOp())
        for s, (off, pitch) in zip(staged, addresses):
            new = coop.LoadOp(s.buffer, off, pitch, s.layout, s.load.result.type)
            new.result.name_hint = s.load.result.name_hint
            new.location = s.load.location
            rewriter.replace(s.load, [new], [new.result])
        loop.attributes[STAGES_ATTR] = IntegerAttr(S, IntegerType(64))

        # epilogue: nothing may stay in flight
        entry.at(InsertPoint.after(loop)).add(coop_async.AsyncWaitGroupOp(0))

        # the offset computations only the old loads used are dead now
        for s in staged:
            for op in reversed(s.slice):
                if op.parent is not None and not any(r.uses for r in op.results):
                    rewriter.erase(op)

        # Diagnostics about the new ops (a backend refusing the staged form) point at the loop.
        for o in kernel.walk():
            if not isinstance(o.location, FileLineColLoc):
                o.location = loop.location


def _static_trip(lb: SSAValue, ub: SSAValue, step: SSAValue) -> int | None:
    lo, hi, st = (coop.constant_int(v) for v in (lb, ub, step))
    if lo is None or hi is None or st is None or st <= 0:
        return None
    return max(0, -(-(hi - lo) // st))


@dataclass(frozen=True)
class PipelineCoopLoadsPass(ModulePass):
    """Stage the global matrix loads of loops through S workgroup buffers (module docstring).

    Raises CoopError for a stage count below 2 (and, with `strict`, for a load not staged)."""

    name = "pipeline-coop-loads"

    stages: int = 4
    """Workgroup buffers (slots) per staged load, S >= 2: copies run S-1 iterations ahead of the
    loop body that reads them."""
    strict: bool = False
    """A global matrix load in a loop that cannot be staged is an error (CoopError at the load,
    saying why) instead of a CoopWarning with the same line."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.stages < 2:
            raise CoopError(None, f"pipeline-coop-loads: stages must be >= 2, got {self.stages}",
                            where="<command line>")
        loops = [o for o in op.walk() if isinstance(o, scf.ForOp)]
        pattern = StageLoopLoads(self.stages, self.strict)
        for loop in reversed(loops):  # reversed pre-order: inner loops first
            pattern.match_and_rewrite(loop, PatternRewriter(loop))
