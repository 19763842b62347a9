"""Workgroup-scope cooperative matrices with tensor addressing (`coop.load_tensor`,
`coop.store_tensor`) over W = n/128 warpgroups; the accumulator layout, the staged operand
tiles and the products are wgmma.py's.

* A (M x K) and B (K x N), f16/bf16 or 8-bit integers, from `coop.load_tensor`: staged into the
  K-major core-matrix tile of wgmma.py. Every thread stages elements e = t + j·n of the matrix
  traversed row by row (column by column when the view permutes), so neighbouring threads read
  neighbouring columns: contiguous memory for a row-major layout. Each element's address is
  tensor_rules.element_address (all clamp modes, views, blocks); where the layout promises
  16 contiguous bytes are 16 contiguous bytes of the memref (through any rank and a permuting
  view; Constant clamp keeps or discards them together), a uniform run-time alignment test picks
  a path with one ld.global.v4 per 16 bytes (`tensor_vector_groups`, `wgmma.stage_vectors`).
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

    vec = None if op.decode_func is not None else \
        tensor_vector_groups(lw, t, buf, layout, view, n, es)
    mn_major = False
    if vec is None:
        elements()
    else:  # 16-byte groups when the memref is 16-byte aligned at run time (uniform)
        along, aligned = vec
        mn_major = wg.mn_major_groups(t, es, along)
        fill = fill_word(lw, layout, es)

        def group_address(ar, r, c):
            e = element_address(ar, layout, view, r, c, t.columns, False)
            a, off = address(ar, buf, e.index, es)
            keep = ar.and_(e.active, ar.not_(e.discarded))
            return a, off, keep, fill

        def fallback():
            if es == 2:
                wg.stage_vectors(lw, op, t, smem, mn, es, n, along, group_address, wide=False,
                                 mn_major=mn_major)
            else:
                elements()

        wg.aligned_branch(lw, aligned, lambda: wg.stage_vectors(
            lw, op, t, smem, mn, es, n, along, group_address, mn_major=mn_major), fallback)
    wg.end_staging(lw, op)
    lw.vmap[op.result] = wg.StagedTile(t, smem, mn, k, es, mn_major)


def fill_word(lw: KernelLowering, layout, es: int):
    """clampValue's low E bytes repeated over a .b32 word (what a discarded group loads)."""
    if layout.mode.value != "Constant":
        return None
    bits = layout.clamp_value.const & ((1 << (8 * es)) - 1)
    word = 0
    for i in range(4 // es):
        word |= bits << (8 * es * i)
    return lw.imm("b32", f"0x{word:08X}")


def tensor_vector_groups(lw, t, buf, layout, view, n, es):
    """(along_columns, aligned) when every group of P = 16/E consecutive matrix elements along
    the matrix's columns (or rows) is P consecutive memref elements whose first index is a
    multiple of P, and the group is wholly kept or wholly discarded; then `wgmma.stage_vectors`
    may move each group as one ld.global.v4.b32 when the memref's base is 16-byte aligned (the
    uniform run-time predicate `aligned`). None when the layout does not promise this at
    compile time.

    matrixCoordToTensorElement[WithView] (SPV_NV_tensor_addressing) of element (r, c): the
    linear index L = r*cols + c (no view, or a view without dimensions and without clipping)
    is split into span coordinates, the last one fastest (through a view: in the order of its
    permutation). The layout's last dimension is the contiguous one (stride 1, block size 1);
    it moves with the columns when it is the view's fastest coordinate, with the rows when the
    coordinates after it in the view's order span exactly `cols` elements. A group starts at a
    span coordinate that is a multiple of P (span % P == 0), the dimension's offset and extent
    and every other stride are multiples of P (Arith.multiple), so the P elements share every
    other coordinate, all are in bounds or none (clamp mode Constant or Undefined: the other
    modes move out-of-bounds elements apart), and the group's first index (mod 2^32, a multiple
    of P) is P-aligned. With clamp mode Undefined the offset may be any uniform value (the
    alignment test then includes it)."""
    per = 16 // es
    ar = Arith(lw)
    last = len(layout.dimension) - 1
    consts = lambda xs: all(x.is_const for x in xs)  # noqa: E731
    if coop.bit_width(buf.ty.element_type) != 8 * es \
            or layout.mode.value not in ("Undefined", "Constant") \
            or not layout.clamp_value.is_const \
            or not all(b.is_const and b.const == 1 for b in layout.block_size) \
            or not (layout.stride[last].is_const and layout.stride[last].const == 1) \
            or not (layout.span[last].is_const and layout.span[last].const % per == 0) \
            or any(ar.multiple(x) % per for x in layout.stride[:last]):
        return None
    if layout.mode.value == "Constant" and ar.multiple(layout.dimension[last]) % per:
        return None
    first = af.atom(buf.base, 0, af.I64_MAX)
    if ar.multiple(layout.offset[last]) % per:
        # An offset not known to be a multiple of P (a loop's K offset, say): with clamp mode
        # Undefined (no bounds) the groups' first indices are all congruent to it, so the test
        # becomes (base + E*offset) % 16 == 0; a memref of fewer than 2^32 - P elements keeps
        # the uint32 index from wrapping inside a group.
        size = 1
        for d in buf.ty.get_shape():
            size *= d
        if layout.mode.value != "Undefined" or not buf.ty.has_static_shape() \
                or not 0 < size < 2**32 - per:
            return None
        first = af.add(first, af.scale(layout.offset[last], es))
    along = True
    if view is not None:
        ro, rs, co, cs = view.clip
        if view.has_dims or len(view.perm) != last + 1 or not consts(view.clip) \
                or ro.const or co.const or rs.const < t.rows or cs.const < t.columns:
            return None
        p = view.perm.index(last)
        after = [layout.span[i] for i in view.perm[p + 1:]]
        if not consts(after):
            return None
        inner = 1
        for x in after:
            inner *= x.const
        if inner == 1:
            along = True
        elif inner == t.columns:
            along = False
        else:
            return None
        # the span coordinates are the view's coordinates only when Π span < 2^32 (no wrap)
        if not consts(layout.span):
            return None
        total = 1
        for x in layout.span:
            total *= x.const
        if total >= 2**32:
            return None
    if not wg.vector_groups(t.rows, t.columns, es, n, along):
        return None
    return along, wg.aligned_16(lw, first)


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
