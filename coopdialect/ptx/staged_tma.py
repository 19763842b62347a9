"""The staged form at workgroup scope, op by op, with the bulk tensor copy engine (sm_90a):
one thread copies each box with `cp.async.bulk.tensor` into 128-byte-swizzled wgmma tiles,
and mbarriers, not workgroup barriers, say when a group has landed and when a slot may be
refilled. Used instead of `staged_workgroup.py`'s `cp.async` copies (which cost every thread
one instruction and two address registers per 16 bytes) where the whole kernel allows it
(`plan`); otherwise that path lowers the kernel unchanged.

* **When.** On sm_90a, a kernel whose every copy is a `coop.async_copy_tensor` (no
  `coop.async_copy`) of 2-byte components into a workgroup buffer in tile form
  (`staged_workgroup.tile_form`) read as Workgroup-scope MatrixB by `coop.mul_add` alone (dense
  wgmma); each copy one whole slot
  whose columns are a multiple of 64 and rows a multiple of 8 (at most 256); its source a
  kernel argument; its layout from tensor_addr ops the host can follow
  (`host_values.layout_fields`: dimensions and strides computed from constants and integer
  scalar arguments), of at most 5 dimensions, block sizes 1, innermost stride 1, spanning 1
  along every dimension but the last two, which span the box; clamp mode Undefined or Constant
  with clampValue 0 (the engine's zero fill); every copy of one argument through layouts of
  the same dimensions, strides and mode. Commits and waits lie in the function's body or in
  `scf.for` bodies (no `scf.if`, no `scf.while`), and a loop marks its stage count
  (`coop.pipeline_stages` S, the form `pipeline-coop-loads` writes).
* **Tiles.** A buffer's slot holds its box as ceil(cols / 64) panels of rows x 128 bytes, each
  the bulk copy of a 64-column box in the 128-byte swizzle mode, rows x 128 bytes apart, every
  slot 1024-byte aligned (the swizzle's period). Read as a K-major B (ColumnMajor: the box's
  rows are N) or an MN-major B (RowMajor: the box's rows are K): `wgmma.StagedTile` with
  `swizzle_rows` = rows gives the descriptors (PTX ISA 9.7.15.5.1.2).
* **Copies.** (The host must then give 16-byte-aligned buffers whose row strides are multiples
  of 16 bytes, as every tensor map needs; `coopdialect.runtime` refuses a launch otherwise.)
  Each argument copied gets a tensor map (`.param .align 64 .b8 [128]`, a
  `tensor_map` entry of the launch description: the layout's dimensions innermost first, its
  strides in bytes, the box 64 x rows x 1 ..., swizzle 128B). Groups are numbered by the
  commits before them, g; full[g mod B] and empty[g mod B] are mbarriers, B = 2S (a thread
  releases a group at its next wait, so after a `wait 0` up to S - 1 groups are waited for and
  not yet released). Thread 0 alone copies (with turns, below, another): before the first copy
  into a slot after a wait it waits until every thread has passed that wait (empty of the last
  group released there), before re-arming full[g mod B] until group g - B was released, then
  `mbarrier.expect_tx` of the box's bytes and one `cp.async.bulk.tensor` per panel at the
  layout's offsets (coordinates innermost first).
* **coop.async_commit_group**: thread 0 arrives on full[g mod B] (the phase completes once the
  group's bytes have landed, or at once for an empty group); g += 1 in every thread.
* **coop.async_wait_group N**: every warp releases the groups it waited for before (one
  arrival each on empty[. mod B] by its lane 0: reads of them precede this wait, which is a
  workgroup barrier in the IR, and are wgmma's, which a warp completes together), then waits on full[. mod B] (parity (. / B) & 1) for every group up to g - N - 1.
  No `bar.sync`: a thread goes on as soon as its data has landed.

The counters (groups committed, waited for, released) are registers every thread keeps alike
(commits and waits are workgroup-uniform), carried through the loops that commit or wait.

**Turns** (`coop.pingpong` on the kernel, KernelLowering.take_turn): the warpgroups take turns
issuing their products where `_turns` finds it safe, and the copying thread is then the last
warpgroup's first (128·(W−1)) instead of thread 0. A warpgroup holding the turn may wait on
full[] at a loop's top and, as the copier, on empty[]: the groups it waits for were committed
by the copier at least one trip earlier (every staged loop has 2 stages or more, and each trip
gives the turn at its arithmetic), in a turn that ended before this one began; and the warps
whose release the copier waits for passed the same wait in their own turn, which comes before
the copier's (it is last). Outside the loops no turn is held across a staging op.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, BlockArgument, SSAValue

import coopdialect.ptx.scalar_rules  # noqa: F401  (the scf.for rule wrapped below)
import coopdialect.ptx.staged_workgroup  # noqa: F401  (the rules wrapped below)
from coopdialect.dialects import coop, ptx
from coopdialect.dialects import tensor_addr as ta
from coopdialect.dialects.coop import Layout, Use
from coopdialect.dialects.coop_async import (
    AllocWorkgroupOp,
    AsyncCommitGroupOp,
    AsyncCopyOp,
    AsyncCopyTensorOp,
    AsyncWaitGroupOp,
)
from coopdialect.ptx import wgmma as wg
from coopdialect.ptx.affine import Arith
from coopdialect.ptx.host_values import layout_fields
from coopdialect.ptx.kernel_lowering import (PINGPONG_ATTR, RULES, SETUP_HOOKS, Buf, KernelLowering,
                                             LoopFrame, Scalar, is_matrix_arithmetic,
                                             issues_products)
from coopdialect.ptx.pipelined_launch import tensor_map_type
from coopdialect.ptx.pipelined_plan import STAGES_ATTR
from coopdialect.ptx.scalar_rules import open_loop
from coopdialect.ptx.staged_workgroup import multiple_of
from coopdialect.ptx.staged_workgroup import tile_form

_prev = {cls: RULES[cls] for cls in (AllocWorkgroupOp, coop.LoadOp, AsyncCopyTensorOp,
                                     AsyncCommitGroupOp, AsyncWaitGroupOp, scf.ForOp)}
PANEL = 64  # 2-byte components per 128-byte swizzled row


@dataclass
class Plan:
    """What `plan` found: the barrier ring's size (twice the stage count), the swizzled buffers
    (buffer -> box rows) and the tensor map of each copied argument (argument index -> launch
    entry)."""

    stages: int  # barriers in each ring (full, empty)
    buffers: dict[SSAValue, int]
    maps: dict[int, dict]


@dataclass
class _State:
    plan: Plan
    full: SSAValue  # .b32 shared address of full[0]; empty[0] is 8 * B bytes on
    empty: SSAValue
    tmaps: dict[int, SSAValue]  # argument -> generic address of its tensor map param
    issuer: SSAValue  # pred: the thread that copies (thread 0, or with turns the last
    issuer_tid: int   # warpgroup's first)
    counters: list[SSAValue] = field(default_factory=list)  # [committed, waited, released]


def plan(lw: KernelLowering) -> Plan | None:
    """The bulk-copy plan of `lw.fn` (module docstring), None where the kernel does not allow it."""
    fn = lw.fn
    if not lw.bulk_copies or lw.target != "sm_90a" or lw.workgroup_size is None \
            or (lw.workgroup_size[0] * lw.workgroup_size[1] * lw.workgroup_size[2]) % 32:
        return None
    copies, stages = [], []
    for op in fn.walk():
        if isinstance(op, AsyncCopyOp):
            return None
        if isinstance(op, AsyncCopyTensorOp):
            copies.append(op)
        if isinstance(op, AsyncCommitGroupOp | AsyncWaitGroupOp):
            p = op.parent_op()
            while p is not fn:
                if not isinstance(p, scf.ForOp):
                    return None
                p = p.parent_op()
        if isinstance(op, scf.ForOp) and STAGES_ATTR in op.attributes:
            stages.append(op.attributes[STAGES_ATTR].value.data)
    if not copies or not stages:
        return None
    buffers: dict[SSAValue, int] = {}
    maps: dict[int, dict] = {}
    keys: dict[int, tuple] = {}
    for cp in copies:
        form = tile_form(lw, cp.destination)
        if form is None or form.ty.use_value != Use.MatrixB or form.es != 2:
            return None
        # read by dense wgmma alone (the swizzled descriptors), not by a 2:4 product
        if not all(isinstance(r.operation, coop.MulAddOp) for u in cp.destination.uses
                   if isinstance(u.operation, coop.LoadOp) for r in u.operation.result.uses):
            return None
        rows, cols = form.box
        if (cp.rows.data, cp.cols.data) != (rows, cols) or cols % PANEL or rows % 8 \
                or not 8 <= rows <= 256:
            return None
        src = cp.source
        if not isinstance(src, BlockArgument) or src.owner is not fn.body.block:
            return None
        f = layout_fields(cp.layout)
        if f is None:
            return None
        rank = len(f.dimension)
        if not 2 <= rank <= 5 or None in f.dimension or None in f.stride[:-1] \
                or f.stride[-1] != 1 or any(b != 1 for b in f.block_size) \
                or tuple(f.span) != (1,) * (rank - 2) + (rows, cols):
            return None
        if not (f.mode == ta.ClampMode.Undefined
                or (f.mode == ta.ClampMode.Constant and f.clamp_value == 0)):
            return None
        dt = tensor_map_type(src.type.element_type)
        if dt is None:
            return None
        key = (f.dimension, f.stride, f.mode)
        if keys.setdefault(src.index, key) != key:
            return None
        if buffers.setdefault(cp.destination, rows) != rows \
                or coop.constant_int(cp.destination_stride) != cols \
                or not multiple_of(cp.destination_offset, rows * cols):
            return None

        def bytes_of(e):
            return e * 2 if isinstance(e, int) else {"op": "mul", "args": [e, 2]}
        maps[src.index] = {
            "kind": "tensor_map", "arg": src.index, "data_type": dt,
            "global_dims": list(reversed(f.dimension)),
            "global_strides": [bytes_of(s) for s in reversed(f.stride[:-1])],
            "box_dims": [PANEL, rows] + [1] * (rank - 2), "element_strides": [1] * rank,
            "interleave": "NONE", "swizzle": "128B", "l2_promotion": "L2_256B",
            "oob_fill": "NONE"}
    # B = 2S (module docstring): the commits after a `wait 0` must not re-arm the barriers
    # of groups waited for there and not yet released.
    return Plan(2 * max(stages), buffers, maps)


def _state(lw: KernelLowering) -> _State | None:
    return lw.__dict__.get("_tma")


def _turns(lw: KernelLowering) -> tuple[int, str]:
    """(warpgroups that take turns, why none do): `PINGPONG_ATTR` (module docstring)."""
    fn = lw.fn
    x, y, z = lw.workgroup_size
    n = x * y * z
    if n % 128 or not 2 <= n // 128 <= 15:
        return 0, f"{n} invocations are not 2 to 15 warpgroups"
    for op in fn.walk():
        if isinstance(op, scf.ForOp) and STAGES_ATTR in op.attributes \
                and op.attributes[STAGES_ATTR].value.data < 2:
            return 0, "a loop of one stage would wait for a copy the same turn issues"
        if isinstance(op, coop.MulAddOp) and op.result.type.scope_value == coop.Scope.Workgroup:
            p = op.parent_op()
            while p is not fn:
                if not isinstance(p, scf.ForOp):
                    return 0, f"a product inside {p.name}"
                p = p.parent_op()
        if isinstance(op, scf.ForOp) and issues_products(op) and not any(
                is_matrix_arithmetic(o) or isinstance(o, scf.ForOp) and issues_products(o)
                for o in op.body.walk()):
            return 0, "a loop of products without arithmetic on matrices (it would never " \
                      "give the turn)"
    return n // 128, ""


def _setup(lw: KernelLowering) -> None:
    """Barriers (thread 0, or with turns the last warpgroup's first thread, initializes them,
    then one bar.sync), tensor-map params, counters; with turns, warpgroup 0's first turn."""
    p = plan(lw)
    if p is None:
        if PINGPONG_ATTR in lw.fn.attributes:
            lw.comment(f"{PINGPONG_ATTR} not applied: the kernel's copies are not all bulk "
                       "tensor copies (pipeline-coop-loads on sm_90a)")
        return
    turns, why = _turns(lw) if PINGPONG_ATTR in lw.fn.attributes else (0, "")
    if why:
        lw.comment(f"{PINGPONG_ATTR} not applied: {why}")
    name = lw.fn.sym_name.data
    tmaps = {}
    for i, entry in sorted(p.maps.items()):
        hint = lw.fn.args[i].name_hint or str(i)
        pname = f"{name}_tmap_{hint}"
        mov = ptx.MovImmOp(".b64", pname, ptx.B64)
        cvta = ptx.CvtaOp(".param.u64", [mov.out], [ptx.B64])
        lw.prologue += [mov, cvta]
        tmaps[i] = cvta.outs[0]
        lw.tensor_map_params.append((pname, entry))
    S = p.stages
    bars = lw.alloc_shared(16 * S, 8)
    full = lw.inst(ptx.CvtOp, ".u32.u64", [bars], "b32")
    empty = lw.inst(ptx.AddOp, ".u32", [full, lw.imm("b32", str(8 * S))], "b32")
    x, y, z = lw.workgroup_size
    issuer_tid = 128 * (turns - 1) if turns else 0  # the last warpgroup takes each turn last
    issuer = lw.inst(ptx.SetpOp, ".eq.u32", [lw.linear_tid(), lw.imm("b32", str(issuer_tid))],
                     "pred")
    init, after = lw.new_block(), Block()
    lw.emit(ptx.CbraOp(issuer, init, after))
    lw.cur = init
    for s in range(S):
        lw.emit(ptx.MbarrierInitOp(full, 8 * s, 1))
        lw.emit(ptx.MbarrierInitOp(empty, 8 * s, x * y * z // 32))
    lw.emit(ptx.FenceMbarrierInitOp())
    lw.emit(ptx.BraOp(after))
    lw.blocks.append(after)
    lw.cur = after
    lw.emit(ptx.BarSyncOp(0))
    zero = lw.imm("b32", "0")
    st = _State(p, full, empty, tmaps, issuer, issuer_tid, [zero, zero, zero])
    lw.__dict__["_tma"] = st
    if turns:
        lw.turns = turns
        lw.keeps_turn_also = lambda op: isinstance(op, _STAGING) or (
            isinstance(op, coop.LoadOp) and op.pointer in p.buffers)
        lw.first_turn()


# the staging's ops, which wait for no warpgroup that waits for the turn (module docstring)
_STAGING = (AllocWorkgroupOp, AsyncCopyTensorOp, AsyncCommitGroupOp, AsyncWaitGroupOp)


SETUP_HOOKS.append(_setup)


# -- helpers ----------------------------------------------------------------------------------


def _barrier(lw: KernelLowering, st: _State, which: str, g: SSAValue) -> SSAValue:
    slot = lw.udiv_const(g, st.plan.stages, 32, rem=True)
    off = lw.inst(ptx.ShlOp, ".b32", [slot, lw.imm("b32", "3")], "b32")
    return lw.inst(ptx.AddOp, ".u32", [st.full if which == "full" else st.empty, off], "b32")


def _spin(lw: KernelLowering, st: _State, which: str, g: SSAValue) -> None:
    """Wait until the phase of group g on full/empty[g mod B] has completed."""
    bar = _barrier(lw, st, which, g)
    par = lw.inst(ptx.AndOp, ".b32", [lw.udiv_const(g, st.plan.stages, 32), lw.imm("b32", "1")], "b32")
    lw.spin_wait(bar, par)


def _if(lw: KernelLowering, pred: SSAValue, body) -> None:
    """Run `body()` (emitting at lw.cur) only where `pred` holds."""
    then, join = lw.new_block(), Block()
    lw.emit(ptx.CbraOp(pred, then, join))
    lw.cur = then
    body()
    lw.emit(ptx.BraOp(join))
    lw.blocks.append(join)
    lw.cur = join


def _count_up(lw: KernelLowering, start: SSAValue, end: SSAValue, body) -> SSAValue:
    """for (i = start; i < end (signed); i++) body(i); returns the final i (= max(start, end))."""
    header = lw.new_block(["b32"])
    lw.emit(ptx.BraOp(header, [start]))
    lw.cur = header
    i = header.args[0]
    go = lw.inst(ptx.SetpOp, ".lt.s32", [i, end], "pred")
    step, exit_ = lw.new_block(), Block()
    lw.emit(ptx.CbraOp(go, step, exit_))
    lw.cur = step
    body(i)
    lw.emit(ptx.BraOp(header, [lw.inst(ptx.AddOp, ".u32", [i, lw.imm("b32", "1")], "b32")]))
    lw.blocks.append(exit_)
    lw.cur = exit_
    return i


def _wait_released(lw: KernelLowering, st: _State, g: SSAValue) -> None:
    """(thread 0) If g >= 0: wait until every thread has released group g."""
    ok = lw.inst(ptx.SetpOp, ".ge.s32", [g, lw.imm("b32", "0")], "pred")
    _if(lw, ok, lambda: _spin(lw, st, "empty", g))


def _before_filling(lw: KernelLowering, st: _State) -> None:
    """(thread 0) Before arming full[c mod B] or writing a slot: group c - B released (the
    barrier's previous phase is over), and the last group released at the latest wait
    (every thread has passed it: the IR's reads before it are done)."""
    c, _, rel = st.counters
    S = st.plan.stages
    _wait_released(lw, st, lw.inst(ptx.SubOp, ".s32", [c, lw.imm("b32", str(S))], "b32"))
    _wait_released(lw, st, lw.inst(ptx.SubOp, ".s32", [rel, lw.imm("b32", "1")], "b32"))


# -- rules ------------------------------------------------------------------------------------


def _alloc(lw: KernelLowering, op: AllocWorkgroupOp) -> None:
    st = _state(lw)
    if st is None or op.result not in st.plan.buffers:
        return _prev[AllocWorkgroupOp](lw, op)
    size = 2
    for d in op.result.type.get_shape():
        size *= d
    lw.vmap[op.result] = Buf(op.result.type, lw.alloc_shared(size, 1024), "shared")


def _load(lw: KernelLowering, op: coop.LoadOp) -> None:
    st = _state(lw)
    if st is None or op.pointer not in st.plan.buffers:
        return _prev[coop.LoadOp](lw, op)
    form = tile_form(lw, op.pointer)
    t = op.result.type
    rows = st.plan.buffers[op.pointer]
    mn_major = form.layout == Layout.RowMajor  # a RowMajor B's box rows run along K
    lw.comment(f"{op.name} -> {t.rows}x{t.columns} MatrixB: the slot's 128B-swizzled "
               f"{'MN' if mn_major else 'K'}-major tile")
    base = lw.vmap[op.pointer].base
    off = lw.index_op("mul", lw.scalar(op.offset), lw.idx_const(2))
    addr = lw.reg(lw.index_op("add", Scalar(IndexType(), reg=base), off))
    lw.vmap[op.result] = wg.StagedTile(t, addr, form.mn, form.k, 2, mn_major, rows)


def _copy(lw: KernelLowering, op: AsyncCopyTensorOp) -> None:
    st = _state(lw)
    if st is None:
        return _prev[AsyncCopyTensorOp](lw, op)
    rows, cols = op.rows.data, op.cols.data
    layout = lw.vmap[op.layout]
    ar = Arith(lw)
    coords = [ar.low32(x) for x in reversed(layout.offset)]
    base = lw.vmap[op.destination].base
    off = lw.index_op("mul", lw.scalar(op.destination_offset), lw.idx_const(2))
    dst = lw.inst(ptx.CvtOp, ".u32.u64",
                  [lw.reg(lw.index_op("add", Scalar(IndexType(), reg=base), off))], "b32")
    tmap = st.tmaps[op.source.index]
    lw.comment(f"{op.name} {rows}x{cols}: thread {st.issuer_tid}, {cols // PANEL} bulk tensor "
               f"copies of {rows}x{PANEL} (128B swizzle)")

    def issue():
        _before_filling(lw, st)
        full = _barrier(lw, st, "full", st.counters[0])
        lw.emit(ptx.MbarrierExpectTxOp(full, rows * cols * 2))
        for p in range(cols // PANEL):
            c0 = coords[0] if not p else lw.inst(ptx.AddOp, ".s32", [coords[0], lw.imm(
                "b32", str(p * PANEL))], "b32")
            d = dst if not p else lw.inst(ptx.AddOp, ".u32", [dst, lw.imm(
                "b32", str(p * rows * 128))], "b32")
            lw.emit(ptx.CpAsyncBulkTensorOp(d, tmap, [c0, *coords[1:]], full))
    _if(lw, st.issuer, issue)


def _commit(lw: KernelLowering, op: AsyncCommitGroupOp) -> None:
    st = _state(lw)
    if st is None:
        return _prev[AsyncCommitGroupOp](lw, op)
    c = st.counters[0]

    def arrive():
        _before_filling(lw, st)
        lw.emit(ptx.MbarrierArriveOp(_barrier(lw, st, "full", c)))
    _if(lw, st.issuer, arrive)
    st.counters[0] = lw.inst(ptx.AddOp, ".u32", [c, lw.imm("b32", "1")], "b32")


def _wait(lw: KernelLowering, op: AsyncWaitGroupOp) -> None:
    st = _state(lw)
    if st is None:
        return _prev[AsyncWaitGroupOp](lw, op)
    c, avail, rel = st.counters
    lw.comment(f"{op.name} {op.pending.data}: release the groups waited for, wait on full[]")
    # one arrival per warp: the tiles are read by wgmma alone, whose reads a warp completes
    # together (wgmma.wait_group is .sync.aligned)
    lane0 = lw.cached("lane 0", lambda: lw.inst(ptx.SetpOp, ".eq.u32", [
        lw.special("%laneid"), lw.imm("b32", "0")], "pred", True))
    rel = _count_up(lw, rel, avail, lambda g: _if(lw, lane0, lambda: lw.emit(
        ptx.MbarrierArriveOp(_barrier(lw, st, "empty", g)))))
    target = lw.inst(ptx.SubOp, ".s32", [c, lw.imm("b32", str(op.pending.data))], "b32")
    avail = _count_up(lw, avail, target, lambda g: _spin(lw, st, "full", g))
    st.counters[1:] = [avail, rel]


def _for(lw: KernelLowering, op: scf.ForOp) -> None:
    st = _state(lw)
    if st is None or not any(isinstance(o, AsyncCommitGroupOp | AsyncWaitGroupOp)
                             for o in op.walk()):
        return _prev[scf.ForOp](lw, op)
    step = lw.scalar(op.step)
    header, iv, carried, exit_ = open_loop(lw, op, list(st.counters))
    block = op.body.block
    lw.vmap[block.args[0]] = Scalar(IndexType(), reg=iv)
    for arg, v in zip(block.args[1:], carried):
        lw.vmap[arg] = v
    st.counters = list(header.args[-3:])
    lw.loop_stack.append(LoopFrame(header, iv, step, lambda: list(st.counters)))
    lw.lower_ops(block)
    lw.loop_stack.pop()
    lw.blocks.append(exit_)
    lw.cur = exit_
    st.counters = list(header.args[-3:])
    for res, v in zip(op.results, carried):
        lw.vmap[res] = v


for _cls, _fn in ((AllocWorkgroupOp, _alloc), (coop.LoadOp, _load), (AsyncCopyTensorOp, _copy),
                  (AsyncCommitGroupOp, _commit), (AsyncWaitGroupOp, _wait), (scf.ForOp, _for)):
    RULES[_cls] = _fn

