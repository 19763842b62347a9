"""Per-lane register fragments of `mma.sync` and `wgmma` (PTX ISA 9.7.14.5.x / 9.7.15.5.1).

A coop matrix is cut into tiles of the instruction's operand shape; each lane holds, per tile,
the elements the ISA's fragment figures give it. With `g = lane >> 2` (groupID), `q = lane & 3`
(threadID_in_group) and `w` = warp within the warpgroup, element `v` of a tile sits at

    row = rg*g + rq*q + rw*w + r0[v],   col = cg*g + cq*q + c0[v]

(relative to the tile's corner). Layouts, checked against CuTe's SM80 traits
(`SM80_16x8x16_F32F16F16F32_TN`, `SM80_16x8x32_S32S8S8S32_TN`) and the wgmma D figure:

* A, 16-bit, m16n8k16 (16x16 tile): a0,a1 (g, 2q+{0,1}); a2,a3 (g+8, ..); a4..a7 the same at col+8.
* A, 8-bit, m16n8k32 (16x32 tile): a0..a3 (g, 4q+{0..3}); a4..a7 (g+8, ..); a8..a15 the same at col+16.
* B, 16-bit (16x8 tile): b0,b1 (2q+{0,1}, g); b2,b3 (2q+8+{0,1}, g).
* B, 8-bit (32x8 tile): b0..b3 (4q+{0..3}, g); b4..b7 (4q+16+{0..3}, g).
* C/D (16x8 tile): c0,c1 (g, 2q+{0,1}); c2,c3 (g+8, ..).
* wgmma D (64xN tile, workgroup scope): d_i at (16w + g + 8*((i>>1)&1), 8*(i>>2) + 2q + (i&1)).

Fragment order across tiles: tiles in row-major order, then `v`.
"""

from __future__ import annotations

from dataclasses import dataclass

from coopdialect.dialects.coop import MatrixType, Scope, Use, bit_width


@dataclass(frozen=True)
class FragLayout:
    """Where each per-lane fragment element of one tile lives (see the module docstring)."""

    tile: tuple[int, int]
    """Tile shape (rows, cols)."""
    row_coef: tuple[int, int, int]
    """(rg, rq, rw): lane-dependent part of the row."""
    col_coef: tuple[int, int, int]
    """(cg, cq, cw): lane-dependent part of the column."""
    elems: tuple[tuple[int, int], ...]
    """(r0, c0) of each element of a tile, in register order."""


def _a_layout(width: int) -> FragLayout:
    if width == 16:
        elems = tuple((8 * ((v >> 1) & 1), (v & 1) + 8 * (v >> 2)) for v in range(8))
        return FragLayout((16, 16), (1, 0, 0), (0, 2, 0), elems)
    elems = tuple((8 * ((v >> 2) & 1), (v & 3) + 16 * (v >> 3)) for v in range(16))
    return FragLayout((16, 32), (1, 0, 0), (0, 4, 0), elems)


def _b_layout(width: int) -> FragLayout:
    if width == 16:
        elems = tuple(((v & 1) + 8 * (v >> 1), 0) for v in range(4))
        return FragLayout((16, 8), (0, 2, 0), (1, 0, 0), elems)
    elems = tuple(((v & 3) + 16 * (v >> 2), 0) for v in range(8))
    return FragLayout((32, 8), (0, 4, 0), (1, 0, 0), elems)


ACC_LAYOUT = FragLayout((16, 8), (1, 0, 0), (0, 2, 0),
                        tuple((8 * (v >> 1), v & 1) for v in range(4)))


def wgmma_acc_layout(n: int) -> FragLayout:
    """The wgmma D fragment of a 64xN accumulator (one warpgroup)."""
    elems = tuple((8 * ((i >> 1) & 1), 8 * (i >> 2) + (i & 1)) for i in range(n // 2))
    return FragLayout((64, n), (1, 0, 16), (0, 2, 0), elems)


class LayoutError(Exception):
    """The matrix type has no fragment layout on this backend (message says why)."""


def missing_use(op) -> str | None:
    """Why `op` has no workgroup-scope (wgmma) lowering when one of its matrices lacks a Use:
    wgmma tells A, B and C apart by Use, and an NV matrix has none. None when all have one."""
    for v in (*op.operands, *op.results):
        if isinstance(v.type, MatrixType) and v.type.is_nv:
            return f"workgroup-scope matrices without a Use (NV) have no wgmma lowering: give {v.type} a Use"
    return None


def subgroup_layout(t: MatrixType) -> FragLayout:
    """The mma.sync fragment layout of a subgroup-scope matrix type; LayoutError if none."""
    if t.is_nv:
        raise LayoutError("matrices without a Use (NV) have no PTX fragment layout; give a Use")
    if t.scope_value != Scope.Subgroup:
        raise LayoutError(f"{t.scope_value.value} scope is not a warp fragment")
    width = bit_width(t.element_type)
    use = t.use_value
    if use == Use.MatrixAcc:
        lay = ACC_LAYOUT
    elif width not in (8, 16):
        raise LayoutError(
            f"mma.sync has no {use.value} operand of {width}-bit components ({t.element_type})")
    else:
        lay = _a_layout(width) if use == Use.MatrixA else _b_layout(width)
    tr, tc = lay.tile
    if t.rows % tr or t.columns % tc:
        raise LayoutError(
            f"a {use.value} of {t.rows}x{t.columns} is not a whole number of {tr}x{tc} "
            f"mma.sync tiles")
    return lay


def tiles(t: MatrixType, lay: FragLayout) -> list[tuple[int, int]]:
    """Tile corners (row, col) in fragment order."""
    tr, tc = lay.tile
    return [(i * tr, j * tc) for i in range(t.rows // tr) for j in range(t.columns // tc)]


def element_positions(t: MatrixType, lay: FragLayout, lane: int, warp: int = 0) -> list[tuple[int, int]]:
    """(row, col) of every fragment element held by `lane` (of warp `warp`), in fragment order."""
    g, q = lane >> 2, lane & 3
    rg, rq, rw = lay.row_coef
    cg, cq, cw = lay.col_coef
    r_lane, c_lane = rg * g + rq * q + rw * warp, cg * g + cq * q + cw * warp
    return [(tr + r_lane + r0, tc + c_lane + c0) for tr, tc in tiles(t, lay) for r0, c0 in lay.elems]
