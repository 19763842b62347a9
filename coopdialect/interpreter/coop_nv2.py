"""Interpreter impls of the cooperative-matrix-2 ops (SPV_NV_cooperative_matrix2).

* load_tensor / store_tensor: addressing by `tensor_addr.tensor_element_indices` (the spec's
  pseudo-code). Loads start from Object's elements; clipped elements keep them; Constant-mode
  out-of-bounds elements get clampValue's bit pattern (a DecodeFunc is not called for them).
  Stores write the active in-bounds elements; out-of-bounds stores are discarded in every clamp
  mode but Undefined (an error). Two elements stored to one address with different values is an
  error (the order is unspecified); a block size > 1 on a store is an error (the spec forbids it).
  Every index that is used must lie inside the memref, else an error. A DecodeFunc gets the
  memref and the tensor element index in its elements (SPIR-V's pointer Pointer + index ×
  sizeof(pointee) is made of these by the raiser and convert-coop-to-spirv).
* Functions (DecodeFunc, CombineFunc, per-element Func) are called once per batch, not once per
  element: each parameter gets a 1-D numpy array over the elements (the interpreter's lane-vector
  convention, so the function's arith/memref ops run vectorized). The functions must therefore be
  straight-line code (no control flow on the per-element values).
* reduce: the spec leaves the order of the CombineFunc calls open ("should be mathematically
  commutative and associative"); the interpreter fixes it as the halving tree along the reduced
  axis: with P the power of two at or above its length n, for h = P/2, P/4, ..., 1 element i
  becomes CombineFunc(element i, element i + h) where i + h < n (the others pass), and n
  becomes h. Row|Column reduces each row, then the rows' results. On the backends' register
  layouts (8-column tiles of quads of lanes holding column pairs) this tree combines a lane's
  own values first and crosses lanes in two shuffles at the end, so the PTX lowering follows it
  bit for bit at the least cost. On exactly representable data every order gives the same
  result. The Column rule combines each column (the text's "corresponding row" under Column
  is a typo).
* Workgroup-scope matrices: every subgroup runs the whole kernel and so computes the whole
  matrix identically (loads, mul_add, reduce, ...); stores write the same values from every
  subgroup, so they are idempotent. Operands must be uniform.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from coopdialect.dialects import coop_nv2 as nv2
from coopdialect.interpreter.common import fail, is_lanes, numpy_dtype
from coopdialect.interpreter.coop import _per_element, memref_view, to_dtype
from coopdialect.interpreter.races import access
from coopdialect.interpreter.tensor_addr import (
    AddressingError,
    Addresses,
    LayoutValue,
    ViewValue,
    clamp_value_as,
    tensor_element_indices,
)


def _addresses(op: Operation, layout: LayoutValue, view: ViewValue | None, rows: int, cols: int,
               is_store: bool, size: int) -> Addresses:
    try:
        a = tensor_element_indices(layout, rows, cols, view, is_store)
    except AddressingError as e:
        raise fail(op, str(e)) from None
    used = a.active & ~a.discarded
    bad = used & (a.index >= size)
    if bad.any():
        r, c = (int(v[0]) for v in np.nonzero(bad))
        raise fail(op, f"out-of-bounds {'store' if is_store else 'load'}: element ({r}, {c}) is "
                       f"at index {int(a.index[r, c])}, outside the {size} elements of the memref")
    return a


def _call(interpreter: Interpreter, op: Operation, ref, args: list[Any], n: int,
          dt: np.dtype) -> np.ndarray:
    """Call func `ref` with batched arguments; the result as an array of `n` elements of `dt`."""
    f = nv2.lookup_func(op, ref, "function")
    (out,) = interpreter.call_op(f, tuple(args))
    return np.broadcast_to(to_dtype(out, dt), (n,)).copy()


@register_impls
class CoopNV2Functions(InterpreterFunctions):
    """numpy semantics of load_tensor, store_tensor, reduce, convert, transpose, per_element_op."""

    @impl(nv2.LoadTensorOp)
    def run_load_tensor(self, interpreter: Interpreter, op: nv2.LoadTensorOp, args: PythonValues):
        buf, obj, layout, *rest = args
        view = rest[0] if rest else None
        m = op.result.type
        mt = op.pointer.type
        assert isinstance(mt, MemRefType)
        flat = memref_view(op, buf, mt)
        a = _addresses(op, layout, view, m.rows, m.columns, False, flat.size)
        out = np.array(obj, copy=True)
        dt = out.dtype
        out[a.active & a.discarded] = clamp_value_as(dt, layout.state.clamp_value)
        sel = a.active & ~a.discarded
        access(interpreter, op, buf, a.index[sel], write=False,
               workgroup_scope=m.scope_value.value == "Workgroup")
        if op.decode_func is None:
            out[sel] = flat[a.index[sel]]
            return (out,)
        n = int(sel.sum())
        if n:
            idx = a.index[sel]
            signed = np.where(idx >= 2**31, idx - 2**32, idx)  # i32 lane values are signed
            bc = [a.block_coord[..., d][sel] for d in range(a.block_coord.shape[-1])]
            cib = [a.coord_in_block[..., d][sel] for d in range(a.block_coord.shape[-1])]
            out[sel] = _call(interpreter, op, op.decode_func, [buf, signed, *bc, *cib], n, dt)
        return (out,)

    @impl(nv2.StoreTensorOp)
    def run_store_tensor(self, interpreter: Interpreter, op: nv2.StoreTensorOp,
                         args: PythonValues):
        value, buf, layout, *rest = args
        view = rest[0] if rest else None
        if any(b > 1 for b in layout.state.block_size):
            raise fail(op, f"a block size larger than 1 must not be used with a tensor store "
                           f"(blockSize {list(layout.state.block_size)})")
        m = op.object.type
        mt = op.pointer.type
        assert isinstance(mt, MemRefType)
        flat = memref_view(op, buf, mt)
        a = _addresses(op, layout, view, m.rows, m.columns, True, flat.size)
        sel = a.active & ~a.discarded
        idx, vals = a.index[sel], np.asarray(value)[sel]
        order = np.argsort(idx, kind="stable")
        si, sv = idx[order], vals[order]
        same = si[1:] == si[:-1]
        if same.any():
            differ = same & (sv[1:].view(np.dtype(f"u{sv.dtype.itemsize}")) !=
                             sv[:-1].view(np.dtype(f"u{sv.dtype.itemsize}")))
            if differ.any():
                k = int(np.nonzero(differ)[0][0])
                raise fail(op, f"two matrix elements store different values to index "
                               f"{int(si[k])} (the result would depend on the order)")
        access(interpreter, op, buf, idx, write=True, view=flat, new=vals,
               workgroup_scope=m.scope_value.value == "Workgroup")
        flat[idx] = vals
        return ()

    @impl(nv2.ReduceOp)
    def run_reduce(self, interpreter: Interpreter, op: nv2.ReduceOp, args: PythonValues):
        (x,) = args
        r = op.result.type
        dt = x.dtype
        mask = op.reduce.data

        def combine(p: np.ndarray, q: np.ndarray) -> np.ndarray:
            return _call(interpreter, op, op.combine_func, [p.reshape(-1), q.reshape(-1)],
                         p.size, dt).reshape(p.shape)

        def tree(a: np.ndarray) -> np.ndarray:  # reduce the last axis: the halving tree
            n = a.shape[-1]
            h = (1 << (n - 1).bit_length()) // 2 if n > 1 else 0
            while h >= 1:
                if n > h:  # element i takes element i + h; those without a partner pass
                    y = combine(a[..., :n - h], a[..., h:n])
                    a = np.concatenate([y, a[..., n - h:h]], axis=-1)
                    n = h
                h //= 2
            return a[..., 0]

        if mask == nv2.REDUCE_2X2:
            top = combine(x[0::2, 0::2], x[1::2, 0::2])
            bot = combine(x[0::2, 1::2], x[1::2, 1::2])
            return (combine(top, bot),)
        if mask == nv2.REDUCE_ROW:
            rows = tree(x)
            return (np.broadcast_to(rows[:, None], (r.rows, r.columns)).copy(),)
        if mask == nv2.REDUCE_COLUMN:
            cols = tree(x.T)
            return (np.broadcast_to(cols[None, :], (r.rows, r.columns)).copy(),)
        total = tree(tree(x)[None, :])  # each row, then the rows' results
        return (np.broadcast_to(total[:, None], (r.rows, r.columns)).copy(),)

    @impl(nv2.ConvertOp)
    def run_convert(self, interpreter, op, args):
        return (np.array(args[0], copy=True),)

    @impl(nv2.TransposeOp)
    def run_transpose(self, interpreter, op, args):
        return (np.ascontiguousarray(args[0].T),)

    @impl(nv2.PerElementOp)
    def run_per_element_op(self, interpreter: Interpreter, op: nv2.PerElementOp,
                           args: PythonValues):
        mat, *extra = args
        m = op.matrix.type
        rows, cols = m.rows, m.columns
        n = rows * cols
        row = np.repeat(np.arange(rows, dtype=np.int64), cols)
        col = np.tile(np.arange(cols, dtype=np.int64), rows)
        call_args: list[Any] = [row, col, mat.reshape(-1)]
        for v, e in zip(op.extra, extra):
            if isinstance(e, np.ndarray) and e.ndim == 2:
                call_args.append(e.reshape(-1))
            elif is_lanes(e):
                per = _per_element(op, e, m, interpreter)
                call_args.append(np.broadcast_to(per, (rows, cols)).reshape(-1)
                                 if isinstance(per, np.ndarray) else per)
            else:
                call_args.append(e)
        dt = numpy_dtype(m.element_type)
        return (_call(interpreter, op, op.func, call_args, n, dt).reshape(rows, cols),)
