"""Interpreter impls of the `sparse_mma` dialect: exact semantics of `wgmma.mma_async.sp` (PTX 9.7.15.6).

Values are the coop interpreter's (a `!coop.matrix` is a numpy array of its shape). Semantics:

* **decompress** (9.7.15.6.1): chunk c of row m (width 4; 2 for f32 = tf32) gets
  ``A[m][4c+idx0] = v[m][2c]``, ``A[m][4c+idx1] = v[m][2c+1]`` with ``idx0 = e & 3``,
  ``idx1 = e >> 2`` (tf32: ``A[m][2c + (e == 0xE)] = v[m][c]``), zeros elsewhere. A metadata
  value outside the valid set (2:4: 0x4 0x8 0xC 0x9 0xD 0xE; tf32: 0x4 0xE) raises: 0x0, 0x5,
  0xA, 0xF, unsorted pairs (idx0 >= idx1) and values above 0xF are undefined behavior in PTX.
* **compress**: keep the non-zero positions in increasing order, pad with the lowest zero
  positions; more non-zeros than kept slots raises.
* **mma_sp**: the chain of K/k instructions, each ``D = (sa*A_s) (sb*B_s) + D`` (the first adds C
  only when scale_d is true; otherwise D = A_0 B_0):
  - floats: tf32 operands are float32 with the low 13 mantissa bits cleared ("truncate lower 13
    bits ... before multiplication"); fp8 via ml_dtypes; products and the instruction's sum in
    float64, then ONE round-to-nearest-even to the accumulator type per instruction. The ISA
    leaves accumulation order and rounding unspecified, so only data whose sums are exact in the
    accumulator type (dyadic, small) are guaranteed to match hardware bit for bit.
  - integers: exact int64 products and sums per instruction, then wrap to 32 bits, or with
    `.satfinite` clamp to [-2^31, 2^31-1] — per instruction, as each hardware instruction of the
    chain saturates its own result.
  - imm_trans: the operand value is given transposed (see the dialect); the math is unchanged.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from coopdialect.dialects import sparse_mma as sm
from coopdialect.interpreter.common import fail, numpy_dtype, round_from_f64

_IDX0 = {e: e & 3 for e in sm.VALID_META_24}
_IDX1 = {e: e >> 2 for e in sm.VALID_META_24}


def check_meta(op: Operation | None, meta: np.ndarray, group: int) -> np.ndarray:
    """Metadata as int64 after validation (raises InterpreterError naming the first bad value)."""
    e = np.asarray(meta).astype(np.int64) & 0xFF
    valid = sm.VALID_META_TF32 if group == 2 else sm.VALID_META_24
    bad = ~np.isin(e, valid)
    if bad.any():
        r, c = (int(x[0]) for x in np.nonzero(bad))
        raise fail(op, f"invalid sparsity metadata 0x{int(e[r, c]):X} at row {r}, chunk {c}: "
                       f"valid values are {', '.join(hex(v) for v in valid)} (0x0, 0x5, 0xA, 0xF "
                       "and unsorted index pairs are undefined behavior, PTX 9.7.15.6.1)")
    return e


def decompress(op: Operation | None, vals: np.ndarray, meta: np.ndarray, group: int) -> np.ndarray:
    """Dense (R, K) array from compressed values (R, K/2) and logical metadata (module docstring)."""
    e = check_meta(op, meta, group)
    r, g = e.shape
    out = np.zeros((r, g * group), dtype=vals.dtype)
    rows = np.arange(r)[:, None]
    if group == 2:
        pos = 2 * np.arange(g)[None, :] + (e == 0xE)
        out[rows, pos] = vals
        return out
    i0 = e & 3
    i1 = e >> 2
    base = 4 * np.arange(g)[None, :]
    out[rows, base + i0] = vals[:, 0::2]
    out[rows, base + i1] = vals[:, 1::2]
    return out


def compress(op: Operation | None, dense: np.ndarray, group: int) -> tuple[np.ndarray, np.ndarray]:
    """(values, metadata uint8) of a structured-sparse dense array; raises if not sparse enough."""
    r, k = dense.shape
    g = k // group
    nz = (dense.astype(np.float64) != 0) if dense.dtype.kind == "f" or dense.dtype == ml_dtypes.bfloat16 \
        else dense != 0
    nz = np.asarray(nz).reshape(r, g, group)
    keep = group // 2
    counts = nz.sum(axis=2)
    if (counts > keep).any():
        rr, cc = (int(x[0]) for x in np.nonzero(counts > keep))
        raise fail(op, f"row {rr}, chunk {cc} has {int(counts[rr, cc])} non-zeros; "
                       f"{keep}:{group} structured sparsity keeps at most {keep}")
    # positions: non-zeros first (stable, increasing), then zeros; take `keep`, sort
    order = np.argsort(~nz, axis=2, kind="stable")[:, :, :keep]
    order = np.sort(order, axis=2)
    chunks = dense.reshape(r, g, group)
    vals = np.take_along_axis(chunks, order, axis=2).reshape(r, g * keep)
    if group == 2:
        meta = np.where(order[:, :, 0] == 0, 0x4, 0xE)
    else:
        meta = order[:, :, 0] | (order[:, :, 1] << 2)
    return vals.copy(), meta.astype(np.uint8)


def tf32(x: np.ndarray) -> np.ndarray:
    """float32 with the low 13 mantissa bits cleared (the instruction's truncation to .tf32)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return u.view(np.float32)


def mma_sp(op: sm.MmaSpOp | None, a: np.ndarray, meta: np.ndarray, b: np.ndarray, c: np.ndarray,
           *, fam: sm.Family, acc_dtype: np.dtype, sel: int = 0, accumulate: bool = True,
           scale_a: int = 1, scale_b: int = 1, trans_a: int = 0, trans_b: int = 0,
           satfinite: bool = False) -> np.ndarray:
    """The result D (numpy, dtype acc_dtype) of one sparse_mma.mma_sp (module docstring)."""
    if trans_a:
        a = a.T
    if trans_b:
        b = b.T
    dense_a = decompress(op, np.ascontiguousarray(a), meta, fam.group)
    kk = dense_a.shape[1]
    steps = kk // fam.k
    if fam.name == "int":
        ea, eb = dense_a.astype(np.int64), b.astype(np.int64)
        d = c.astype(np.int64)
        for s in range(steps):
            ks = slice(s * fam.k, (s + 1) * fam.k)
            prod = ea[:, ks] @ eb[ks, :]
            d = prod + d if (s > 0 or accumulate) else prod
            if satfinite:
                d = np.clip(d, -2**31, 2**31 - 1)
            else:
                d = (d + 2**31) % 2**32 - 2**31
        return d.astype(np.int32)
    if fam.name == "tf32":
        fa, fb = tf32(dense_a).astype(np.float64), tf32(b).astype(np.float64)
    else:
        fa, fb = dense_a.astype(np.float64), b.astype(np.float64)
    fa, fb = fa * scale_a, fb * scale_b
    d = c.astype(np.float64)
    for s in range(steps):
        ks = slice(s * fam.k, (s + 1) * fam.k)
        prod = fa[:, ks] @ fb[ks, :]
        d = prod + d if (s > 0 or accumulate) else prod
        d = round_from_f64(d, acc_dtype).astype(np.float64)
    return round_from_f64(d, acc_dtype)


@register_impls
class SparseMmaFunctions(InterpreterFunctions):
    """numpy impls of sparse_mma.compress / decompress / mma_sp."""

    @impl(sm.CompressOp)
    def run_compress(self, interpreter: Interpreter, op: sm.CompressOp, args: PythonValues):
        vals, meta = compress(op, args[0], sm.meta_group(op.dense.type.element_type))
        return vals, meta.astype(numpy_dtype(op.meta.type.element_type))

    @impl(sm.DecompressOp)
    def run_decompress(self, interpreter: Interpreter, op: sm.DecompressOp, args: PythonValues):
        return (decompress(op, args[0], args[1], sm.meta_group(op.result.type.element_type)),)

    @impl(sm.MmaSpOp)
    def run_mma_sp(self, interpreter: Interpreter, op: sm.MmaSpOp, args: PythonValues):
        a, meta, b, c = args
        return (mma_sp(op, a, meta, b, c, fam=op.family(),
                       acc_dtype=numpy_dtype(op.c.type.element_type), sel=op.sel,
                       accumulate=op.accumulate, scale_a=op.scale_a, scale_b=op.scale_b,
                       trans_a=op.trans_a, trans_b=op.trans_b,
                       satfinite=op.satfinite is not None),)
