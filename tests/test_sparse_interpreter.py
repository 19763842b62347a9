"""sparse_mma interpreter vs an INDEPENDENT dense reference (PTX ISA 9.7.15.6; ptx-wgmma-sparse.md s.3).

The reference below decompresses with its own loop over chunks (idx0 = e & 3, idx1 = e >> 2;
tf32: 0x4 -> element 0, 0xE -> element 1), then multiplies with numpy in float64 / int64 per
instruction K-step, rounding to the accumulator type (floats) or wrapping / clamping to int32;
tf32 inputs are float32 with the low 13 mantissa bits cleared. Data are dyadic or integer, so the
comparison is exact. Hypothesis draws random 2:4 (1:2) patterns, types, options and N.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopdialect import api
from coopdialect.interpreter.common import InterpreterError
from sparse_cases import Variant, inputs, kernel_ir, type_combos
from hypothesis_profiles import scaled

PAIRS = {0x4: (0, 1), 0x8: (0, 2), 0xC: (0, 3), 0x9: (1, 2), 0xD: (1, 3), 0xE: (2, 3)}


def ref_decompress(vals: np.ndarray, meta: np.ndarray, group: int) -> np.ndarray:
    rows, chunks = meta.shape
    out = np.zeros((rows, chunks * group), dtype=np.float64 if vals.dtype.kind == "f" or
                   vals.dtype in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                                  ml_dtypes.float8_e5m2) else np.int64)
    for r in range(rows):
        for c in range(chunks):
            e = int(meta[r, c])
            if group == 2:
                out[r, 2 * c + (1 if e == 0xE else 0)] = vals[r, c]
            else:
                i0, i1 = PAIRS[e]
                out[r, 4 * c + i0] = vals[r, 2 * c]
                out[r, 4 * c + i1] = vals[r, 2 * c + 1]
    return out


def reference(v: Variant, vals, meta, b, c) -> np.ndarray:
    a = ref_decompress(vals, meta, v.group)
    k = {"f16": 32, "bf16": 32, "tf32": 16}.get(v.at, 64)
    if v.dt == "s32":
        bi = b.astype(np.int64)
        d = c.astype(np.int64)
        for s in range(v.steps):
            p = a[:, s * k:(s + 1) * k].astype(np.int64) @ bi[s * k:(s + 1) * k]
            d = p + d if (s or v.scale_d) else p
            d = np.clip(d, -2**31, 2**31 - 1) if v.satfinite else (d + 2**31) % 2**32 - 2**31
        return d.astype(np.int32)
    if v.at == "tf32":
        def trunc(x):
            return (np.asarray(x, np.float32).view(np.uint32) & 0xFFFFE000).view(np.float32)
        a = trunc(a.astype(np.float32)).astype(np.float64)
        bf = trunc(b).astype(np.float64)
    else:
        bf = b.astype(np.float64)
    a = a * (-1 if v.neg_a else 1)
    bf = bf * (-1 if v.neg_b else 1)
    dt = np.float16 if v.dt == "f16" else np.float32
    d = c.astype(np.float64)
    for s in range(v.steps):
        p = a[:, s * k:(s + 1) * k] @ bf[s * k:(s + 1) * k]
        d = (p + d if (s or v.scale_d) else p).astype(dt).astype(np.float64)
    return d.astype(dt)


def run(v: Variant, seed: int) -> tuple[np.ndarray, np.ndarray]:
    bufs, (vals, meta, b, c) = inputs(v, np.random.default_rng(seed))
    api.run_kernel(api.parse(kernel_ir(v), v.name), "sp", bufs, grid=(1, 1, 1))
    stride = (v.n + 3)
    got = np.stack([bufs[3][5 + r * stride: 5 + r * stride + v.n] for r in range(64)])
    return got, reference(v, vals, meta, b, c)


def _same(got, want) -> bool:
    return np.array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8))


@settings(max_examples=scaled(20), deadline=None)
@given(combo=st.sampled_from(type_combos()), n=st.sampled_from([8, 16, 24, 32, 48, 64]),
       steps=st.integers(1, 3), sel=st.integers(0, 1), scale_d=st.booleans(),
       neg=st.tuples(st.booleans(), st.booleans()), trans=st.tuples(st.booleans(), st.booleans()),
       sat=st.booleans(), rs=st.booleans(), cols=st.tuples(st.booleans(), st.booleans()),
       seed=st.integers(0, 2**31))
def test_interpreter_matches_dense_reference(combo, n, steps, sel, scale_d, neg, trans, sat, rs,
                                             cols, seed):
    at, bt, dt = combo
    fam = {"e4m3": "fp8", "e5m2": "fp8", "s8": "int", "u8": "int"}.get(at, at)
    floats = fam != "int"
    trans_ok = fam in ("f16", "bf16")
    v = Variant(at, bt, dt, n=n, steps=steps, sel=sel if fam in ("f16", "bf16", "tf32") else 0,
                scale_d=scale_d, neg_a=floats and neg[0], neg_b=floats and neg[1],
                trans_a=trans_ok and trans[0] and not rs, trans_b=trans_ok and trans[1],
                satfinite=not floats and sat, rs=rs, a_col=cols[0], b_col=cols[1])
    got, want = run(v, seed)
    assert _same(got, want), v.name


@pytest.mark.parametrize("sat", [False, True])
def test_integer_wrap_and_saturate(sat: bool) -> None:
    """C at the int32 edges: wrap mod 2^32 vs clamp (the inputs put a third of C at +-(2^31-7))."""
    v = Variant("u8", "u8", "s32", n=16, steps=2, satfinite=sat)
    got, want = run(v, 3)
    assert _same(got, want)
    edge = (got == 2**31 - 1) | (got == -2**31)
    assert edge.any() == sat  # only saturation pins values at the bounds


def _decompress_kernel(meta_value: int, group: int, ty: str = "f16") -> str:
    k = 8
    g = k // group
    return f"""
func.func @f(%V: memref<{8 * k // 2}x{ty}>, %E: memref<{8 * g}xui8>, %D: memref<{8 * k}x{ty}>)
    attributes {{coop.workgroup_size = array<i32: 32, 1, 1>}} {{
  %c0 = arith.constant 0 : index
  %ck = arith.constant {k} : index
  %ch = arith.constant {k // 2} : index
  %cg = arith.constant {g} : index
  %v = coop.load %V[%c0], %ch, RowMajor : memref<{8 * k // 2}x{ty}> -> !coop.matrix<8x{k // 2}x{ty}, Subgroup, MatrixA>
  %e = coop.load %E[%c0], %cg, RowMajor : memref<{8 * g}xui8> -> !coop.matrix<8x{g}xui8, Subgroup, MatrixA>
  %d = sparse_mma.decompress %v, %e : !coop.matrix<8x{k // 2}x{ty}, Subgroup, MatrixA>, !coop.matrix<8x{g}xui8, Subgroup, MatrixA> -> !coop.matrix<8x{k}x{ty}, Subgroup, MatrixA>
  coop.store %d, %D[%c0], %ck, RowMajor : !coop.matrix<8x{k}x{ty}, Subgroup, MatrixA>, memref<{8 * k}x{ty}>
  func.return
}}
"""


@pytest.mark.parametrize("bad", [0x0, 0x5, 0xA, 0xF, 0x1, 0x6, 0x2, 0x14])
def test_invalid_metadata_is_an_error(bad: int) -> None:
    """0x0/0x5/0xA/0xF (PTX: undefined), unsorted pairs (0x1 = {1,0}, 0x6 = {2,1}, 0x2 = {2,0}),
    bits above the nibble: the interpreter raises instead of inventing a value."""
    vals = np.ones(32, np.float16)
    meta = np.full(16, 0x4, np.uint8)
    meta[5] = bad
    with pytest.raises(InterpreterError, match="invalid sparsity metadata"):
        api.run_kernel(api.parse(_decompress_kernel(0, 4), "d"), "f", [vals, meta,
                                                                     np.zeros(64, np.float16)],
                       grid=(1, 1, 1))


@pytest.mark.parametrize("bad", [0x8, 0x0, 0x9])
def test_invalid_tf32_metadata(bad: int) -> None:
    vals = np.ones(32, np.float32)
    meta = np.full(32, 0xE, np.uint8)
    meta[3] = bad
    with pytest.raises(InterpreterError, match="invalid sparsity metadata"):
        api.run_kernel(api.parse(_decompress_kernel(0, 2, "f32"), "d"), "f",
                       [vals, meta, np.zeros(64, np.float32)], grid=(1, 1, 1))


@settings(max_examples=scaled(10), deadline=None)
@given(seed=st.integers(0, 2**31), tf32=st.booleans())
def test_compress_decompress_round_trip(seed: int, tf32: bool) -> None:
    """compress keeps the non-zeros in order (independent reference decompress restores them)."""
    from coopdialect.interpreter.sparse_mma import compress
    rng = np.random.default_rng(seed)
    group = 2 if tf32 else 4
    dense = rng.integers(-3, 4, (8, 16)).astype(np.float32 if tf32 else np.float16)
    ch = dense.reshape(8, 16 // group, group)
    drop = np.argsort(rng.random(ch.shape), axis=2)[:, :, :group // 2]
    np.put_along_axis(ch, drop, 0, axis=2)
    vals, meta = compress(None, dense, group)
    valid = {0x4, 0xE} if tf32 else set(PAIRS)
    assert set(np.unique(meta)) <= valid
    assert np.array_equal(ref_decompress(vals, meta, group), dense.astype(np.float64))
