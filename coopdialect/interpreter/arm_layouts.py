"""Addressing of the SPV_ARM_cooperative_matrix_layouts memory layouts (RowBlockedInterleavedARM,
ColumnBlockedInterleavedARM), as the extension text defines it; docs/arm-layouts.md has the
formula with a worked example.

For an R x C matrix of components of E bytes (E in 1, 2, 4, 8) and Stride S (1, 2 or 4):

* a block is 64 bytes: 4 rows x B columns, B = 16 / E, row-major inside the block, so byte `b`
  of element (r, c) is at `b_in = ((r % 4) * B + c % B) * E + k` in its block (k = byte of the
  element, 0..E-1);
* blocks are numbered in row-major (Row...) or column-major (Column...) block order:
  `j = (r // 4) * (C / B) + c // B` or `j = (c // B) * (R / 4) + r // 4`;
* consecutive blocks form groups of S, interleaved at a 4-byte granularity: word `w = b_in // 4`
  of the p-th block of group g (`g = j // S`, `p = j % S`) sits at word `w * S + p` of the group,
  so the byte address is `g * 64 * S + (w * S + p) * 4 + b_in % 4`.

The matrix thus occupies R*C*E contiguous bytes from the element `offset` of the memref (the
verifier's rules make every group complete). Bytes, not elements, are the unit here because
8-byte components straddle two interleaved words when S > 1.
"""

from __future__ import annotations

import numpy as np

from coopdialect.dialects.coop import Layout

BLOCK_BYTES = 64
BLOCK_ROWS = 4
WORD_BYTES = 4


def arm_byte_offsets(rows: int, cols: int, elem_bytes: int, layout: Layout, stride: int) -> np.ndarray:
    """Byte offset (from the matrix's first byte) of every byte of every element.

    Returns an int64 array of shape (rows, cols, elem_bytes). Raises ValueError when the shape,
    component size or Stride break the extension's rules (the verifier reports those first)."""
    if layout not in (Layout.RowBlockedInterleavedARM, Layout.ColumnBlockedInterleavedARM):
        raise ValueError(f"{layout} is not an Arm blocked layout")
    if elem_bytes not in (1, 2, 4, 8):
        raise ValueError(f"component size {elem_bytes} bytes has no Arm blocked layout")
    if stride not in (1, 2, 4):
        raise ValueError(f"Stride must be 1, 2 or 4, got {stride}")
    bcols = 16 // elem_bytes
    if rows % BLOCK_ROWS or cols % bcols:
        raise ValueError(f"{rows}x{cols} is not a whole number of 4x{bcols} blocks")
    nbr, nbc = rows // BLOCK_ROWS, cols // bcols
    if (nbr * nbc) % stride:
        raise ValueError(f"{nbr * nbc} blocks do not fill groups of {stride}")
    r = np.arange(rows, dtype=np.int64)[:, None, None]
    c = np.arange(cols, dtype=np.int64)[None, :, None]
    k = np.arange(elem_bytes, dtype=np.int64)[None, None, :]
    b_in = ((r % BLOCK_ROWS) * bcols + c % bcols) * elem_bytes + k
    if layout == Layout.RowBlockedInterleavedARM:
        j = (r // BLOCK_ROWS) * nbc + c // bcols
    else:
        j = (c // bcols) * nbr + r // BLOCK_ROWS
    g, p = j // stride, j % stride
    w = b_in // WORD_BYTES
    return g * BLOCK_BYTES * stride + (w * stride + p) * WORD_BYTES + b_in % WORD_BYTES
