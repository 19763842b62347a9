"""Tensor-addressed loads and stores of accumulator tiles through a plain box layout, the fast way.

A *plain box* is a tensor layout (SPV_NV_tensor_addressing) whose element (r, c) of a rows x
cols matrix is at tensor coordinate offset + (0, ..., 0, r, c): block sizes 1, innermost stride
1, span (1, ..., 1, rows, cols) — a 2-D tile of a matrix, or one slice of a tensor of more
dimensions — with clamp mode Constant or Undefined (`plain_box`). For such a layout
matrixCoordToTensorElement reduces to

    index(r, c) = sum over leading d of offset[d] * stride[d] + (offset[-2] + r) * stride[-2]
                  + offset[-1] + c,

in bounds exactly when every coordinate is inside layoutDimension. The rules of
`tensor_rules.py` compute the pseudo-code step by step per element (about twenty instructions);
these helpers compute one address per accumulator row a thread holds and use immediate offsets
for the columns:

* `store_box`: a uniform test per tile — the tile inside the tensor and the pairs of adjacent
  columns a thread holds aligned for one access — selects whole-row stores (a packed pair per
  `st.global.b32` for 16-bit elements, `st.global.v2` for 32-bit ones); otherwise the exact
  element-by-element store of `tensor_rules.store_elements` (out-of-bounds elements dropped).
* `load_box`: branch-free: per element one bounds predicate, a `selp` of its address (element 0
  of the tensor when out of bounds, so nothing faults), the load, and a `selp` of clampValue
  (Constant mode) for the element out of bounds.

`positions` are the (row, col) `affine.Aff`s of the elements a thread holds, in register order
(an accumulator fragment: registers 2j and 2j+1 hold adjacent columns of one row).
"""

from __future__ import annotations

from xdsl.dialects.builtin import Float32Type

from coopdialect.dialects import ptx
from coopdialect.dialects.tensor_addr import ClampMode
from coopdialect.ptx import affine as af
from coopdialect.ptx.affine import Aff, Arith
from coopdialect.ptx.kernel_lowering import Buf, KernelLowering, reg_kind, width
from coopdialect.ptx.tensor_rules import LayoutV, clamp_bits, ld_suffix, store_elements


def plain_box(layout: LayoutV, rows: int, cols: int, load: bool = False) -> bool:
    """Whether `layout` is a plain box for a rows x cols matrix (module docstring); for a load
    (`load`) also a *row broadcast*: a 1-D layout of span cols, whose element (r, c) is
    offset + c for every row r (linearToSpanCoord wraps r * cols + c to c) — a bias vector."""
    consts = lambda xs: tuple(x.const if x.is_const else None for x in xs)  # noqa: E731
    d = len(layout.dimension)
    if layout.mode not in (ClampMode.Constant, ClampMode.Undefined):
        return False
    if d == 1:
        return load and consts(layout.block_size) == (1,) and consts(layout.span) == (cols,)
    return (consts(layout.block_size) == (1,) * d
            and consts(layout.span) == (1,) * (d - 2) + (rows, cols) and layout.stride[-1].is_const
            and layout.stride[-1].const == 1)


def origin(ar: Arith, layout: LayoutV) -> tuple[Aff, Aff, Aff, object]:
    """(row origin, column origin plus the leading dimensions' part of the index, row stride,
    the predicate that the leading coordinates are inside their dimensions); a row broadcast
    has row origin and stride 0."""
    if len(layout.dimension) == 1:
        return af.const(0), layout.offset[0], af.const(0), True
    *lead, r0, c0 = layout.offset
    ok: object = True
    base = af.const(0)
    for x, n, st in zip(lead, layout.dimension, layout.stride):
        ok = ar.and_(ok, ar.and_(ar.ge(x, af.const(0)), ar.lt(x, n)))
        base = af.add(base, ar.mul(x, st))
    return r0, af.add(c0, base), layout.stride[-2], ok


def _row_address(lw: KernelLowering, ar: Arith, buf: Buf, r0: Aff, row: Aff, c0: Aff,
                 stride: Aff, es: int, rows: dict) -> object:
    """The address of element (row, 0) of the tile, once per distinct row (memo `rows`)."""
    key = (row.const, tuple((c, id(a.reg)) for c, a in row.terms),
           c0.const, tuple((c, id(a.reg)) for c, a in c0.terms))
    if key not in rows:
        idx = af.add(ar.mul(af.add(r0, row), stride), c0)
        rows[key] = lw.inst(ptx.MadOp, ".lo.s64", [ar.reg(idx), lw.imm("b64", str(es)), buf.base],
                            "b64")
    return rows[key]


def _split(pos: tuple[Aff, Aff]) -> tuple[Aff, int]:
    """(the column's lane-dependent part, its constant part)."""
    col = pos[1]
    return af.Aff(col.terms, 0), col.const


def store_box(lw: KernelLowering, op, buf: Buf, layout: LayoutV, t, positions: list,
              regs: list) -> None:
    """Store the tile (registers `regs` at `positions`) through plain box `layout` (module
    docstring); `t` is the matrix type."""
    es = width(t.element_type) // 8
    ar = Arith(lw)
    r0, c0, stride, lead_ok = origin(ar, layout)
    pairs = len(regs) % 2 == 0 and all(
        positions[i][0] is positions[i + 1][0] or (
            _split(positions[i])[0] == _split(positions[i + 1])[0]
            and positions[i][0] == positions[i + 1][0]
            and _split(positions[i + 1])[1] == _split(positions[i])[1] + 1
            and _split(positions[i])[1] % 2 == 0)
        for i in range(0, len(regs), 2))
    lw.comment(f"{op.name} {t.rows}x{t.columns} tile: whole rows when it is inside the tensor"
               f"{' and pair-aligned' if pairs else ''}, else element by element")
    inside = ar.and_(ar.and_(ar.ge(r0, af.const(0)), ar.ge(layout.offset[-1], af.const(0))),
                     ar.and_(ar.ge(layout.dimension[-2], af.add(r0, af.const(t.rows))),
                             ar.ge(layout.dimension[-1],
                                   af.add(layout.offset[-1], af.const(t.columns)))))
    fast = ar.and_(inside, lead_ok)
    if pairs:  # pairs (2k, 2k+1) are one access when stride, column origin and base are even
        odd = lw.inst(ptx.OrOp, ".b64", [ar.reg(stride), ar.reg(c0)], "b64")
        odd = lw.inst(ptx.MulOp, ".lo.s64", [odd, lw.imm("b64", str(es))], "b64")
        odd = lw.inst(ptx.OrOp, ".b64", [odd, buf.base], "b64")
        odd = lw.inst(ptx.AndOp, ".b64", [odd, lw.imm("b64", str(2 * es - 1))], "b64")
        fast = ar.and_(fast, lw.inst(ptx.SetpOp, ".eq.s64", [odd, lw.imm("b64", "0")], "pred"))
    if fast is False:
        return store_elements(lw, op, buf, layout, None, positions, t.columns, regs)
    join = _when(lw, fast)
    ar = Arith(lw)  # addresses of this block
    rows: dict = {}
    suffix = {2: "b16", 4: "f32" if isinstance(t.element_type, Float32Type) else "b32",
              1: "b8"}[es]
    step = 2 if pairs else 1
    for i in range(0, len(regs), step):
        (row, _), (lane_col, c) = positions[i], _split(positions[i])
        base = _row_address(lw, ar, buf, r0, row, af.add(c0, lane_col), stride, es, rows)
        if step == 1:
            lw.emit(ptx.StOp(f".{buf.space}.{suffix}", base, c * es, [regs[i]]))
        elif es == 2:
            pair = lw.emit(ptx.PackOp(".b32", [regs[i], regs[i + 1]], ptx.B32)).out
            lw.emit(ptx.StOp(f".{buf.space}.b32", base, c * es, [pair]))
        else:
            lw.emit(ptx.StOp(f".{buf.space}.v2.{suffix}", base, c * es, [regs[i], regs[i + 1]]))
    if fast is True:
        return
    _join(lw, join)
    join = _when(lw, fast, negate=True)
    store_elements(lw, op, buf, layout, None, positions, t.columns, regs)
    _join(lw, join)


def load_box(lw: KernelLowering, buf: Buf, layout: LayoutV, t, positions: list,
             fallback: list) -> list:
    """Load the tile's elements at `positions` through plain box `layout` (module docstring);
    an element out of bounds is clampValue's bits (Constant mode) or `fallback`'s register
    (Undefined: any value is right). Returns the registers in `positions` order."""
    es = width(t.element_type) // 8
    kind = reg_kind(t.element_type)
    ar = Arith(lw)
    r0, c0, stride, lead_ok = origin(ar, layout)
    cv = clamp_bits(lw, t.element_type, layout.clamp_value, ar) \
        if layout.mode == ClampMode.Constant else None
    broadcast = len(layout.dimension) == 1
    rows_left = None if broadcast else af.sub(layout.dimension[-2], r0)
    cols_left = af.sub(layout.dimension[-1], layout.offset[-1])
    rows: dict = {}
    row_ok: dict = {}
    loaded: dict = {}  # (address register, offset, predicate) -> value: a row broadcast's
    out = []           # elements of one column are one load
    for (row, col), old in zip(positions, fallback):
        lane_col, c = _split((row, col))
        base = _row_address(lw, ar, buf, r0, af.const(0) if broadcast else row,
                            af.add(c0, lane_col), stride, es, rows)
        rk = (0,) if broadcast else (row.const, tuple((k, id(a.reg)) for k, a in row.terms))
        if broadcast:
            row_ok[rk] = True
        elif rk not in row_ok:  # 0 <= r0 + row < dimension[-2] (and the leading coordinates)
            row_ok[rk] = ar.and_(lead_ok, ar.and_(ar.ge(af.add(r0, row), af.const(0)),
                                                   ar.lt(row, rows_left)))
        key = (rk, col.const, tuple((k, id(a.reg)) for k, a in col.terms))
        if key in loaded:  # Undefined mode: any value is right out of bounds, so one load too
            out.append(loaded[key])
            continue
        ok = ar.and_(row_ok[rk], ar.and_(ar.ge(af.add(layout.offset[-1], col), af.const(0)),
                                          ar.lt(col, cols_left)))
        addr, off = base, c * es
        if ok is not True:  # out of bounds: read the tensor's element 0 instead, then discard
            if off:
                addr = lw.inst(ptx.AddOp, ".s64", [addr, lw.imm("b64", str(off))], "b64")
            addr, off = lw.inst(ptx.SelpOp, ".b64", [addr, buf.base, ok], "b64"), 0
        v = lw.emit(ptx.LdOp(f".{buf.space}.{ld_suffix(t.element_type)}", addr, off,
                             [ptx.reg_type(kind)])).outs[0]
        if ok is not True:
            v = lw.inst(ptx.SelpOp, f".{kind}", [v, cv if cv is not None else old, ok], kind)
        loaded[key] = v
        out.append(v)
    return out


def _when(lw: KernelLowering, pred, negate: bool = False):
    from xdsl.ir import Block

    body, join = lw.new_block(), Block()
    lw.emit(ptx.CbraOp(pred, join, body, negate=not negate))
    lw.cur = body
    return join


def _join(lw: KernelLowering, join) -> None:
    lw.emit(ptx.BraOp(join))
    lw.blocks.append(join)
    lw.cur = join
