"""The staged form at workgroup scope, op by op (sm_90a): `cp.async` copies straight into
wgmma's operand tiles, one barrier per wait. Used where the warp-specialized pipeline
(`pipelined.py`) refuses a staged kernel — several staged loops, a loop body beyond one
product chain — and the bulk-copy form (`staged_tma.py`) does not take it either (a copy the
engine cannot make, 2:4 products, `bulk-copies=false`); also the tile form and the loads that
`staged_tma.py` builds on.

* **Tile form.** A workgroup buffer (`coop.alloc_workgroup`) whose readers are all
  Workgroup-scope A/B `coop.load`s of one matrix type and layout, RowMajor or ColumnMajor, with
  the pitch of a slot's box and offsets that are multiples of the slot (the form
  pipeline-coop-loads writes: slot k at k·rows·cols elements) is laid out slot by slot as that
  operand's staged tile (wgmma.py: K-major core matrices; MN-major when the 16-byte groups of
  a 2-byte operand run along M/N, `wgmma.mn_major_groups`). No instruction can tell: every
  element is written by the buffer's copies and read by its loads, and both address it in the
  same tile. A reader is then the tile itself (`wgmma.StagedTile` at slot offset · E bytes):
  nothing is staged again.
* **coop.async_copy_tensor** into such a buffer: box element (i, j) is matrix element (i, j)
  of the reader (RowMajor) or (j, i) (ColumnMajor), read through the layout as
  OpCooperativeMatrixLoadTensorNV would (no view). Where the layout promises 16-byte groups
  (`nv2_workgroup.tensor_vector_groups`: last dimension contiguous, groups kept or discarded
  whole) and the source is 16-byte aligned at run time, each group that is one 16-byte row of the tile
  is one `cp.async.cg.shared.global` of 16 bytes (PTX ISA 9.7.9.25.3), with src-size 0 for a
  discarded group — the hardware's zero fill, so only under clamp mode Undefined or Constant with
  a clampValue of 0; otherwise (and for 8-bit groups along M/N) the same groups or elements are
  loaded and stored by the thread (`ld.global` + `st.shared`), synchronously. Through a plain
  box (`box_access.plain_box`) a thread's groups share one address register per lane-dependent
  row and column and differ by immediate offsets; other layouts address each group by the
  spec's pseudo-code (`tensor_rules.element_address`).
* **coop.async_wait_group N**: `cp.async.wait_group N` (this thread's copies), then
  `fence.proxy.async` (wgmma reads shared memory through the async proxy) and `bar.sync 0`
  (every thread's copies and stores, visible to all).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import SSAValue

import coopdialect.ptx.coop_rules  # noqa: F401  (the coop.load rules wrapped below)
import coopdialect.ptx.sparse  # noqa: F401  (wraps coop.load too: wrapped below)
import coopdialect.ptx.staged_generic  # noqa: F401  (the wait rule wrapped below)
from coopdialect.dialects import coop, ptx
from coopdialect.dialects.coop import Layout, Scope, Use
from coopdialect.dialects.coop_async import AsyncCopyTensorOp, AsyncWaitGroupOp, is_workgroup
from coopdialect.ptx import affine as af
from coopdialect.ptx import wgmma as wg
from coopdialect.ptx.affine import Arith
from coopdialect.ptx.kernel_lowering import RULES, KernelLowering, op_error, reg_kind, rule
from coopdialect.ptx.matrix_addressing import scalar_aff
from coopdialect.ptx.box_access import origin as box_origin
from coopdialect.ptx.box_access import plain_box
from coopdialect.ptx.nv2_workgroup import fill_word, tensor_vector_groups
from coopdialect.ptx.tensor_rules import address, element_address, load_elements

_prev_load = RULES[coop.LoadOp]
_prev_wait = RULES[AsyncWaitGroupOp]


@dataclass(frozen=True)
class TileForm:
    """How a workgroup buffer in tile form holds its slots (module docstring)."""

    ty: coop.MatrixType  # the matrix its loads read
    layout: Layout  # RowMajor: box (i, j) = matrix (i, j); ColumnMajor: matrix (j, i)
    mn: int
    k: int
    es: int
    mn_major: bool

    @property
    def box(self) -> tuple[int, int]:
        t = self.ty
        return (t.rows, t.columns) if self.layout == Layout.RowMajor else (t.columns, t.rows)


@dataclass(frozen=True)
class _Box:
    rows: int
    columns: int


def multiple_of(v: SSAValue, n: int) -> bool:
    """Whether index value `v` is, by its defining ops, a multiple of n (a constant, or a
    product with a constant factor that is)."""
    c = coop.constant_int(v)
    if c is not None:
        return c % n == 0
    op = v.owner
    if isinstance(op, arith.MuliOp):
        return any((k := coop.constant_int(x)) is not None and k % n == 0 for x in op.operands)
    return False


def tile_form(lw: KernelLowering, buffer: SSAValue) -> TileForm | None:
    """The tile form of a `coop.alloc_workgroup` result, None when its uses do not allow it."""
    cache = lw.__dict__.setdefault("_tile_forms", {})
    if buffer in cache:
        return cache[buffer]
    form = None
    uses = [(u.operation, u.index) for u in buffer.uses]
    loads = [o for o, _ in uses if isinstance(o, coop.LoadOp)]
    copies_only = all(isinstance(o, coop.LoadOp) or (isinstance(o, AsyncCopyTensorOp) and i == 2)
                      for o, i in uses)
    if loads and copies_only and is_workgroup(buffer.type) and lw.target == "sm_90a":
        t, layout = loads[0].result.type, loads[0].layout.data
        if all(o.result.type == t and o.layout.data == layout for o in loads) \
                and t.scope_value == Scope.Workgroup \
                and t.use_value in (Use.MatrixA, Use.MatrixB) \
                and layout in (Layout.RowMajor, Layout.ColumnMajor):
            rows, cols = (t.rows, t.columns) if layout == Layout.RowMajor else (t.columns, t.rows)
            size = 1
            for d in buffer.type.get_shape():
                size *= d
            if size % (rows * cols) == 0 and all(
                    coop.constant_int(o.stride) == cols and multiple_of(o.offset, rows * cols)
                    for o in loads):
                mn, k, es = wg.operand_extents(loads[0], t)
                form = TileForm(t, layout, mn, k, es,
                                wg.mn_major_groups(t, es, layout == Layout.RowMajor))
    cache[buffer] = form
    return form


def _slot_address(lw: KernelLowering, buffer: SSAValue, offset: SSAValue, es: int) -> SSAValue:
    base = lw.vmap[buffer].base
    first = af.add(af.atom(base, 0, af.I64_MAX), af.scale(scalar_aff(lw, lw.scalar(offset)), es))
    return Arith(lw).reg(first)


@rule(coop.LoadOp)
def _load(lw: KernelLowering, op: coop.LoadOp) -> None:
    t = op.result.type
    if isinstance(t, coop.MatrixType) and t.scope_value == Scope.Workgroup \
            and is_workgroup(op.pointer.type) \
            and (form := tile_form(lw, op.pointer)) is not None:
        lw.comment(f"{op.name} -> {t.rows}x{t.columns} {t.use_value.value}: the workgroup "
                   f"buffer's slot is its wgmma tile{' (MN-major)' if form.mn_major else ''}")
        lw.vmap[op.result] = wg.StagedTile(t, _slot_address(lw, op.pointer, op.offset, form.es),
                                           form.mn, form.k, form.es, form.mn_major)
        return
    _prev_load(lw, op)


@rule(AsyncCopyTensorOp)
def _copy_tensor(lw: KernelLowering, op: AsyncCopyTensorOp) -> None:
    form = tile_form(lw, op.destination)
    if form is None or (op.rows.data, op.cols.data) != form.box \
            or coop.constant_int(op.destination_stride) != form.box[1] \
            or not multiple_of(op.destination_offset, form.box[0] * form.box[1]):
        raise op_error(op, "a tensor copy lowers op by op only into a workgroup buffer that "
                           "Workgroup-scope A/B coop.loads of one type and layout read slot by "
                           "slot, each copy one whole slot (the form pipeline-coop-loads "
                           "writes), on sm_90a")
    if lw.workgroup_size is None:
        raise op_error(op, "needs a coop.workgroup_size attribute (every invocation copies)")
    x, y, z = lw.workgroup_size
    n = x * y * z
    t, es, mn, mn_major = form.ty, form.es, form.mn, form.mn_major
    row_major = form.layout == Layout.RowMajor
    rows, cols = form.box
    buf, layout = lw.vmap[op.source], lw.vmap[op.layout]
    if layout.mode.value == "Constant" and not layout.clamp_value.is_const:
        raise op_error(op, "a tensor copy with clamp mode Constant needs a constant clampValue")
    smem = _slot_address(lw, op.destination, op.destination_offset, es)
    lw.comment(f"{op.name} {rows}x{cols} into the {t.use_value.value} tile of its slot "
               f"({'MN' if mn_major else 'K'}-major), clamp {layout.mode.value}")

    def box(r, c):
        return (r, c) if row_major else (c, r)

    def elements():
        pos = wg.traversal(lw, op, t.rows, t.columns, n, not row_major)
        zero = lw.imm(reg_kind(t.element_type), "0")
        vals = load_elements(lw, op, buf, layout, None, [box(r, c) for r, c in pos], cols,
                             [zero] * len(pos), t.element_type)
        ar = Arith(lw)
        for (r, c), v in zip(pos, vals):
            wg.store_staged(lw, ar, smem, mn, es, t.use_value, r, c, v, mn_major)

    vec = tensor_vector_groups(lw, _Box(rows, cols), buf, layout, None, n, es)
    if vec is None:
        elements()
        return
    _, aligned = vec
    fill = fill_word(lw, layout, es)  # None under Undefined (any value is right)
    # cp.async's src-size 0 fills zeros: right under Undefined and for a zero clampValue
    zero_fill = fill is None or layout.clamp_value.const & ((1 << (8 * es)) - 1) == 0

    def element_group(ar, r, c):
        e = element_address(ar, layout, None, *box(r, c), cols, False)
        a, off = address(ar, buf, e.index, es)
        return a, off, ar.and_(e.active, ar.not_(e.discarded)), fill

    box_group = _box_groups(lw, layout, rows, cols, buf, es, box, fill)

    def groups(wide: bool, cp_async: bool):
        # a plain box: one address register per distinct lane-dependent row and column, the
        # rest immediate offsets (box_access.py); else the pseudo-code per group
        address_of = (box_group() if box_group is not None else element_group)
        return lambda: wg.stage_vectors(lw, op, t, smem, mn, es, n, row_major, address_of,
                                        wide=wide, mn_major=mn_major, src=buf, cp_async=cp_async)

    wg.aligned_branch(lw, aligned, groups(True, zero_fill),
                      groups(False, False) if es == 2 else elements)


def _box_groups(lw: KernelLowering, layout, rows: int, cols: int, buf, es: int, box, fill):
    """For a plain box layout with a constant row stride (box_access.plain_box: element (i, j)
    at offset + (0, ..., 0, i, j)), a factory of group-address functions: (register, byte
    offset, kept, fill) of the group at matrix (r, c), the register shared by every group
    whose box row and column differ only by constants (their difference is the immediate);
    None for any other layout."""
    if not plain_box(layout, rows, cols) or not layout.stride[-2].is_const:
        return None
    ar0 = Arith(lw)
    r0, c0, stride, lead_ok = box_origin(ar0, layout)
    rows_left = af.sub(layout.dimension[-2], r0)
    cols_left = af.sub(layout.dimension[-1], layout.offset[-1])
    pitch = stride.const

    def factory():
        bases: dict = {}

        def group(ar, r, c):
            i, j = box(r, c)
            vi, vj = af.Aff(i.terms, 0), af.Aff(j.terms, 0)
            key = (tuple((k, id(a.reg)) for k, a in vi.terms),
                   tuple((k, id(a.reg)) for k, a in vj.terms))
            if key not in bases:
                idx = af.add(af.add(ar.mul(af.add(r0, vi), stride), c0), vj)
                bases[key] = lw.inst(ptx.MadOp, ".lo.s64",
                                     [ar.reg(idx), lw.imm("b64", str(es)), buf.base], "b64")
            ok = ar.and_(lead_ok, ar.and_(ar.and_(ar.ge(af.add(r0, i), af.const(0)),
                                                  ar.lt(i, rows_left)),
                                          ar.and_(ar.ge(af.add(layout.offset[-1], j),
                                                        af.const(0)),
                                                  ar.lt(j, cols_left))))
            return bases[key], (i.const * pitch + j.const) * es, ok, fill
        return group
    return factory


@rule(AsyncWaitGroupOp)
def _wait(lw: KernelLowering, op: AsyncWaitGroupOp) -> None:
    if lw.target != "sm_90a":
        return _prev_wait(lw, op)
    lw.emit(ptx.CpAsyncWaitGroupOp(op.pending.data))
    lw.emit(ptx.FenceProxyAsyncOp())
    lw.emit(ptx.BarSyncOp(0))
