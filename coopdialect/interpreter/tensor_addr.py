"""Tensor layouts and views in the interpreter (SPV_NV_tensor_addressing; addressing of
SPV_NV_cooperative_matrix2 3.X Tensor Layout and View).

Values: a `!tensor_addr.layout` is a `LayoutValue` (the spec's `tensorLayoutNV` state plus the
type's clamp mode), a `!tensor_addr.view` a `ViewValue`. Operands of the set ops must be
dynamically uniform; a lane vector whose lanes differ is an error.

`tensor_element_indices` is the spec's `matrixCoordToTensorElement` /
`matrixCoordToTensorElementWithView`, for every (row, col) of an M×N matrix at once (numpy, no
per-element loop). Arithmetic is the pseudo-code's: uint32 for indices, spans, strides, clip values,
int32 for `offset` and the tensor coordinate `c`, remainders as OpSMod. Choices:

* A view clip whose `clipRowOffset + clipRowSpan` or `clipColOffset + clipColSpan` exceeds
  2^32 - 1 is an error (AddressingError), never a silent value: the pseudo-code's uint32 sum
  wraps, but the H200's driver does not wrap (it loads/stores the rows and columns the wrapped
  sum would clip), so such IR is undefined in practice and not portable.

* RepeatMirrored follows the clamp-mode table (`c = c % (2*dim-2); c = c >= dim ? 2*dim-2-c : c`
  with dim = layoutDimension); the pseudo-code's MirrorRepeat lines compare against the loop
  variable `dim`, a visible typo. A layoutDimension of 1 makes `2*dim-2` zero: a remainder by 0,
  raised as an error.
* Undefined clamp mode with an out-of-bounds coordinate is an error (undefined behavior), for loads
  and stores. A span, view dimension or block size of 0 that a remainder divides by is an error.
* The H200 driver deviates from the text in two measured ways (OpTensorLayoutSetDimensionNV rounds
  the block count down; RepeatMirrored with a layoutDimension of 1 outside dimension 0 reads
  element 0): the interpreter follows the text; docs/tensor-addressing.md gives the rules.
* Constant loads return clampValue's bit pattern, truncated (or zero-extended) to the component
  width and reinterpreted (0x4200 is 3.0 in f16, as measured on the H200).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from coopdialect.dialects import tensor_addr as ta
from coopdialect.interpreter.common import fail, uniform

U32 = 0xFFFFFFFF


@dataclass(frozen=True)
class LayoutValue:
    """A tensor layout: the type's clamp mode and the `tensorLayoutNV` state."""

    mode: ta.ClampMode
    state: ta.LayoutState


@dataclass(frozen=True)
class ViewValue:
    """A tensor view: the type's hasDimensions and permutation and the `tensorViewNV` state."""

    has_dimensions: bool
    permutation: tuple[int, ...]
    state: ta.ViewState


class AddressingError(Exception):
    """A run-time addressing error (undefined behavior); the impls turn it into InterpreterError."""


@dataclass
class Addresses:
    """Per-element addressing of an M×N matrix (arrays of shape (M, N)).

    * `index`: element index into the memory (valid where `active & ~discarded`), int64.
    * `active`: not clipped away by the view (clipped elements keep Object's value / are skipped).
    * `discarded`: out of bounds under Constant mode (loads give clampValue, stores are dropped).
    * `block_coord`, `coord_in_block`: shape (M, N, LDim), what a DecodeFunc receives.
    """

    index: np.ndarray
    active: np.ndarray
    discarded: np.ndarray
    block_coord: np.ndarray
    coord_in_block: np.ndarray


def _mod(a: np.ndarray, d: np.ndarray | int, live: np.ndarray, what: str) -> np.ndarray:
    """a % d (OpSMod: floored), refusing d == 0 where `live`."""
    if type(d) is int and d != 0:  # one nonzero divisor (most layouts): no lane is refused
        return a % np.int64(d)
    d = np.broadcast_to(np.asarray(d, np.int64), a.shape)
    if np.any((d == 0) & live):
        raise AddressingError(f"{what} is 0: a remainder by zero (undefined)")
    return np.where(d == 0, 0, a % np.where(d == 0, 1, d))


def _div(a: np.ndarray, d: np.ndarray | int, live: np.ndarray, what: str) -> np.ndarray:
    if type(d) is int and d != 0:
        return a // np.int64(d)
    d = np.broadcast_to(np.asarray(d, np.int64), a.shape)
    if np.any((d == 0) & live):
        raise AddressingError(f"{what} is 0: a division by zero (undefined)")
    return np.where(d == 0, 0, a // np.where(d == 0, 1, d))


def tensor_element_indices(layout: LayoutValue, rows: int, cols: int,
                           view: ViewValue | None = None, is_store: bool = False) -> Addresses:
    """matrixCoordToTensorElement[WithView] for every element of a rows×cols matrix.

    Raises AddressingError for undefined behavior (Undefined-mode out-of-bounds coordinates,
    remainders or divisions by zero, a view clip offset + span above 2^32 - 1)."""
    t = layout.state
    ldim = len(t.dimension)
    r = np.broadcast_to(np.arange(rows, dtype=np.int64)[:, None], (rows, cols))
    c = np.broadcast_to(np.arange(cols, dtype=np.int64)[None, :], (rows, cols))
    active = np.ones((rows, cols), bool)
    if view is None:
        index = (r * cols + c) & U32                                  # matrixCoordToLinear
    else:
        v = view.state
        ro, rs, co, cs = v.clip
        for name, off, span in (("Row", ro, rs), ("Col", co, cs)):
            if off + span > U32:
                raise AddressingError(
                    f"view clip{name}Offset + clip{name}Span = {off} + {span} exceeds 2^32 - 1: "
                    f"the spec's uint32 sum wraps, the hardware does not (undefined in practice)")
        active = ~((r < ro) | (r >= ro + rs) | (c < co) | (c >= co + cs))
        width = min(cols, cs)
        index = (((r - ro) & U32) * width + ((c - co) & U32)) & U32
        vdim = len(v.dimension)
        dims = v.dimension if view.has_dimensions else t.span[:vdim]
        view_coord = [None] * vdim                                    # linearToViewCoord
        rest = index
        for dim in range(vdim - 1, -1, -1):
            i = view.permutation[dim]
            what = f"viewDimension[{i}]" if view.has_dimensions else f"span[{i}] (view)"
            view_coord[i] = _mod(rest, dims[i], active, what)
            rest = _div(rest, dims[i], active, what)
        if view.has_dimensions:                                       # viewCoordToLinear
            stride = list(v.stride)
        else:
            stride = [0] * vdim
            stride[vdim - 1] = 1
            for dim in range(vdim - 2, -1, -1):
                stride[dim] = (stride[dim + 1] * t.span[dim + 1]) & U32
        index = np.zeros_like(index)
        for dim in range(vdim - 1, -1, -1):
            index = (index + view_coord[dim] * stride[dim]) & U32
    span_coord = [None] * ldim                                        # linearToSpanCoord
    rest = index
    for dim in range(ldim - 1, -1, -1):
        span_coord[dim] = _mod(rest, t.span[dim], active, f"span[{dim}]")
        rest = _div(rest, t.span[dim], active, f"span[{dim}]")
    mode = layout.mode
    if is_store and mode != ta.ClampMode.Undefined:
        mode = ta.ClampMode.Constant  # stores: everything but Undefined discards
    discarded = np.zeros((rows, cols), bool)
    block = np.zeros((rows, cols, ldim), np.int64)
    inner = np.zeros((rows, cols, ldim), np.int64)
    for dim in range(ldim):                                           # spanCoordToTensorCoord
        x = span_coord[dim] + ta.s32(t.offset[dim])
        x = ((x + 2**31) & U32) - 2**31                               # int32_t c
        n = t.dimension[dim]
        live = active & ~discarded
        oob = live & ((x < 0) | (x >= n))
        if oob.any():
            if mode == ta.ClampMode.Undefined:
                rr, cc = (int(a[0]) for a in np.nonzero(oob))
                raise AddressingError(
                    f"element ({rr}, {cc}) has tensor coordinate {int(x[rr, cc])} outside "
                    f"[0, {n}) in dimension {dim} with clamp mode Undefined (undefined behavior)")
            if mode == ta.ClampMode.Constant:
                discarded = discarded | oob
            elif mode == ta.ClampMode.ClampToEdge:
                x = np.where(oob, np.minimum(np.maximum(x, 0), n - 1), x)
            elif mode == ta.ClampMode.Repeat:
                x = np.where(oob, _mod(x, n, oob, f"layoutDimension[{dim}]"), x)
            else:  # RepeatMirrored, as the clamp-mode table states it
                m2 = 2 * n - 2
                y = _mod(x, m2, oob, f"2*layoutDimension[{dim}]-2")
                y = np.where(y >= n, m2 - y, y)
                x = np.where(oob, y, x)
        live = active & ~discarded
        bs = t.block_size[dim]
        inner[..., dim] = _mod(x, bs, live, f"blockSize[{dim}]")
        block[..., dim] = _div(x, bs, live, f"blockSize[{dim}]")
    index = np.zeros((rows, cols), np.int64)                          # tensorCoordToLinear
    for dim in range(ldim):
        index = (index + block[..., dim] * t.stride[dim]) & U32
    return Addresses(index, active, discarded, block, inner)


def clamp_value_as(dt: np.dtype, clamp_value: int) -> Any:
    """clampValue's bit pattern as one element of dtype `dt` (low bits; zero-extended to 64)."""
    bits = dt.itemsize * 8
    raw = np.array([clamp_value & ((1 << bits) - 1)], dtype=np.dtype(f"u{dt.itemsize}"))
    return raw.view(dt)[0]


@register_impls
class TensorAddrFunctions(InterpreterFunctions):
    """The tensor_addr ops: each builds a new immutable LayoutValue / ViewValue."""

    @impl(ta.CreateLayoutOp)
    def run_create_layout(self, interpreter: Interpreter, op: Operation, args: PythonValues):
        t = op.result.type
        return (LayoutValue(t.mode, ta.LayoutState.create(t.rank)),)

    @impl(ta.CreateViewOp)
    def run_create_view(self, interpreter: Interpreter, op: Operation, args: PythonValues):
        t = op.result.type
        return (ViewValue(t.has_dims, t.perm, ta.ViewState.create(t.rank)),)

    @impl(ta.LayoutConstantOp)
    def run_layout_constant(self, interpreter: Interpreter, op: Operation, args: PythonValues):
        return (LayoutValue(op.result.type.mode, op.state),)

    @impl(ta.ViewConstantOp)
    def run_view_constant(self, interpreter: Interpreter, op: Operation, args: PythonValues):
        t = op.result.type
        return (ViewValue(t.has_dims, t.perm, op.state),)

    def _vals(self, op: Operation, args: PythonValues) -> list[int]:
        return [int(uniform(op, a, f"operand {i + 1}")) for i, a in enumerate(args[1:])]

    def _layout(self, op: Operation, args: PythonValues):
        src = args[0]
        vals = self._vals(op, args)
        if (msg := ta.stride_rule_error(op.name, src.state, vals)) is not None:
            raise fail(op, f"{msg} (at run time)")
        try:
            return (LayoutValue(src.mode, ta.apply_layout(op.name, src.state, vals)),)
        except ZeroDivisionError as e:
            raise fail(op, f"{e} (undefined)") from None

    def _view(self, op: Operation, args: PythonValues):
        src = args[0]
        return (ViewValue(src.has_dimensions, src.permutation,
                          ta.apply_view(op.name, src.state, self._vals(op, args))),)

    @impl(ta.LayoutSetDimensionOp)
    def run_layout_set_dimension(self, interpreter, op, args):
        return self._layout(op, args)

    @impl(ta.LayoutSetStrideOp)
    def run_layout_set_stride(self, interpreter, op, args):
        return self._layout(op, args)

    @impl(ta.LayoutSetBlockSizeOp)
    def run_layout_set_block_size(self, interpreter, op, args):
        return self._layout(op, args)

    @impl(ta.LayoutSliceOp)
    def run_layout_slice(self, interpreter, op, args):
        return self._layout(op, args)

    @impl(ta.LayoutSetClampValueOp)
    def run_layout_set_clamp_value(self, interpreter, op, args):
        return self._layout(op, args)

    @impl(ta.ViewSetDimensionOp)
    def run_view_set_dimension(self, interpreter, op, args):
        return self._view(op, args)

    @impl(ta.ViewSetStrideOp)
    def run_view_set_stride(self, interpreter, op, args):
        return self._view(op, args)

    @impl(ta.ViewSetClipOp)
    def run_view_set_clip(self, interpreter, op, args):
        return self._view(op, args)
