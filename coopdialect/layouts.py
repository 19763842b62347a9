"""Layouts you can see: grids of which lane holds which element, which memory element each matrix
element reads, drawn by `coopdialect.draw` (SVG).

Each function builds its grid from the code the compiler and the interpreter run, not from a
second statement of the layout, so the picture is what the compiler emits:

* `mma_fragment`: the per-lane registers of an `mma.sync` A, B or accumulator fragment
  (m16n8k16 for 16-bit types, m16n8k32 for 8-bit), from `coopdialect.ptx.fragments`
  (`subgroup_layout`, `element_positions`: what `convert-coop-to-ptx` loads and stores).
* `wgmma_accumulator`: the wgmma D fragment of a 64xN accumulator over a warpgroup
  (`fragments.wgmma_acc_layout`), thread t = 32*warp + lane.
* `sparse_selection`: which dense elements of a 2:4 (tf32: 1:2) operand the logical metadata
  selects, through the interpreter's `sparse_mma.decompress` (docs/sparse.md).
* `tensor_view`: the memory element each matrix element of a tensor-addressed load reads, through
  the interpreter's `tensor_element_indices` (SPV_NV_tensor_addressing); clamped elements are
  found as those Constant mode would discard.
* `arm_blocked`: the memory element of each matrix element in an Arm blocked-interleaved layout,
  through the interpreter's `arm_byte_offsets` (docs/arm-layouts.md).

    from coopdialect import layouts
    open("acc.svg", "w").write(layouts.mma_fragment("C", "f16").to_svg())

Errors: ValueError for an operand, type, shape or layout parameter with no such layout.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float16Type,
    Float32Type,
    IntegerType,
    Signedness,
)

from coopdialect.draw import Cell, Grid

_TYPES = {
    "f16": Float16Type(), "bf16": BFloat16Type(), "f32": Float32Type(), "e4m3": Float8E4M3FNType(),
    "s8": IntegerType(8, Signedness.SIGNED), "u8": IntegerType(8, Signedness.UNSIGNED),
    "s32": IntegerType(32, Signedness.SIGNED),
}
_MMA_K = {"f16": 16, "bf16": 16, "s8": 32, "u8": 32}
_ACC = {"f16": "f32", "bf16": "f32", "s8": "s32", "u8": "s32"}


def _type(name: str):
    if name not in _TYPES:
        raise ValueError(f"unknown element type '{name}' (one of {', '.join(_TYPES)})")
    return _TYPES[name]


def mma_fragment(operand: str = "C", element: str = "f16") -> Grid:
    """The `mma.sync` fragment of operand A (16xK), B (Kx8) or C (the 16x8 accumulator) for
    A/B of `element` (f16/bf16: m16n8k16; s8/u8: m16n8k32): each cell is labeled with the lane
    (T0..T31) and the register (a_i / b_i / c_i, in fragment order) that holds it (PTX ISA
    9.7.14.5). Raises ValueError for another operand or type."""
    from coopdialect.dialects.coop import MatrixType, Scope, Use
    from coopdialect.ptx import fragments as fr

    if element not in _MMA_K:
        raise ValueError(f"mma.sync fragments are drawn for {', '.join(_MMA_K)}, not '{element}'")
    k = _MMA_K[element]
    shapes = {"A": (16, k, element, Use.MatrixA), "B": (k, 8, element, Use.MatrixB),
              "C": (16, 8, _ACC[element], Use.MatrixAcc)}
    if operand not in shapes:
        raise ValueError(f"operand must be A, B or C, not '{operand}'")
    rows, cols, etype, use = shapes[operand]
    t = MatrixType(rows, cols, _type(etype), Scope.Subgroup, use)
    lay = fr.subgroup_layout(t)
    reg = operand.lower()
    cells = {}
    for lane in range(32):
        for v, (r, c) in enumerate(fr.element_positions(t, lay, lane)):
            cells[(r, c)] = Cell((f"T{lane}", f"{reg}{v}"), lane)
    title = (f"mma.sync m16n8k{k} {element}: {operand} fragment ({rows}x{cols} "
             f"{etype}), lane and register")
    legend = ["g = lane >> 2 (groupID), q = lane & 3 (threadID_in_group); colors: one per lane",
              "from coopdialect/ptx/fragments.py (what convert-coop-to-ptx loads and stores)"]
    return Grid(title, rows, cols, cells, legend, row_bands=8, col_bands=8 if cols > 8 else 0)


def wgmma_accumulator(n: int = 256, shown_cols: Sequence[tuple[int, int]] | None = None) -> Grid:
    """The wgmma D fragment of a 64xN f32 accumulator (one warpgroup, 128 threads): each cell is
    labeled with the thread (T0..T127 = 32*warp + lane) and register d_i (PTX ISA 9.7.15.5.1).
    `shown_cols` limits the drawing to column ranges (default: 0-15 and the last 8 when N > 24).
    Raises ValueError unless N is a multiple of 8 in 8..256."""
    from coopdialect.dialects.coop import MatrixType, Scope, Use
    from coopdialect.ptx import fragments as fr

    if n % 8 or not 8 <= n <= 256:
        raise ValueError(f"wgmma N must be a multiple of 8 in 8..256, not {n}")
    t = MatrixType(64, n, Float32Type(), Scope.Workgroup, Use.MatrixAcc)
    lay = fr.wgmma_acc_layout(n)
    cells = {}
    for warp in range(4):
        for lane in range(32):
            thread = 32 * warp + lane
            for i, (r, c) in enumerate(fr.element_positions(t, lay, lane, warp)):
                cells[(r, c)] = Cell((f"T{thread}", f"d{i}"), lane)
    if shown_cols is None and n > 24:
        shown_cols = [(0, 16), (n - 8, n)]
    legend = ["thread = 32*warp + lane; warp w owns rows 16w..16w+15 (thick lines); colors: one "
              "per lane", f"each thread holds {n // 2} f32 registers d0..d{n // 2 - 1}; "
              "from coopdialect/ptx/fragments.py (wgmma_acc_layout)"]
    return Grid(f"wgmma m64n{n}k16 accumulator (64x{n} f32): thread and register", 64, n,
                cells, legend, shown_cols=list(shown_cols) if shown_cols else None,
                row_bands=16, col_bands=8)


def sparse_selection(element: str = "f16", rows: int = 4, meta: np.ndarray | None = None) -> Grid:
    """Which elements of one instruction's dense A (rows x K: K = 32 for f16/bf16, 64 for
    s8/u8/e4m3, 16 for f32 = tf32) the logical metadata selects: kept elements are labeled v_j
    (column j of the compressed values, which holds them), the others are zero. `meta` (rows x
    K/4 values idx0 | idx1 << 2; tf32: K/2 values 0x4 / 0xE) defaults to every valid value in
    turn. Raises ValueError for another type or a metadata shape that does not fit."""
    from coopdialect.dialects import sparse_mma as sm
    from coopdialect.interpreter.sparse_mma import decompress

    ks = {"f16": 32, "bf16": 32, "f32": 16, "s8": 64, "u8": 64, "e4m3": 64}
    if element not in ks:
        raise ValueError(f"2:4 sparse operands are drawn for {', '.join(ks)}, not '{element}'")
    k = ks[element]
    group = sm.meta_group(_type(element))
    valid = sm.VALID_META_TF32 if group == 2 else sm.VALID_META_24
    chunks = k // group
    if meta is None:
        meta = np.array([[valid[(r * chunks + c) % len(valid)] for c in range(chunks)]
                         for r in range(rows)], np.uint8)
    meta = np.asarray(meta)
    if meta.shape != (rows, chunks):
        raise ValueError(f"metadata must be {rows}x{chunks} for {element}, got {list(meta.shape)}")
    # the compressed values are their own column numbers (+1, so that 0 means "not selected")
    values = np.tile(np.arange(1, k // 2 + 1, dtype=np.int64), (rows, 1))
    dense = decompress(None, values, meta, group)
    cells = {}
    for r in range(rows):
        for c in range(k):
            e = int(meta[r, c // group])
            j = int(dense[r, c]) - 1
            if j >= 0:
                cells[(r, c)] = Cell((f"v{j}",), c // group)
            else:
                cells[(r, c)] = Cell(("0",), c // group, mark="zero")
    kind = "1:2 (tf32)" if group == 2 else "2:4"
    legend = [f"row {r} metadata: " + " ".join(f"0x{int(e):X}" for e in meta[r])
              for r in range(rows)]
    legend += [f"v_j: column j of the compressed values (rows x {k // 2}); colors: one per "
               f"{group}-element chunk" + ("; idx0 = e & 3, idx1 = e >> 2" if group == 4 else ""),
               "from coopdialect/interpreter/sparse_mma.py (decompress)"]
    return Grid(f"{kind} sparse A ({element}, K = {k}): the elements the metadata selects",
                rows, k, cells, legend, col_bands=group)


def tensor_view(rows: int = 8, cols: int = 8, dimension: tuple[int, int] = (6, 10),
                offset: tuple[int, int] = (-1, -1), span: tuple[int, int] | None = None,
                block_size: tuple[int, int] = (1, 1), clamp: str = "ClampToEdge",
                view_dimension: tuple[int, int] | None = None,
                permutation: tuple[int, int] = (0, 1),
                clip: tuple[int, int, int, int] | None = None, store: bool = False) -> Grid:
    """The memory element that each element of a rows x cols tensor-addressed load (or store)
    reads: a 2-D tensor layout of `dimension` (rows, columns of the tensor), sliced at `offset`
    with `span` (default: the matrix's shape), optionally blocked, with clamp mode `clamp`, and an
    optional view (`view_dimension`, `permutation`, `clip` = (row offset, row span, col offset,
    col span)). Cells are labeled with the memory index and the tensor coordinate; clamped
    elements are hatched, discarded (Constant) and clipped ones grey. Raises ValueError for a
    layout the interpreter calls undefined (the message says why)."""
    from coopdialect.dialects import tensor_addr as ta
    from coopdialect.interpreter.tensor_addr import (
        AddressingError,
        LayoutValue,
        ViewValue,
        tensor_element_indices,
    )

    try:
        mode = ta.ClampMode(clamp)
    except ValueError:
        raise ValueError(f"unknown clamp mode '{clamp}' (one of "
                         f"{', '.join(m.value for m in ta.ClampMode)})") from None
    sr, sc = span if span is not None else (rows, cols)
    state = ta.LayoutState.create(2)
    try:
        state = ta.apply_layout(ta.LayoutSetBlockSizeOp.name, state, list(block_size))
        state = ta.apply_layout(ta.LayoutSetDimensionOp.name, state, list(dimension))
        state = ta.apply_layout(ta.LayoutSliceOp.name, state, [offset[0], sr, offset[1], sc])
    except ZeroDivisionError as e:
        raise ValueError(str(e)) from None
    view = None
    if view_dimension is not None or clip is not None or tuple(permutation) != (0, 1):
        vs = ta.ViewState.create(2)
        if view_dimension is not None:
            vs = ta.apply_view(ta.ViewSetDimensionOp.name, vs, list(view_dimension))
        if clip is not None:
            vs = ta.apply_view(ta.ViewSetClipOp.name, vs, list(clip))
        view = ViewValue(view_dimension is not None, tuple(permutation), vs)
    try:
        got = tensor_element_indices(LayoutValue(mode, state), rows, cols, view, store)
        oob = tensor_element_indices(LayoutValue(ta.ClampMode.Constant, state), rows, cols,
                                     view, store).discarded
    except AddressingError as e:
        raise ValueError(str(e)) from None
    cells = {}
    for r in range(rows):
        for c in range(cols):
            if not got.active[r, c]:
                cells[(r, c)] = Cell(("clip",), None, mark="clipped")
                continue
            if got.discarded[r, c]:
                cells[(r, c)] = Cell(("—",), None, mark="discarded")
                continue
            idx = int(got.index[r, c])
            y, x = (int(v) for v in got.block_coord[r, c] * block_size + got.coord_in_block[r, c])
            cells[(r, c)] = Cell((str(idx), f"{y},{x}"), idx, "clamped" if oob[r, c] else None)
    what = "store" if store else "load"
    title = (f"tensor {what} {rows}x{cols} through layout<2, {clamp}>: dimension "
             f"{dimension[0]}x{dimension[1]}, slice offset ({offset[0]}, {offset[1]}) span "
             f"{sr}x{sc}" + _view_text(view_dimension, permutation, clip))
    legend = ["label: memory element index, and the tensor coordinate (row, column) it is at",
              "from coopdialect/interpreter/tensor_addr.py (tensor_element_indices)"]
    return Grid(title, rows, cols, cells, legend)


def _view_text(dimension, permutation, clip) -> str:
    parts = []
    if dimension is not None:
        parts.append(f"dimension {dimension[0]}x{dimension[1]}")
    if tuple(permutation) != (0, 1):
        parts.append(f"permutation ({permutation[0]}, {permutation[1]})")
    if clip is not None:
        parts.append("clip ({}, {}, {}, {})".format(*clip))
    return f"; view {', '.join(parts)}" if parts else ""


def arm_blocked(rows: int = 8, cols: int = 16, element: str = "f16",
                layout: str = "RowBlockedInterleavedARM", stride: int = 2) -> Grid:
    """The memory element (from the load's offset) of each element of a rows x cols matrix in
    an Arm blocked-interleaved layout with Stride `stride` (SPV_ARM_cooperative_matrix_layouts):
    colored by 64-byte block, labeled with the element index and the block. Raises ValueError
    for a shape, type or Stride the extension does not allow."""
    from coopdialect.dialects.coop import Layout
    from coopdialect.interpreter.arm_layouts import BLOCK_BYTES, WORD_BYTES, arm_byte_offsets
    from coopdialect.interpreter.common import numpy_dtype

    try:
        lay = Layout(layout)
    except ValueError:
        raise ValueError(f"unknown layout '{layout}'") from None
    size = numpy_dtype(_type(element)).itemsize
    offsets = arm_byte_offsets(rows, cols, size, lay, stride)[:, :, 0]
    cells = {}
    for r in range(rows):
        for c in range(cols):
            off = int(offsets[r, c])
            # the block a byte lies in: group of `stride` blocks, member = word slot mod stride
            block = (off // (BLOCK_BYTES * stride)) * stride + (off // WORD_BYTES) % stride
            label = str(off // size) if off % size == 0 else f"B{off}"
            cells[(r, c)] = Cell((label, f"blk{block}"), block)
    legend = [f"label: element index after the load's offset ({element}, {size} bytes), and the "
              "64-byte block holding it; colors: one per block",
              f"blocks of 4 rows x {16 // size} columns; groups of {stride} blocks interleaved "
              "word by word (4 bytes)",
              "from coopdialect/interpreter/arm_layouts.py (arm_byte_offsets)"]
    return Grid(f"{layout}, Stride {stride}: {rows}x{cols} {element}", rows, cols, cells, legend,
                row_bands=4, col_bands=16 // size)


DRAWINGS = {
    "mma": mma_fragment,
    "wgmma-acc": wgmma_accumulator,
    "sparse": sparse_selection,
    "tensor": tensor_view,
    "arm": arm_blocked,
}
"""coop-layout's subcommands -> the functions above."""
