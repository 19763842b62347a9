"""The consumers' epilogue in a staged kernel (`pipelined.py`): tensor-addressed stores of the
accumulator tile.

`coop.store_tensor` of a Workgroup-scope accumulator through a plain box layout (block size 1,
innermost stride 1, span = the matrix — or (1, ..., 1, rows, cols), one slice of a tensor of
more dimensions —, no view; clamp mode Constant or Undefined) takes one of two paths, chosen
once per tile by a uniform test:

* the tile lies inside the tensor (its rows and columns below layoutDimension, the leading
  coordinates of a slice of a higher-dimensional tensor inside theirs) and the pairs of
  adjacent columns a thread holds are aligned for one store (row stride and base address even
  in elements): each thread computes one address per accumulator row it holds and stores each
  register pair with an immediate offset (`st.global.b32` of two packed 16-bit elements,
  `st.global.v2` of two 32-bit ones) — the Workgroup-tile kernels' store;
* otherwise (an edge tile, an odd row stride): the exact element-by-element store of
  `tensor_rules.store_elements` (SPV_NV_cooperative_matrix2 matrixCoordToTensorElement, out-of-
  bounds elements dropped in Constant mode).

Any other store_tensor goes to the generic rule (element by element).
"""

from __future__ import annotations

from xdsl.dialects.builtin import Float32Type

from coopdialect.dialects import coop_nv2 as nv2
from coopdialect.dialects import ptx
from coopdialect.dialects.coop import Scope
from coopdialect.dialects.tensor_addr import ClampMode
from coopdialect.ptx import affine as af
from coopdialect.ptx.affine import Arith
from coopdialect.ptx.kernel_lowering import RULES, width
from coopdialect.ptx.pipelined_roles import CONSUMER_RULES, RoleLowering, acc_geometry
from coopdialect.ptx.tensor_rules import LayoutV, store_elements


def _plain_box(layout: LayoutV, rows: int, cols: int) -> bool:
    """A layout whose element (r, c) of a rows x cols matrix is at tensor coordinate offset +
    (0, ..., 0, r, c): block sizes 1, innermost stride 1, span = (1, ..., 1, rows, cols) (a
    2-D box, or one slice of a higher-dimensional tensor)."""
    consts = lambda xs: tuple(x.const if x.is_const else None for x in xs)  # noqa: E731
    d = len(layout.dimension)
    return (d >= 2 and consts(layout.block_size) == (1,) * d
            and consts(layout.span) == (1,) * (d - 2) + (rows, cols) and layout.stride[-1].is_const
            and layout.stride[-1].const == 1
            and layout.mode in (ClampMode.Constant, ClampMode.Undefined))


def _c_store_tensor(lw: RoleLowering, op: nv2.StoreTensorOp) -> None:
    t = op.object.type
    layout = lw.vmap[op.layout]
    if t.scope_value != Scope.Workgroup or op.view is not None or \
            not _plain_box(layout, t.rows, t.columns):
        return RULES[nv2.StoreTensorOp](lw, op)
    if lw.wgmma_in_flight:
        lw.emit(ptx.WgmmaWaitGroupOp(0))
        lw.wgmma_in_flight = False
    buf = lw.vmap[op.pointer]
    regs = list(lw.vmap[op.object].regs)
    es = width(t.element_type) // 8
    ar = Arith(lw)
    *lead, r0, c0 = layout.offset
    stride = layout.stride[-2]
    # the slice's leading coordinates: in bounds, and their part of every element's index
    lead_ok: object = True
    base = af.const(0)
    for x, n, st in zip(lead, layout.dimension, layout.stride):
        lead_ok = ar.and_(lead_ok, ar.and_(ar.ge(x, af.const(0)), ar.lt(x, n)))
        base = af.add(base, ar.mul(x, st))
    lw.comment(f"{op.name} {t.rows}x{t.columns} accumulator tile: whole-tile stores when it is "
               "inside the tensor and pair-aligned, else element by element")
    inside = ar.and_(ar.and_(ar.ge(r0, af.const(0)), ar.ge(c0, af.const(0))),
                     ar.and_(ar.ge(layout.dimension[-2], af.add(r0, af.const(t.rows))),
                             ar.ge(layout.dimension[-1], af.add(c0, af.const(t.columns)))))
    inside = ar.and_(inside, lead_ok)
    # pairs (2k, 2k+1) of a row are one aligned access when the row stride, the column origin
    # and the base address are even in elements
    odd = lw.inst(ptx.OrOp, ".b64", [ar.reg(stride), ar.reg(af.add(c0, base))], "b64")
    odd = lw.inst(ptx.MulOp, ".lo.s64", [odd, lw.imm("b64", str(es))], "b64")
    odd = lw.inst(ptx.OrOp, ".b64", [odd, buf.base], "b64")
    odd = lw.inst(ptx.AndOp, ".b64", [odd, lw.imm("b64", str(2 * es - 1))], "b64")
    aligned = lw.inst(ptx.SetpOp, ".eq.s64", [odd, lw.imm("b64", "0")], "pred")
    fast = ar.and_(inside, aligned)

    join = lw.when(fast)
    _whole_tile(lw, t, op, buf, regs, r0, af.add(c0, base), stride, es)
    lw.join(join)
    join = lw.when(fast, negate=True)
    store_elements(lw, op, buf, layout, None, lw.workgroup_acc_positions(op, t), t.columns, regs)
    lw.join(join)


def _whole_tile(lw: RoleLowering, t, op, buf, regs, r0, c0, stride, es: int) -> None:
    ar = Arith(lw)
    geo = acc_geometry(lw, t, op)
    row = af.atom(lw.sh["acc_row"], 0, 64 * lw.plan.blocks * lw.plan.consumers - 1)
    col = af.atom(lw.sh["acc_col"], 0, 6)
    rows: dict[int, object] = {}
    for i in range(0, len(regs), 2):  # registers 2j, 2j+1 hold adjacent columns
        r, c = geo[i]
        if r not in rows:  # base + ((r0 + acc_row + r) * stride + c0 + acc_col) * es
            at = ar.mul(af.add(af.add(r0, row), af.const(r)), stride)
            idx = af.add(af.add(at, c0), col)
            rows[r] = lw.inst(ptx.MadOp, ".lo.s64", [ar.reg(idx), lw.imm("b64", str(es)),
                                                     buf.base], "b64")
        if es == 2:
            pair = lw.emit(ptx.PackOp(".b32", [regs[i], regs[i + 1]], ptx.B32)).out
            lw.emit(ptx.StOp(f".{buf.space}.b32", rows[r], c * es, [pair]))
        else:
            kind = "f32" if isinstance(t.element_type, Float32Type) else "b32"
            lw.emit(ptx.StOp(f".{buf.space}.v2.{kind}", rows[r], c * es, [regs[i], regs[i + 1]]))


CONSUMER_RULES[nv2.StoreTensorOp] = _c_store_tensor
