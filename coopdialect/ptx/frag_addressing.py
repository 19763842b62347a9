"""Where a lane's fragment elements are: the mma.sync fragment layout of a subgroup matrix (or a
one-line refusal), the (row, col) of each element a lane holds, and the address of each in a
RowMajor/ColumnMajor memref (`buf[offset + row*stride + col]`, or `+ col*stride + row`): what the
subgroup rules (`coop_rules.py`) and the 2:4 rules (`sparse.py`) share. (Any MemoryLayout, for
positions given as affine expressions: `matrix_addressing.py`.)"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation, SSAValue

from coopdialect.dialects import coop
from coopdialect.dialects.coop import Layout
from coopdialect.ptx import fragments as fr
from coopdialect.ptx.kernel_lowering import Buf, KernelLowering, Scalar, op_error, width


def layout_of(op: Operation, t: coop.MatrixType) -> fr.FragLayout:
    try:
        return fr.subgroup_layout(t)
    except fr.LayoutError as e:
        raise op_error(op, f"{e} (target has no such mma.sync fragment)") from None


def lane_terms(lw: KernelLowering, lay: fr.FragLayout) -> tuple[Scalar, Scalar]:
    """The lane-dependent row and column of a fragment layout, as index scalars."""
    g, q, w = lw.lane_geometry()
    out = []
    for coefs in (lay.row_coef, lay.col_coef):
        acc = lw.idx_const(0)
        for c, reg in zip(coefs, (g, q, w)):
            if c:
                acc = lw.index_op("add", acc, lw.index_op("mul", Scalar(IndexType(), reg=reg),
                                                          lw.idx_const(c)))
        out.append(acc)
    return out[0], out[1]


def element_addresses(lw: KernelLowering, buf: Buf, offset: Scalar, stride: Scalar,
                      layout: Layout, t: coop.MatrixType, lay: fr.FragLayout,
                      positions: list[tuple[int, int]]) -> list[tuple[SSAValue, int]]:
    """(address register, byte offset) of each fragment element at `positions` (tile-relative
    to the lane terms), for `buf[offset + row*stride + col]` (RowMajor) or `+ col*stride + row`."""
    es = width(t.element_type) // 8
    row_l, col_l = lane_terms(lw, lay)
    maj_l, min_l = (row_l, col_l) if layout == Layout.RowMajor else (col_l, row_l)
    lane_idx = lw.index_op("add", offset, lw.index_op("add", lw.index_op("mul", maj_l, stride),
                                                      min_l))
    base = lw.index_op("add", Scalar(IndexType(), reg=buf.base),
                       lw.index_op("mul", lane_idx, lw.idx_const(es)))
    base_reg = lw.reg(base)
    out = []
    by_major: dict[int, SSAValue] = {}
    stride_bytes = None
    for r, c in positions:
        maj, mi = (r, c) if layout == Layout.RowMajor else (c, r)
        if stride.const is not None:
            out.append((base_reg, (maj * int(stride.const) + mi) * es))
            continue
        if maj not in by_major:
            if stride_bytes is None:
                stride_bytes = lw.index_op("mul", stride, lw.idx_const(es))
            by_major[maj] = lw.reg(lw.index_op(
                "add", base, lw.index_op("mul", stride_bytes, lw.idx_const(maj))))
        out.append((by_major[maj], mi * es))
    return out


def positions(t: coop.MatrixType, lay: fr.FragLayout) -> list[tuple[int, int]]:
    return [(tr + r0, tc + c0) for tr, tc in fr.tiles(t, lay) for r0, c0 in lay.elems]
