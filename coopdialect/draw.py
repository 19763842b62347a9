"""A matrix drawn as a grid of labeled, colored cells, written as SVG (as CuTe draws its layouts).

`Grid` is plain data: the cells of a rows x cols matrix, each with a label (one or two short
lines), a color group (cells of one thread or block share a color) and an optional mark
(`clamped`, `discarded`, `zero`: drawn hatched or grey). `to_svg` renders it; every cell is a
`<g class="c" data-row=R data-col=C>` holding its `<rect>` and one `<text>` per label line, so a
program can read the picture back (the tests do). `coopdialect.layouts` builds grids from the compiler's own
layout code; `coop-layout` is the command line.

Wide matrices can show some column ranges only (`Grid.shown_cols`): a narrow "…" column stands
for the columns left out, so a 64x256 accumulator stays legible.
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

MARKS = {
    "clamped": "read through the clamp mode (out of bounds)",
    "discarded": "out of bounds under Constant: reads clampValue, stores are dropped",
    "clipped": "outside the view's clip: keeps its value",
    "zero": "not selected: zero in the dense operand",
}
"""Mark name -> what it means (the legend's text when no other is given)."""


@dataclass
class Cell:
    """One matrix element as drawn: `label` lines, color `group` (None: white), `mark`."""

    label: tuple[str, ...]
    group: int | None = None
    mark: str | None = None


@dataclass
class Grid:
    """A rows x cols matrix of `cells` ((row, col) -> Cell; missing cells are drawn empty)."""

    title: str
    rows: int
    cols: int
    cells: dict[tuple[int, int], Cell]
    legend: list[str] = field(default_factory=list)
    shown_cols: list[tuple[int, int]] | None = None
    """Column ranges [start, stop) to draw; None: all."""
    row_bands: int = 0
    """Draw a thicker line every `row_bands` rows (warps of a warpgroup, blocks); 0: none."""
    col_bands: int = 0

    def columns(self) -> list[int | None]:
        """The columns in drawing order; None is the "…" gap between two shown ranges."""
        if self.shown_cols is None:
            return list(range(self.cols))
        out: list[int | None] = []
        for i, (a, b) in enumerate(self.shown_cols):
            if i:
                out.append(None)
            out += range(a, b)
        return out

    def to_svg(self) -> str:
        return render(self)


CELL_W, CELL_H, GAP_W = 46, 30, 18
MARGIN_L, MARGIN_T = 40, 52
STYLE = ("<style>text{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:10px}"
         ".c text{text-anchor:middle}.c rect{stroke:#333;stroke-width:.5}"
         ".i{fill:#555;text-anchor:middle}.r{fill:#555;text-anchor:end}"
         ".t{font-size:14px;font-weight:bold}.l{font-size:11px}</style>")


def color(group: int | None, groups: int = 32) -> str:
    """A light color for group `group` (hues spread around the circle, `groups` of them)."""
    if group is None:
        return "#ffffff"
    hue = ((group % groups) * 0.618034) % 1.0
    r, g, b = colorsys.hls_to_rgb(hue, 0.82, 0.65)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


def render(grid: Grid) -> str:
    """The SVG text of `grid` (a standalone document)."""
    cols = grid.columns()
    xs, x = [], MARGIN_L
    for c in cols:
        xs.append(x)
        x += GAP_W if c is None else CELL_W
    legend = grid.legend + [f"hatched: {MARKS[m]}" for m in sorted(
        {cell.mark for cell in grid.cells.values() if cell.mark})]
    # monospace advance is about 0.6 em: room for the title (14 px) and the legend (11 px)
    width = int(max(x + 12, MARGIN_L + 8.6 * len(grid.title) + 12,
                    MARGIN_L + 7.2 * max((len(t) for t in legend), default=0) + 12))
    height = MARGIN_T + grid.rows * CELL_H + 16 + 16 * len(legend) + 8
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}">',
           STYLE, f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text class="t" x="{MARGIN_L}" y="20">{escape(grid.title)}</text>']
    for c, cx in zip(cols, xs):  # column indices
        text = "…" if c is None else str(c)
        w = GAP_W if c is None else CELL_W
        out.append(f'<text class="i" x="{_n(cx + w / 2)}" y="{MARGIN_T - 8}">{text}</text>')
    for r in range(grid.rows):  # row indices
        out.append(f'<text class="r" x="{MARGIN_L - 6}" y="{_n(MARGIN_T + r * CELL_H + CELL_H / 2 + 4)}">'
                   f"{r}</text>")
    for r in range(grid.rows):
        y = MARGIN_T + r * CELL_H
        for c, cx in zip(cols, xs):
            if c is None:
                if r == grid.rows // 2:
                    out.append(f'<text class="i" x="{_n(cx + GAP_W / 2)}" '
                               f'y="{_n(y + CELL_H / 2 + 4)}">…</text>')
                continue
            cell = grid.cells.get((r, c))
            if cell is None:
                continue
            out.append(_cell(cell, r, c, cx, y))
    out += _bands(grid, cols, xs)
    y = MARGIN_T + grid.rows * CELL_H + 20
    for line in legend:
        out.append(f'<text class="l" x="{MARGIN_L}" y="{y}">{escape(line)}</text>')
        y += 16
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _n(v: float) -> str:
    """A coordinate without a needless ".0"."""
    return str(int(v)) if float(v).is_integer() else f"{v:.1f}"


def _hatch(x: float, y: float, step: int = 7) -> str:
    """Path data of 45-degree lines across the cell at (x, y), clipped to it (no SVG pattern:
    renderers differ on those)."""
    d = []
    for t in range(-CELL_H + step // 2, CELL_W, step):
        s0, s1 = max(0, -t), min(CELL_H, CELL_W - t)
        if s0 < s1:
            d.append(f"M{_n(x + t + s0)},{_n(y + CELL_H - s0)}L{_n(x + t + s1)},{_n(y + CELL_H - s1)}")
    return "".join(d)


def _cell(cell: Cell, r: int, c: int, x: float, y: float) -> str:
    fill = "#e4e4e4" if cell.mark in ("discarded", "zero", "clipped") else color(cell.group)
    parts = [f'<g class="c" data-row="{r}" data-col="{c}">',
             f'<rect x="{_n(x)}" y="{_n(y)}" width="{CELL_W}" height="{CELL_H}" fill="{fill}"/>']
    if cell.mark:
        parts.append(f'<path d="{_hatch(x, y)}" stroke="#666" stroke-width=".7"/>')
    lines = cell.label
    for i, line in enumerate(lines):
        ty = y + CELL_H / 2 + 4 + (i - (len(lines) - 1) / 2) * 11
        parts.append(f'<text x="{_n(x + CELL_W / 2)}" y="{_n(ty)}">{escape(line)}</text>')
    parts.append("</g>")
    return "".join(parts)


def _bands(grid: Grid, cols: list[int | None], xs: list[float]) -> list[str]:
    out = []
    x0, x1 = MARGIN_L, xs[-1] + (GAP_W if cols[-1] is None else CELL_W)
    y0, y1 = MARGIN_T, MARGIN_T + grid.rows * CELL_H
    if grid.row_bands:
        for r in range(0, grid.rows + 1, grid.row_bands):
            y = MARGIN_T + r * CELL_H
            out.append(f'<line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#000" '
                       'stroke-width="2"/>')
    if grid.col_bands:
        for c, cx in zip(cols, xs):
            if c is not None and c % grid.col_bands == 0:
                out.append(f'<line x1="{cx}" y1="{y0}" x2="{cx}" y2="{y1}" stroke="#000" '
                           'stroke-width="2"/>')
        out.append(f'<line x1="{x1}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="#000" '
                   'stroke-width="2"/>')
    return out
