"""Workgroup-scope cooperative matrices with tensor addressing (`coop.load_tensor`,
`coop.store_tensor`) over W = n/128 warpgroups; the accumulator layout, the staged operand
tiles and the products are wgmma.py's.

* A (M x K) and B (K x N), f16/bf16 or 8-bit integers, from `coop.load_tensor`: staged into the
  K-major core-matrix tile of wgmma.py. Every thread stages elements e = t + j·n of the matrix
  traversed row by row (column by column when the view permutes), so neighbouring threads read
  neighbouring columns: contiguous memory for a row-major layout. Each element's address is
  tensor_rules.element_address (all clamp modes, views, blocks); where the layout promises
  contiguous rows, a uniform run-time alignment test picks a path with one ld.global.v4 per 16
  bytes of a row (`_vector_condition`, `wgmma.stage_vectors`).
* store_tensor / load_tensor of an accumulator: per element in the wgmma D layout
  (`wgmma.acc_positions`), through a plain box (box_access.py) or as at subgroup scope.

Object of a staged A/B load must be uniform (a composite_construct) when an element can be
clipped or discarded: its value is then written for those elements.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

import coopdialect.ptx.tensor_rules  # noqa: F401  (the rules wrapped below)
from coopdialect.dialects import coop
from coopdialect.dialects import coop_nv2 as nv2
from coopdialect.dialects.coop import Scope, Use
from coopdialect.ptx import affine as af
from coopdialect.ptx import wgmma as wg
from coopdialect.ptx.affine import Arith
from coopdialect.ptx.box_access import load_box, plain_box, store_box
from coopdialect.ptx.kernel_lowering import RULES, Frag, KernelLowering, op_error, reg_kind, rule
from coopdialect.ptx.tensor_rules import (_check_store_blocks, address, element_address, load_elements,
                                          store_elements)


_prev_load_tensor = RULES[nv2.LoadTensorOp]
_prev_store_tensor = RULES[nv2.StoreTensorOp]


def _uniform_object(lw: KernelLowering, op) -> SSAValue | None:
    obj = lw.vmap[op.object]
    regs = set(obj.regs) if isinstance(obj, Frag) else set()
    return regs.pop() if len(regs) == 1 else None


def load_tensor_workgroup(lw: KernelLowering, op: nv2.LoadTensorOp) -> None:
    t = op.result.type
    buf = lw.vmap[op.pointer]
    layout = lw.vmap[op.layout]
    view = lw.vmap[op.view] if op.view is not None else None
    if t.use_value == Use.MatrixAcc:
        pos = wg.acc_positions(lw, op, t)
        lw.comment(f"{op.name} -> {t.rows}x{t.columns} workgroup accumulator")
        obj = list(lw.vmap[op.object].regs)
        if view is None and op.decode_func is None and plain_box(layout, t.rows, t.columns, True):
            regs = load_box(lw, buf, layout, t, pos, obj)
        else:
            regs = load_elements(lw, op, buf, layout, view, pos, t.columns, obj, t.element_type)
        lw.vmap[op.result] = Frag(t, regs)
        return
    n = wg.threads(lw, op)
    mn, k, es = wg.operand_extents(op, t)
    by_column = view is not None and view.perm != tuple(range(len(view.perm)))
    pos = wg.traversal(lw, op, t.rows, t.columns, n, by_column)
    fill = _uniform_object(lw, op)
    if fill is None:
        # Object's elements are only read for clipped or discarded elements; with a
        # non-uniform Object we cannot know which thread holds them.
        if view is not None or layout.mode.value == "Constant":
            raise op_error(op, "a staged workgroup-scope load that may clip or discard elements "
                               "needs a uniform Object (a coop.composite_construct)")
        fill = lw.imm(reg_kind(t.element_type), "0")
    smem = wg.stage_buffer(lw, op, mn * k * es)
    lw.comment(f"{op.name} -> {t.rows}x{t.columns} {t.use_value.value} staged in shared memory "
               f"({len(pos)} elements per invocation), clamp {layout.mode.value}"
               f"{', view' if view else ''}")
    wg.begin_staging(lw, op)

    def elements():
        vals = load_elements(lw, op, buf, layout, view, pos, t.columns, [fill] * len(pos),
                             t.element_type)
        ar = Arith(lw)
        for (r, c), v in zip(pos, vals):
            wg.store_staged(lw, ar, smem, mn, es, t.use_value, r, c, v)

    def group_address(ar, r, c):
        e = element_address(ar, layout, None, r, c, t.columns, False)
        return address(ar, buf, e.index, es)

    aligned = _vector_condition(lw, t, buf, layout, view, n, es)
    if aligned is None:
        elements()
    else:  # 16-byte rows when the tensor's rows are 16-byte aligned at run time (uniform)
        wg.aligned_branch(lw, aligned, lambda: wg.stage_vectors(
            lw, op, t, smem, mn, es, n, True, group_address), elements)
    wg.end_staging(lw, op)
    lw.vmap[op.result] = wg.StagedTile(t, smem, mn, k, es)


def _vector_condition(lw, t, buf, layout, view, n, es):
    """The run-time predicate under which P = 16/E consecutive matrix columns are P
    consecutive, 16-byte aligned memref elements (then `wgmma.stage_vectors` may move them as
    one ld.global.v4.b32), or None when the layout does not promise contiguity at compile time.

    Contiguity: clamp mode Undefined (in-bounds coordinates), no view, Dim 2, block sizes 1,
    stride (S, 1) with S % P == 0, span[1] % P == 0 (P columns stay in one span row), columns
    % P == 0, and a memref of fewer than 2^32 - P elements (so the uint32 index cannot wrap
    between valid elements). Alignment: the index of a group's first element is congruent to
    offset[1] modulo P, so it is aligned iff (base + E*offset[1]) % 16 == 0 — the same for
    every thread."""
    per = 16 // es
    ints = [b.const if b.is_const else None for b in layout.block_size]
    st, sp = layout.stride, layout.span
    size = 1
    for d in buf.ty.get_shape():
        size *= d
    if not buf.ty.has_static_shape():  # unknown size: the uint32 index may wrap
        size = 0
    ok = (layout.mode.value == "Undefined" and view is None and len(st) == 2
          and ints == [1, 1] and st[1].is_const and st[1].const == 1 and st[0].is_const
          and st[0].const % per == 0 and sp[1].is_const and sp[1].const % per == 0
          and 0 < size < 2**32 - per
          and coop.bit_width(buf.ty.element_type) == 8 * es
          and wg.vector_groups(t.rows, t.columns, es, n, True))
    if not ok:
        return None
    return wg.aligned_16(lw, af.add(af.atom(buf.base, 0, af.I64_MAX),
                                    af.scale(layout.offset[1], es)))


def store_tensor_workgroup(lw: KernelLowering, op: nv2.StoreTensorOp) -> None:
    t = op.object.type
    buf = lw.vmap[op.pointer]
    layout = lw.vmap[op.layout]
    _check_store_blocks(op, layout)
    view = lw.vmap[op.view] if op.view is not None else None
    pos = wg.acc_positions(lw, op, t)
    if view is None and plain_box(layout, t.rows, t.columns):
        return store_box(lw, op, buf, layout, t, pos, list(lw.vmap[op.object].regs))
    lw.comment(f"{op.name} {t.rows}x{t.columns} workgroup accumulator, clamp "
               f"{layout.mode.value}{', view' if view else ''}")
    store_elements(lw, op, buf, layout, view, pos, t.columns, list(lw.vmap[op.object].regs))


@rule(nv2.LoadTensorOp)
def _load_tensor(lw: KernelLowering, op: nv2.LoadTensorOp) -> None:
    if op.result.type.scope_value != Scope.Workgroup:
        return _prev_load_tensor(lw, op)
    load_tensor_workgroup(lw, op)


@rule(nv2.StoreTensorOp)
def _store_tensor(lw: KernelLowering, op: nv2.StoreTensorOp) -> None:
    if op.object.type.scope_value != Scope.Workgroup:
        return _prev_store_tensor(lw, op)
    store_tensor_workgroup(lw, op)
