"""Tensor layouts, tensor views and tensor-addressed loads/stores -> PTX (convert-coop-to-ptx).

SPV_NV_tensor_addressing 3.X / SPV_NV_cooperative_matrix2 (OpCooperativeMatrixLoadTensorNV,
OpCooperativeMatrixStoreTensorNV), with the interpreter's exact semantics
(coopdialect/interpreter/tensor_addr.py, coop_nv2.py):

* A `!tensor_addr.layout` value is a `LayoutV` and a `!tensor_addr.view` a `ViewV`: the
  spec's `tensorLayoutNV` / `tensorViewNV` state as `affine.Aff` expressions (uint32 fields,
  int32 offsets), constants when the operands are constants. The set ops compute new states at
  compile time where they can and emit 64-bit arithmetic where they cannot; nothing is stored.
* `element_address` is matrixCoordToTensorElement[WithView] for one matrix element (row and
  column as `Aff`s of the lane's fragment coordinates): view clip, linearToViewCoord,
  viewCoordToLinear, linearToSpanCoord, spanCoordToTensorCoord with the five clamp modes,
  block coordinates, tensorCoordToLinear — each step the pseudo-code's, folded by ranges.
* Subgroup scope: each lane computes the element index of each fragment element it holds
  (`fragments.py` order) and moves one element per instruction. A load of an element that the
  view clips keeps Object's element; a Constant-mode out-of-bounds element gets clampValue's
  low bits; the load itself reads the memref's element 0 instead (no fault) and is discarded by
  a `selp`. Stores branch around the elements they must not write (clipped, or out of bounds in
  any mode but Undefined). With a DecodeFunc the function is inlined per element, behind a
  branch when the element may be inactive (inline_calls.decode_element).
* Workgroup scope (A/B operands of wgmma, accumulators over several warpgroups) is in
  nv2_workgroup.py, which wraps the load/store rules here and uses `element_address` the same way.
* Undefined clamp mode with an out-of-bounds coordinate is undefined behaviour: the address is
  computed without clamping, as for an in-bounds element.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type
from xdsl.ir import Block

from coopdialect.dialects import coop, ptx
from coopdialect.dialects import coop_nv2 as nv2
from coopdialect.dialects import tensor_addr as ta
from coopdialect.dialects.tensor_addr import ClampMode
from coopdialect.ptx import affine as af
from coopdialect.ptx import fragments as fr
from coopdialect.ptx.affine import Aff, Arith, Pred
from coopdialect.ptx.inline_calls import decode_element
from coopdialect.ptx.kernel_lowering import (Buf, Frag, KernelLowering, Scalar, mem_suffix, op_error, reg_kind,
                                             rule)


@dataclass(frozen=True)
class LayoutV:
    """A tensor layout value: the type's clamp mode and the tensorLayoutNV state."""

    mode: ClampMode
    block_size: tuple[Aff, ...]
    dimension: tuple[Aff, ...]
    stride: tuple[Aff, ...]
    offset: tuple[Aff, ...]
    span: tuple[Aff, ...]
    clamp_value: Aff


@dataclass(frozen=True)
class ViewV:
    """A tensor view value: hasDimensions, the permutation and the tensorViewNV state."""

    has_dims: bool
    perm: tuple[int, ...]
    dimension: tuple[Aff, ...]
    stride: tuple[Aff, ...]
    clip: tuple[Aff, Aff, Aff, Aff]


@dataclass
class Element:
    """matrixCoordToTensorElement of one matrix element (see tensor_addr.Addresses)."""

    index: Aff
    active: Pred
    discarded: Pred
    block: list[Aff]
    inner: list[Aff]


def _u32(ar: Arith, s: Scalar) -> Aff:
    if s.const is not None:
        return af.const(int(s.const) & af.U32)
    return ar.from_u32(s.reg)


def _s32(ar: Arith, s: Scalar) -> Aff:
    if s.const is not None:
        return af.const(ta.s32(int(s.const)))
    return ar.from_s32(s.reg)


def _consts(vals) -> tuple[Aff, ...]:
    return tuple(af.const(v) for v in vals)


def layout_from_state(mode: ClampMode, s: ta.LayoutState) -> LayoutV:
    return LayoutV(mode, _consts(s.block_size), _consts(s.dimension), _consts(s.stride),
                   _consts(ta.s32(v) for v in s.offset), _consts(s.span), af.const(s.clamp_value))


def view_from_state(t: ta.TensorViewType, s: ta.ViewState) -> ViewV:
    return ViewV(t.has_dims, t.perm, _consts(s.dimension), _consts(s.stride), _consts(s.clip))


@rule(ta.CreateLayoutOp)
def _create_layout(lw: KernelLowering, op) -> None:
    t = op.result.type
    lw.vmap[op.result] = layout_from_state(t.mode, ta.LayoutState.create(t.rank))


@rule(ta.LayoutConstantOp)
def _layout_constant(lw: KernelLowering, op) -> None:
    lw.vmap[op.result] = layout_from_state(op.result.type.mode, op.state)


@rule(ta.CreateViewOp)
def _create_view(lw: KernelLowering, op) -> None:
    t = op.result.type
    lw.vmap[op.result] = view_from_state(t, ta.ViewState.create(t.rank))


@rule(ta.ViewConstantOp)
def _view_constant(lw: KernelLowering, op) -> None:
    lw.vmap[op.result] = view_from_state(op.result.type, op.state)


def _ceil_div(ar: Arith, d: Aff, b: Aff) -> Aff:
    q, _ = ar.divmod(af.add(d, af.sub(b, af.const(1))), b)
    return q


@rule(*ta.LAYOUT_SET_OPS)
def _layout_set(lw: KernelLowering, op) -> None:
    """The state update of apply_layout (tensor_addr.py), on Aff values. The stride rule is not
    checked at run time: breaking it is undefined behaviour (the interpreter raises)."""
    ar = Arith(lw)
    s: LayoutV = lw.vmap[op.input]
    vals = [lw.scalar(v) for v in op.values]
    dim = len(s.dimension)
    if isinstance(op, ta.LayoutSetDimensionOp):
        d = tuple(_u32(ar, v) for v in vals)
        stride = [af.const(0)] * dim
        stride[dim - 1] = af.const(1)
        for i in range(dim - 2, -1, -1):
            stride[i] = ar.mask32(ar.mul(stride[i + 1], _ceil_div(ar, d[i + 1],
                                                                  s.block_size[i + 1])))
        new = LayoutV(s.mode, s.block_size, d, tuple(stride), (af.const(0),) * dim, d,
                      s.clamp_value)
    elif isinstance(op, ta.LayoutSetStrideOp):
        new = LayoutV(s.mode, s.block_size, s.dimension, tuple(_u32(ar, v) for v in vals),
                      s.offset, s.span, s.clamp_value)
    elif isinstance(op, ta.LayoutSetBlockSizeOp):
        new = LayoutV(s.mode, tuple(_u32(ar, v) for v in vals), s.dimension, s.stride, s.offset,
                      s.span, s.clamp_value)
    elif isinstance(op, ta.LayoutSliceOp):
        offs = tuple(ar.wrap_s32(af.add(s.offset[i], _s32(ar, vals[2 * i]))) for i in range(dim))
        spans = tuple(_u32(ar, vals[2 * i + 1]) for i in range(dim))
        new = LayoutV(s.mode, s.block_size, s.dimension, s.stride, offs, spans, s.clamp_value)
    else:
        assert isinstance(op, ta.LayoutSetClampValueOp)
        new = LayoutV(s.mode, s.block_size, s.dimension, s.stride, s.offset, s.span,
                      _u32(ar, vals[0]))
    lw.vmap[op.result] = new


@rule(*ta.VIEW_SET_OPS)
def _view_set(lw: KernelLowering, op) -> None:
    """The state update of apply_view (tensor_addr.py), on Aff values."""
    ar = Arith(lw)
    s: ViewV = lw.vmap[op.input]
    vals = tuple(_u32(ar, lw.scalar(v)) for v in op.values)
    dim = len(s.dimension)
    if isinstance(op, ta.ViewSetDimensionOp):
        stride = [af.const(0)] * dim
        stride[dim - 1] = af.const(1)
        for i in range(dim - 2, -1, -1):
            stride[i] = ar.mask32(ar.mul(stride[i + 1], vals[i + 1]))
        new = ViewV(s.has_dims, s.perm, vals, tuple(stride), s.clip)
    elif isinstance(op, ta.ViewSetStrideOp):
        new = ViewV(s.has_dims, s.perm, s.dimension, vals, s.clip)
    else:
        assert isinstance(op, ta.ViewSetClipOp)
        new = ViewV(s.has_dims, s.perm, s.dimension, s.stride, vals)  # type: ignore[arg-type]
    lw.vmap[op.result] = new


def element_address(ar: Arith, lay: LayoutV, view: ViewV | None, r: Aff, c: Aff, cols: int,
                    is_store: bool) -> Element:
    """matrixCoordToTensorElement[WithView] of element (r, c) of a matrix with `cols` columns
    (the step order of tensor_addr.tensor_element_indices; element index in memref elements)."""
    ldim = len(lay.dimension)
    active: Pred = True
    if view is None:
        index = af.add(af.scale(r, cols), c)
    else:
        ro, rs, co, cs = view.clip
        # clipped away: r < ro || r >= ro + rs || c < co || c >= co + cs
        out = ar.or_(ar.or_(ar.lt(r, ro), ar.ge(r, af.add(ro, rs))),
                     ar.or_(ar.lt(c, co), ar.ge(c, af.add(co, cs))))
        active = ar.not_(out)
        width = ar.min_(af.const(cols), cs)
        # For an active element r - ro and c - co are in [0, rows) and [0, width): no wrap.
        dr = _assume(ar, af.sub(r, ro), 0, r.hi)
        dc = _assume(ar, af.sub(c, co), 0, min(c.hi, width.hi - 1))
        index = af.add(ar.mul(dr, width), dc)
        vdim = len(view.dimension)
        dims = view.dimension if view.has_dims else lay.span[:vdim]
        vc: list[Aff] = [af.const(0)] * vdim
        rest = index
        for d in range(vdim - 1, -1, -1):
            i = view.perm[d]
            rest, vc[i] = ar.divmod(rest, dims[i])
        if view.has_dims:
            vstride = list(view.stride)
        else:
            vstride = [af.const(0)] * vdim
            vstride[vdim - 1] = af.const(1)
            for d in range(vdim - 2, -1, -1):
                vstride[d] = ar.mask32(ar.mul(vstride[d + 1], lay.span[d + 1]))
        index = af.const(0)
        for d in range(vdim - 1, -1, -1):
            index = ar.mask32(af.add(index, ar.mul(vc[d], vstride[d])))
    sc: list[Aff] = [af.const(0)] * ldim
    rest = index
    for d in range(ldim - 1, -1, -1):
        rest, sc[d] = ar.divmod(rest, lay.span[d])
    mode = lay.mode
    if is_store and mode != ClampMode.Undefined:
        mode = ClampMode.Constant
    discarded: Pred = False
    blocks, inner = [], []
    for d in range(ldim):
        s = af.add(sc[d], lay.offset[d])
        n, bs = lay.dimension[d], lay.block_size[d]
        if mode == ClampMode.Undefined and bs.is_const and bs.const == 1:
            # In bounds (anything else is undefined), and the index is taken modulo 2^32:
            # the unwrapped sum is congruent to the int32 coordinate, so no wrap is needed.
            blocks.append(s)
            inner.append(af.const(0))
            continue
        x = ar.wrap_s32(s)
        if mode == ClampMode.Undefined:
            x = _assume(ar, x, 0, max(0, n.hi - 1))  # out of bounds is undefined
        else:
            oob = ar.or_(ar.lt(x, af.const(0)), ar.ge(x, n))
            if mode == ClampMode.Constant:
                discarded = ar.or_(discarded, oob)
            elif mode == ClampMode.ClampToEdge:
                x = ar.select(oob, ar.min_(ar.max_(x, af.const(0)), af.sub(n, af.const(1))), x)
            elif mode == ClampMode.Repeat:
                x = ar.select(oob, ar.divmod(x, n)[1], x)
            else:  # RepeatMirrored, as the clamp-mode table states it
                m2 = af.sub(af.scale(n, 2), af.const(2))
                y = ar.divmod(x, m2)[1] if not (m2.is_const and m2.const <= 0) else af.const(0)
                y = ar.select(ar.ge(y, n), af.sub(m2, y), y)
                x = ar.select(oob, y, x)
            if mode != ClampMode.Constant and n.lo >= 1:
                x = _assume(ar, x, 0, n.hi - 1)
        q, rm = ar.divmod(x, bs)
        blocks.append(q)
        inner.append(rm)
    index = af.const(0)
    for d in range(ldim):
        index = ar.mask32(af.add(index, ar.mul(blocks[d], lay.stride[d])))
    return Element(index, active, discarded, blocks, inner)


def _assume(ar: Arith, x: Aff, lo: int, hi: int) -> Aff:
    """x, with its range narrowed to [lo, hi] (a fact the caller proves for the elements whose
    result is used). A constant keeps its value; an expression becomes one atom."""
    if x.is_const:
        return x
    if lo <= x.lo and x.hi <= hi:
        return x
    a = ar.as_atom(x)
    (c, at), = a.terms
    return af.atom(at.reg, max(lo, at.lo), min(hi, at.hi)) if max(lo, at.lo) <= min(hi, at.hi) \
        else af.atom(at.reg, lo, hi)


# ---------------------------------------------------------------------------------------------
# Element moves
# ---------------------------------------------------------------------------------------------


def elem_bytes(t) -> int:
    return coop.bit_width(t) // 8


def address(ar: Arith, buf: Buf, index: Aff, es: int) -> tuple:
    """(address register, byte offset) of memref element `index` (an Aff in [0, 2^32))."""
    lw = ar.lw
    var = af.Aff(index.terms, 0)
    if var.is_const:
        return buf.base, index.const * es
    key = ("addr", id(buf.base), ar._key(var), es)
    if key not in ar.memo:
        ar.memo[key] = lw.inst(ptx.MadOp, ".lo.s64", [ar.reg(var), lw.imm("b64", str(es)),
                                                      buf.base], "b64")
    return ar.memo[key], index.const * es


def clamp_bits(lw: KernelLowering, et, v: Aff, ar: Arith):
    """clampValue's low bits as a register of the element's class (clamp_value_as)."""
    kind = reg_kind(et)
    bits = coop.bit_width(et)
    if bits > 32:
        raise ValueError("64-bit components")
    if v.is_const:
        lit = f"0x{v.const & ((1 << bits) - 1):0{max(bits // 4, 1)}X}"
        if kind == "f32":
            return lw.imm("f32", "0f" + lit[2:].rjust(8, "0"))
        return lw.imm(kind, lit)
    r32 = ar.low32(v)
    if kind == "b16":
        return lw.inst(ptx.CvtOp, ".u16.u32", [r32], "b16")
    if kind == "f32":
        return lw.inst(ptx.MovOp, ".b32", [r32], "f32")
    return r32


def ld_suffix(t) -> str:
    if isinstance(t, Float16Type | BFloat16Type):
        return "b16"
    if isinstance(t, Float32Type):
        return "f32"
    return mem_suffix(t)


def skip_unless(lw: KernelLowering, p: Pred, body) -> None:
    """Run `body()` (which emits) only where p holds: `@!p bra skip; body; skip:`."""
    if p is True:
        body()
        return
    if p is False:
        return
    then, skip = lw.new_block(), Block()
    lw.emit(ptx.CbraOp(p, skip, then, negate=True))
    lw.cur = then
    body()
    lw.emit(ptx.BraOp(skip))
    lw.blocks.append(skip)
    lw.cur = skip


def frag_positions(lw: KernelLowering, t: coop.MatrixType, lay: fr.FragLayout) -> list[tuple[Aff, Aff]]:
    """(row, col) of every fragment element this lane holds, as Affs of g, q, w."""
    g, q, w = lw.lane_geometry()
    atoms = (af.atom(g, 0, 7), af.atom(q, 0, 3), af.atom(w, 0, 3))
    row_l = af.const(0)
    col_l = af.const(0)
    for coef_r, coef_c, a in zip(lay.row_coef, lay.col_coef, atoms):
        row_l = af.add(row_l, af.scale(a, coef_r))
        col_l = af.add(col_l, af.scale(a, coef_c))
    return [(af.add(row_l, af.const(tr + r0)), af.add(col_l, af.const(tc + c0)))
            for tr, tc in fr.tiles(t, lay) for r0, c0 in lay.elems]


def subgroup_positions(lw: KernelLowering, op, t: coop.MatrixType) -> list[tuple[Aff, Aff]]:
    """Positions of a subgroup matrix's elements in this lane: the mma.sync fragment where the
    type has one, else (an accumulator of another shape, e.g. a 2x2 reduction's 8x8 result)
    the linear layout: element k of lane l is matrix element l + 32k in row-major order."""
    try:
        return frag_positions(lw, t, fr.subgroup_layout(t))
    except fr.LayoutError as e:
        n, cols = t.rows * t.columns, t.columns
        if t.use_value != coop.Use.MatrixAcc or n % 32 or (32 % cols and cols % 32):
            raise op_error(op, f"{e} (target has no such mma.sync fragment)") from None
    ar = Arith(lw)
    lane = af.atom(lw.cached("u64 lane", lambda: lw.u64(lw.special("%laneid"), True)), 0, 31)
    out = []
    if 32 % cols == 0:
        lr, lc = ar.divmod(lane, af.const(cols))
        per = 32 // cols
        return [(af.add(lr, af.const(k * per)), lc) for k in range(n // 32)]
    per = cols // 32
    for k in range(n // 32):
        out.append((af.const(k // per), af.add(lane, af.const(32 * (k % per)))))
    return out


def _check_types(op, buf: Buf, t: coop.MatrixType) -> None:
    if coop.bit_width(t.element_type) > 32:
        raise op_error(op, f"tensor-addressed {t.element_type} components: only 8- to 32-bit "
                           "components are lowered")


def load_elements(lw: KernelLowering, op, buf: Buf, lay: LayoutV, view: ViewV | None,
                  positions: list[tuple[Aff, Aff]], cols: int, obj: list, et) -> list:
    """The loaded value of each element at `positions` (obj: Object's registers)."""
    ar = Arith(lw)
    es = elem_bytes(buf.ty.element_type)
    out = []
    kind = reg_kind(et)
    for (r, c), old in zip(positions, obj):
        e = element_address(ar, lay, view, r, c, cols, False)
        sel = ar.and_(e.active, ar.not_(e.discarded))
        fallback = old
        if e.discarded is not False:
            cv = clamp_bits(lw, et, lay.clamp_value, ar)
            fallback = cv if e.active is True else lw.inst(ptx.SelpOp, f".{kind}",
                                                           [cv, old, e.active], kind)
        if sel is False:
            out.append(fallback)
            continue
        if getattr(op, "decode_func", None) is not None:
            out.append(decode_element(lw, op, buf, e, sel, fallback))
            continue
        a, off = address(ar, buf, e.index, es)
        if sel is not True:
            # an inactive element reads element 0 instead (no fault), then selp discards it
            if off:
                a = lw.inst(ptx.AddOp, ".s64", [a, lw.imm("b64", str(off))], "b64")
            a, off = lw.inst(ptx.SelpOp, ".b64", [a, buf.base, sel], "b64"), 0
        v = lw.emit(ptx.LdOp(f".{buf.space}.{ld_suffix(buf.ty.element_type)}", a, off,
                             [ptx.reg_type(kind)])).outs[0]
        if sel is not True:
            v = lw.inst(ptx.SelpOp, f".{kind}", [v, fallback, sel], kind)
        out.append(v)
    return out


def store_elements(lw: KernelLowering, op, buf: Buf, lay: LayoutV, view: ViewV | None,
                   positions: list[tuple[Aff, Aff]], cols: int, regs: list) -> None:
    ar = Arith(lw)
    es = elem_bytes(buf.ty.element_type)
    suffix = mem_suffix(buf.ty.element_type, store=True)
    for (r, c), v in zip(positions, regs):
        e = element_address(ar, lay, view, r, c, cols, True)
        sel = ar.and_(e.active, ar.not_(e.discarded))
        if sel is False:
            continue
        a, off = address(ar, buf, e.index, es)
        skip_unless(lw, sel, lambda a=a, off=off, v=v: lw.emit(
            ptx.StOp(f".{buf.space}.{suffix}", a, off, [v])))


@rule(nv2.LoadTensorOp)
def _load_tensor(lw: KernelLowering, op: nv2.LoadTensorOp) -> None:
    t = op.result.type  # Subgroup scope (nv2_workgroup.py wraps this rule for Workgroup)
    pos = subgroup_positions(lw, op, t)
    buf = lw.vmap[op.pointer]
    _check_types(op, buf, t)
    layout = lw.vmap[op.layout]
    view = lw.vmap[op.view] if op.view is not None else None
    obj = lw.vmap[op.object]
    lw.comment(f"{op.name} -> {t.rows}x{t.columns}x{t.element_type} {t.use_value.value}, "
               f"clamp {layout.mode.value}{', view' if view else ''}"
               f"{', decode @' + op.decode_func.string_value() if op.decode_func else ''}")
    regs = load_elements(lw, op, buf, layout, view, pos, t.columns,
                         list(obj.regs), t.element_type)
    lw.vmap[op.result] = Frag(t, regs)


@rule(nv2.StoreTensorOp)
def _store_tensor(lw: KernelLowering, op: nv2.StoreTensorOp) -> None:
    t = op.object.type  # Subgroup scope (nv2_workgroup.py wraps this rule for Workgroup)
    pos = subgroup_positions(lw, op, t)
    buf = lw.vmap[op.pointer]
    _check_types(op, buf, t)
    layout = lw.vmap[op.layout]
    _check_store_blocks(op, layout)
    view = lw.vmap[op.view] if op.view is not None else None
    lw.comment(f"{op.name} {t.rows}x{t.columns}x{t.element_type}, clamp {layout.mode.value}"
               f"{', view' if view else ''}")
    store_elements(lw, op, buf, layout, view, pos, t.columns,
                   list(lw.vmap[op.object].regs))


def _check_store_blocks(op, layout: LayoutV) -> None:
    for i, b in enumerate(layout.block_size):
        if b.is_const and b.const > 1:
            raise op_error(op, f"a block size larger than 1 must not be used with a tensor "
                               f"store (blockSize[{i}] = {b.const})")

