"""The interpreter against independent numpy references (never the interpreter's own helpers).

Kernels are IR text built here; references are written out with plain numpy on int64/float64.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopdialect.context import make_context
from coopdialect.diagnostics import LocatingParser
from coopdialect.interpreter import InterpreterError, interpret_file, run_kernel
from hypothesis_profiles import scaled

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = settings(max_examples=scaled(25), deadline=None)
DIMS = st.sampled_from([8, 16, 32])


def parse(text: str):
    module = LocatingParser(make_context(), text, "test.mlir").parse_module()
    module.verify()
    return module


def kernel(args: str, body: str, wg: int = 32) -> str:
    return (f"func.func @k({args}) attributes {{coop.workgroup_size = array<i32: {wg}, 1, 1>}} "
            f"{{\n{body}\n  func.return\n}}\n")


def run(text: str, buffers, grid=(1, 1, 1), **kw):
    run_kernel(parse(text), "k", buffers, grid, **kw)


def wrap(x, bits: int, signed: bool) -> np.ndarray:
    """Reference wrap of exact Python/int64 integers to `bits` bits."""
    x = np.asarray(x, dtype=object) % (1 << bits)
    if signed:
        x = np.where(x >= (1 << (bits - 1)), x - (1 << bits), x)
    return x.astype(np.int64) if bits < 64 else x


# --------------------------------------------------------------------------------------------
# (a) the example GEMMs
# --------------------------------------------------------------------------------------------


def test_gemm_f16_small_integers_exact():
    rng = np.random.default_rng(1)
    a = rng.integers(-8, 9, (128, 256)).astype(np.float16)
    b = rng.integers(-8, 9, (256, 128)).astype(np.float16)
    c = rng.integers(-100, 101, (128, 128)).astype(np.float32)
    ref = (a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)
    interpret_file(str(ROOT / "examples/gemm_f16.mlir"), "gemm_f16", [a, b, c], (2, 2, 1))
    assert np.array_equal(c, ref)  # in place: the caller's array saw the stores


def test_gemm_f16_random_floats_close():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((128, 256)).astype(np.float16)
    b = rng.standard_normal((256, 128)).astype(np.float16)
    c = rng.standard_normal((128, 128)).astype(np.float32)
    ref = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
    interpret_file(str(ROOT / "examples/gemm_f16.mlir"), "gemm_f16", [a, b, c], (2, 2, 1))
    # the kernel rounds to f32 after each K step of 16; the reference once
    np.testing.assert_allclose(c, ref, rtol=0, atol=1e-4)


def test_gemm_s8_exact_wrapping():
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (64, 128)).astype(np.int8)
    bt = rng.integers(-128, 128, (64, 128)).astype(np.int8)
    c = rng.integers(-(2**31), 2**31, (64, 64)).astype(np.int32)  # sums wrap often
    ref = wrap(a.astype(np.int64) @ bt.astype(np.int64).T + c.astype(np.int64), 32, True)
    interpret_file(str(ROOT / "examples/gemm_s8.mlir"), "gemm_s8", [a, bt, c], (4, 2, 1))
    assert np.array_equal(c.astype(np.int64), ref)


def test_non_contiguous_buffer_copied_back():
    rng = np.random.default_rng(4)
    a = rng.integers(-128, 128, (64, 128)).astype(np.int8)
    bt = rng.integers(-128, 128, (64, 128)).astype(np.int8)
    c = np.asfortranarray(np.zeros((64, 64), np.int32))
    interpret_file(str(ROOT / "examples/gemm_s8.mlir"), "gemm_s8", [a, bt, c], (4, 2, 1))
    assert np.array_equal(c.astype(np.int64), wrap(a.astype(np.int64) @ bt.astype(np.int64).T,
                                                   32, True))


# --------------------------------------------------------------------------------------------
# (b) properties: load/store
# --------------------------------------------------------------------------------------------

TYPES = {"f16": np.float16, "f32": np.float32, "bf16": ml_dtypes.bfloat16, "i8": np.int8,
         "ui16": np.uint16, "si32": np.int32}


def ref_gather(buf, rows, cols, off, stride, layout):
    out = np.empty((rows, cols), buf.dtype)
    for r in range(rows):
        for c in range(cols):
            out[r, c] = buf[off + (r * stride + c if layout == "RowMajor" else c * stride + r)]
    return out


@SETTINGS
@given(rows=DIMS, cols=DIMS, t=st.sampled_from(sorted(TYPES)),
       l1=st.sampled_from(["RowMajor", "ColumnMajor"]), l2=st.sampled_from(["RowMajor",
                                                                              "ColumnMajor"]),
       extra1=st.integers(0, 5), extra2=st.integers(0, 5), off1=st.integers(0, 40),
       off2=st.integers(0, 40), seed=st.integers(0, 2**16))
def test_load_store_round_trip(rows, cols, t, l1, l2, extra1, extra2, off1, off2, seed):
    # minimum strides keep the stored elements distinct
    s1 = (cols if l1 == "RowMajor" else rows) + extra1
    s2 = (cols if l2 == "RowMajor" else rows) + extra2
    n1 = off1 + s1 * max(rows, cols) + max(rows, cols)
    n2 = off2 + s2 * max(rows, cols) + max(rows, cols)
    rng = np.random.default_rng(seed)
    src = rng.integers(-100, 100, n1).astype(TYPES[t])
    dst = np.zeros(n2, TYPES[t])
    m = f"!coop.matrix<{rows}x{cols}x{t}, Subgroup, MatrixA>"
    text = kernel(f"%src: memref<{n1}x{t}>, %dst: memref<{n2}x{t}>", f"""
  %o1 = arith.constant {off1} : index
  %s1 = arith.constant {s1} : index
  %o2 = arith.constant {off2} : index
  %s2 = arith.constant {s2} : index
  %m = coop.load %src[%o1], %s1, {l1} : memref<{n1}x{t}> -> {m}
  coop.store %m, %dst[%o2], %s2, {l2} : {m}, memref<{n2}x{t}>""")
    run(text, [src, dst])
    mat = ref_gather(src, rows, cols, off1, s1, l1)
    expect = np.zeros(n2, TYPES[t])
    for r in range(rows):
        for c in range(cols):
            expect[off2 + (r * s2 + c if l2 == "RowMajor" else c * s2 + r)] = mat[r, c]
    assert np.array_equal(dst.view(np.uint8), expect.view(np.uint8))


def test_load_stride_zero_broadcasts_a_row():
    src = np.arange(64, dtype=np.float32)
    dst = np.zeros(64, np.float32)
    text = kernel("%src: memref<64xf32>, %dst: memref<64xf32>", """
  %c3 = arith.constant 3 : index
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %m = coop.load %src[%c3], %c0, RowMajor : memref<64xf32> -> !coop.matrix<8x8xf32, Subgroup, MatrixAcc>
  coop.store %m, %dst[%c0], %c8, RowMajor : !coop.matrix<8x8xf32, Subgroup, MatrixAcc>, memref<64xf32>""")
    run(text, [src, dst])
    assert np.array_equal(dst.reshape(8, 8), np.tile(np.arange(3, 11, dtype=np.float32), (8, 1)))


# --------------------------------------------------------------------------------------------
# (b) properties: mul_add
# --------------------------------------------------------------------------------------------

FLAGS = ["ASigned", "BSigned", "CSigned", "ResultSigned"]


def mul_add_kernel(m, n, k, ta, tb, tc, tr, flags: str) -> str:
    ma = f"!coop.matrix<{m}x{k}x{ta}, Subgroup, MatrixA>"
    mb = f"!coop.matrix<{k}x{n}x{tb}, Subgroup, MatrixB>"
    mc = f"!coop.matrix<{m}x{n}x{tc}, Subgroup, MatrixAcc>"
    mr = f"!coop.matrix<{m}x{n}x{tr}, Subgroup, MatrixAcc>"
    return kernel(f"%a: memref<{m * k}x{ta}>, %b: memref<{k * n}x{tb}>, %c: memref<{m * n}x{tc}>, "
                  f"%r: memref<{m * n}x{tr}>", f"""
  %c0 = arith.constant 0 : index
  %sk = arith.constant {k} : index
  %sn = arith.constant {n} : index
  %A = coop.load %a[%c0], %sk, RowMajor : memref<{m * k}x{ta}> -> {ma}
  %B = coop.load %b[%c0], %sn, RowMajor : memref<{k * n}x{tb}> -> {mb}
  %C = coop.load %c[%c0], %sn, RowMajor : memref<{m * n}x{tc}> -> {mc}
  %R = coop.mul_add %A, %B, %C {flags} : {ma}, {mb}, {mc} -> {mr}
  coop.store %R, %r[%c0], %sn, RowMajor : {mr}, memref<{m * n}x{tr}>""")


def exact(x: np.ndarray, signed: bool) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    u = x.view(f"u{x.dtype.itemsize}").astype(object)
    return np.where(u >= (1 << (bits - 1)), u - (1 << bits), u) if signed else u


@SETTINGS
@given(m=DIMS, n=DIMS, k=DIMS, mask=st.integers(0, 15), sat=st.booleans(),
       seed=st.integers(0, 2**16))
def test_mul_add_int_flags(m, n, k, mask, sat, seed):
    flags = [f for i, f in enumerate(FLAGS) if mask >> i & 1]
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    c = rng.integers(-(2**31), 2**31, (m, n)).astype(np.int32)
    ab = exact(a, "ASigned" in flags) @ exact(b, "BSigned" in flags)
    total = ab + exact(c, "CSigned" in flags)
    rs = "ResultSigned" in flags
    if sat:
        flags.append("SaturatingAccumulation")
        lo, hi = (-(2**31), 2**31 - 1) if rs else (0, 2**32 - 1)
        if np.any((ab < lo) | (ab > hi)):
            return  # undefined (tested separately)
        expect = np.minimum(np.maximum(total, lo), hi)
    else:
        expect = total
    r = np.zeros(m * n, np.int32)
    op_flags = "<" + "|".join(flags) + ">" if flags else ""
    run(mul_add_kernel(m, n, k, "i8", "i8", "i32", "i32", op_flags),
        [a.reshape(-1), b.reshape(-1), c.reshape(-1), r])
    assert np.array_equal(r.reshape(m, n).astype(np.int64), wrap(expect, 32, True))


@SETTINGS
@given(m=DIMS, k=DIMS, ta=st.sampled_from(["si8", "ui8"]), tb=st.sampled_from(["si8", "ui8"]),
       tc=st.sampled_from(["si32", "ui32"]), seed=st.integers(0, 2**16))
def test_mul_add_signedness_from_types(m, k, ta, tb, tc, seed):
    n = 16
    dt = {"si8": np.int8, "ui8": np.uint8, "si32": np.int32, "ui32": np.uint32}
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, (m, k)).astype(np.uint8).view(dt[ta])
    b = rng.integers(0, 256, (k, n)).astype(np.uint8).view(dt[tb])
    c = rng.integers(0, 2**32, (m, n)).astype(np.uint32).view(dt[tc])
    expect = a.astype(np.int64) @ b.astype(np.int64) + c.astype(np.int64)
    r = np.zeros(m * n, dt[tc])
    run(mul_add_kernel(m, n, k, ta, tb, tc, tc, ""),
        [a.reshape(-1), b.reshape(-1), c.reshape(-1), r])
    assert np.array_equal(r.view(np.int32).astype(np.int64).reshape(m, n),
                          wrap(expect, 32, True))


@pytest.mark.parametrize("signed", [True, False])
def test_mul_add_saturates_vs_wraps(signed):
    m = n = k = 16
    a = np.full((m, k), 100, np.int8)
    b = np.full((k, n), 100, np.int8)  # A*B = 160000 per element
    if signed:
        c = np.full((m, n), 2**31 - 1000, np.int32)
        c[0, :] = -(2**31) + 5  # no overflow in row 0
        a[1, :] = -100  # row 1: 2**31-1000 - 160000: no overflow
        flags = ["ASigned", "BSigned", "CSigned", "ResultSigned"]
        hi = 2**31 - 1
    else:
        c = np.full((m, n), 2**32 - 1000, np.uint64).astype(np.uint32).view(np.int32)
        flags = []
        hi = 2**32 - 1
    ab = exact(a, signed) @ exact(b, signed)
    total = ab + exact(c, signed)
    for sat in (False, True):
        r = np.zeros(m * n, np.int32)
        fl = flags + (["SaturatingAccumulation"] if sat else [])
        op_flags = "<" + "|".join(fl) + ">" if fl else ""
        run(mul_add_kernel(m, n, k, "i8", "i8", "i32", "i32", op_flags),
            [a.reshape(-1), b.reshape(-1), c.reshape(-1), r])
        expect = np.minimum(total, hi) if sat else total
        got = r.reshape(m, n)
        assert np.array_equal(got.astype(np.int64), wrap(expect, 32, True))
        assert (got[2, 0] == np.int32(-1 if not signed else hi)) == sat


def test_mul_add_saturating_intermediate_overflow_raises():
    a = np.full(16 * 16, -128, np.int8)
    b = np.full(16 * 16, 127, np.int8)
    c = np.zeros(256, np.int32)
    r = np.zeros(256, np.int32)
    text = mul_add_kernel(16, 16, 16, "i8", "i8", "i32", "i32",
                          "<ASigned|BSigned|SaturatingAccumulation>")  # unsigned Result, A*B < 0
    with pytest.raises(InterpreterError, match="coop.mul_add.*overflows"):
        run(text, [a, b, c, r])


@SETTINGS
@given(m=DIMS, n=DIMS, k=DIMS, ta=st.sampled_from(["f16", "bf16"]),
       tr=st.sampled_from(["f16", "f32"]), seed=st.integers(0, 2**16))
def test_mul_add_float_single_rounding(m, n, k, ta, tr, seed):
    dta = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}[ta]
    dtr = {"f16": np.float16, "f32": np.float32}[tr]
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(dta)
    b = rng.standard_normal((k, n)).astype(dta)
    c = rng.standard_normal((m, n)).astype(dtr)
    r = np.zeros(m * n, dtr)
    run(mul_add_kernel(m, n, k, ta, ta, tr, tr, ""),
        [a.reshape(-1), b.reshape(-1), c.reshape(-1), r])
    exact64 = a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)
    # numpy rounds float64 -> float16/float32 once, to nearest even
    assert np.array_equal(r.reshape(m, n), exact64.astype(dtr))


# --------------------------------------------------------------------------------------------
# (b) properties: element-wise ops and conversions
# --------------------------------------------------------------------------------------------


def unary_or_binary_kernel(rows, cols, t_in, t_out, op_text, n_in) -> str:
    mi = f"!coop.matrix<{rows}x{cols}x{t_in}, Subgroup, MatrixAcc>"
    mo = f"!coop.matrix<{rows}x{cols}x{t_out}, Subgroup, MatrixAcc>"
    size = rows * cols
    args = ", ".join(f"%x{i}: memref<{size}x{t_in}>" for i in range(n_in))
    loads = "\n".join(f"  %m{i} = coop.load %x{i}[%c0], %s, RowMajor : memref<{size}x{t_in}> -> {mi}"
                      for i in range(n_in))
    return kernel(f"{args}, %out: memref<{size}x{t_out}>", f"""
  %c0 = arith.constant 0 : index
  %s = arith.constant {cols} : index
{loads}
  %r = {op_text.format(mi=mi, mo=mo)}
  coop.store %r, %out[%c0], %s, RowMajor : {mo}, memref<{size}x{t_out}>""")


INT_OPS = {
    "iadd": lambda x, y: x + y, "isub": lambda x, y: x - y, "imul": lambda x, y: x * y,
}


@SETTINGS
@given(rows=DIMS, cols=DIMS, op=st.sampled_from(["iadd", "isub", "imul", "sdiv", "udiv"]),
       t=st.sampled_from(["i8", "i16", "i32"]), seed=st.integers(0, 2**16))
def test_integer_elementwise_wraps(rows, cols, op, t, seed):
    bits = int(t[1:])
    rng = np.random.default_rng(seed)
    dt = np.dtype(f"i{bits // 8}")
    x = rng.integers(-(2 ** (bits - 1)), 2 ** (bits - 1), rows * cols).astype(dt)
    y = rng.integers(-(2 ** (bits - 1)), 2 ** (bits - 1), rows * cols).astype(dt)
    y[y == 0] = 3
    if op == "sdiv":
        y[(x == -(2 ** (bits - 1))) & (y == -1)] = 7
    ex, ey = x.astype(object), y.astype(object)
    if op == "sdiv":
        q = [abs(p) // abs(d) * (1 if (p < 0) == (d < 0) else -1) for p, d in zip(ex, ey)]
        expect = wrap(np.array(q, dtype=object), bits, True)
    elif op == "udiv":
        ux, uy = ex % (1 << bits), ey % (1 << bits)
        expect = wrap(ux // uy, bits, True)
    else:
        expect = wrap(INT_OPS[op](ex, ey), bits, True)
    out = np.zeros(rows * cols, dt)
    run(unary_or_binary_kernel(rows, cols, t, t, f"coop.{op} %m0, %m1 : {{mi}}", 2), [x, y, out])
    assert np.array_equal(out.astype(np.int64), expect)


ARITH_OPS = {"addi": lambda x, y: x + y, "subi": lambda x, y: x - y, "muli": lambda x, y: x * y,
             "andi": lambda x, y: x & y, "ori": lambda x, y: x | y, "xori": lambda x, y: x ^ y}


@SETTINGS
@given(op=st.sampled_from(sorted(ARITH_OPS)), t=st.sampled_from(["i8", "i16", "i32", "i64"]),
       seed=st.integers(0, 2**16))
def test_scalar_and_lane_integer_arith_wraps(op, t, seed):
    """arith.addi/subi/muli/andi/ori/xori of a lane vector (each invocation's own element) with
    a constant (a scalar), and of two constants, near and at the type's extremes: the exact
    result wrapped to the width, two's complement."""
    bits = int(t[1:])
    dt = np.dtype(f"i{bits // 8}")
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    rng = np.random.default_rng(seed)
    edges = np.array([lo, lo + 1, -1, 0, 1, hi - 1, hi], dtype=object)
    x = np.array([int(v) for v in rng.choice(edges, 32)], dtype=object)
    x[::3] = [int(v) for v in rng.integers(lo, hi, len(x[::3]), endpoint=True)]
    c, d = (int(v) for v in rng.choice(edges, 2))
    # sign-extended to i64 before the store, so the value itself is checked, not the store's
    # truncation of it
    ext = lambda v: f"arith.extsi {v} : {t} to i64"  # noqa: E731
    text = kernel(f"%x: memref<32x{t}>, %out: memref<33xi64>", f"""
  %l = gpu.lane_id : index
  %v = memref.load %x[%l] : memref<32x{t}>
  %c = arith.constant {c} : {t}
  %d = arith.constant {d} : {t}
  %r = arith.{op} %v, %c : {t}
  %re = {ext("%r") if bits < 64 else "arith.addi %r, %zero : i64"}
  memref.store %re, %out[%l] : memref<33xi64>
  %s = arith.{op} %c, %d : {t}
  %se = {ext("%s") if bits < 64 else "arith.addi %s, %zero : i64"}
  %i32 = arith.constant 32 : index
  memref.store %se, %out[%i32] : memref<33xi64>""".replace(
        "  %c = ", "  %zero = arith.constant 0 : i64\n  %c = ", 1))
    out = np.zeros(33, np.int64)
    run(text, [x.astype(dt), out])
    want = wrap(np.array([ARITH_OPS[op](v, c) for v in x] + [ARITH_OPS[op](c, d)], dtype=object),
                bits, True)
    assert np.array_equal(out.astype(object), np.asarray(want, dtype=object))


@SETTINGS
@given(rows=DIMS, cols=DIMS, t=st.sampled_from(["i8", "i32"]), seed=st.integers(0, 2**16))
def test_snegate_wraps(rows, cols, t, seed):
    bits = int(t[1:])
    dt = np.dtype(f"i{bits // 8}")
    x = np.random.default_rng(seed).integers(-(2 ** (bits - 1)), 2 ** (bits - 1),
                                             rows * cols).astype(dt)
    x[0] = -(2 ** (bits - 1))  # -MIN wraps to MIN
    out = np.zeros_like(x)
    run(unary_or_binary_kernel(rows, cols, t, t, "coop.snegate %m0 : {mi}", 1), [x, out])
    assert np.array_equal(out.astype(np.int64), wrap(-x.astype(object), bits, True))


@SETTINGS
@given(rows=DIMS, cols=DIMS, op=st.sampled_from(["fadd", "fsub", "fmul", "fdiv"]),
       t=st.sampled_from(["f16", "f32"]), seed=st.integers(0, 2**16))
def test_float_elementwise_rounds_each_op(rows, cols, op, t, seed):
    dt = {"f16": np.float16, "f32": np.float32}[t]
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(rows * cols) * 100).astype(dt)
    y = (rng.standard_normal(rows * cols) * 100).astype(dt)
    f = {"fadd": np.add, "fsub": np.subtract, "fmul": np.multiply, "fdiv": np.divide}[op]
    # exact (or, for fdiv, 53-bit) result in float64, rounded once: the correctly rounded op
    with np.errstate(all="ignore"):
        expect = f(x.astype(np.float64), y.astype(np.float64)).astype(dt)
    out = np.zeros_like(x)
    run(unary_or_binary_kernel(rows, cols, t, t, f"coop.{op} %m0, %m1 : {{mi}}", 2), [x, y, out])
    assert np.array_equal(out, expect)


def test_fnegate_and_matrix_times_scalar_f16():
    x = (np.arange(256) / 7).astype(np.float16)
    out = np.zeros_like(x)
    text = unary_or_binary_kernel(16, 16, "f16", "f16", "coop.fnegate %m0 : {mi}", 1)
    run(text, [x, out])
    assert np.array_equal(out, -x)
    text = unary_or_binary_kernel(16, 16, "f16", "f16", "coop.fnegate %m0 : {mi}", 1).replace(
        "%r = coop.fnegate %m0 : ", "%sc = arith.constant 0.1 : f16\n  "
        "%r = coop.matrix_times_scalar %m0, %sc : ").replace(
        "MatrixAcc> -> ", "MatrixAcc>, f16 -> ", 1)
    text = text.replace("%m0, %sc : !coop.matrix<16x16xf16, Subgroup, MatrixAcc>\n",
                        "%m0, %sc : !coop.matrix<16x16xf16, Subgroup, MatrixAcc>, f16 -> "
                        "!coop.matrix<16x16xf16, Subgroup, MatrixAcc>\n")
    run(text, [x, out])
    expect = (x.astype(np.float64) * np.float64(np.float16(0.1))).astype(np.float16)
    assert np.array_equal(out, expect)


CONVERSIONS = [
    # (op, t_in, t_out)
    ("convert_f_to_s", "f16", "i32"), ("convert_f_to_s", "f32", "i8"),
    ("convert_f_to_u", "f16", "i16"), ("convert_s_to_f", "i32", "f16"),
    ("convert_s_to_f", "i8", "f32"), ("convert_u_to_f", "i32", "f32"),
    ("convert_u_to_f", "i16", "f16"), ("s_convert", "i8", "i32"), ("s_convert", "i32", "i8"),
    ("u_convert", "i8", "i32"), ("u_convert", "i32", "i16"), ("f_convert", "f32", "f16"),
    ("f_convert", "f16", "f32"), ("f_convert", "f32", "bf16"), ("bitcast", "i32", "ui32"),
]
NP = {"f16": np.float16, "f32": np.float32, "bf16": ml_dtypes.bfloat16, "i8": np.int8,
      "i16": np.int16, "i32": np.int32, "ui32": np.uint32}


def conversion_input(t_in, t_out, op, rng, size):
    if op.startswith("convert_f_to"):
        bits = int(t_out[1:])
        hi = 2 ** (bits - 1) - 1 if op == "convert_f_to_s" else 2**bits - 1
        lo = -(2 ** (bits - 1)) if op == "convert_f_to_s" else 0
        hi = min(hi, 60000)
        lo = max(lo, -60000)
        return rng.uniform(lo, hi, size).astype(NP[t_in])
    if t_in.startswith("f"):
        return (rng.standard_normal(size) * 1000).astype(NP[t_in])
    bits = int(t_in.lstrip("ui"))
    return rng.integers(0, 2**bits, size).astype(np.uint64).astype(f"u{bits // 8}").view(NP[t_in])


def conversion_reference(op, x, t_out):
    dt = NP[t_out]
    if op in ("convert_f_to_s", "convert_f_to_u"):
        bits = np.dtype(dt).itemsize * 8
        return wrap(np.trunc(x.astype(np.float64)).astype(np.int64), bits, True).astype(dt)
    if op == "convert_s_to_f":
        vals = x.astype(np.int64).astype(np.float64)
    elif op == "convert_u_to_f":
        vals = x.view(f"u{x.dtype.itemsize}").astype(np.float64)
    elif op == "s_convert":
        return wrap(x.astype(np.int64), np.dtype(dt).itemsize * 8, True).astype(dt)
    elif op == "u_convert":
        u = x.view(f"u{x.dtype.itemsize}").astype(np.int64)
        return wrap(u, np.dtype(dt).itemsize * 8, True).astype(dt)
    elif op == "bitcast":
        return x.view(dt)
    else:
        vals = x.astype(np.float64)
    if dt is ml_dtypes.bfloat16:
        # inputs are f32: exact in float32, so ml_dtypes' float32 -> bfloat16 is one rounding
        return vals.astype(np.float32).astype(dt)
    with np.errstate(over="ignore"):
        return vals.astype(dt)


@SETTINGS
@given(rows=DIMS, cols=DIMS, case=st.sampled_from(CONVERSIONS), seed=st.integers(0, 2**16))
def test_conversions(rows, cols, case, seed):
    op, t_in, t_out = case
    x = conversion_input(t_in, t_out, op, np.random.default_rng(seed), rows * cols)
    out = np.zeros(rows * cols, NP[t_out])
    run(unary_or_binary_kernel(rows, cols, t_in, t_out, f"coop.{op} %m0 : {{mi}} -> {{mo}}", 1),
        [x, out])
    expect = conversion_reference(op, x, t_out)
    assert np.array_equal(out.view(np.uint8), expect.view(np.uint8)), (op, t_in, t_out)


# --------------------------------------------------------------------------------------------
# length / extract / insert, lanes, composite_construct, barriers
# --------------------------------------------------------------------------------------------


@SETTINGS
@given(rows=DIMS, cols=DIMS, index=st.integers(0, 31), sg=st.sampled_from([8, 32]))
def test_length_extract_insert_mapping(rows, cols, index, sg):
    size = rows * cols
    length = -(-size // sg)
    index = index % length
    m = f"!coop.matrix<{rows}x{cols}xi32, Subgroup, MatrixAcc>"
    text = kernel(f"%src: memref<{size}xi32>, %ext: memref<{sg}xi32>, %len: memref<1xi32>, "
                  f"%dst: memref<{size}xi32>", f"""
  %c0 = arith.constant 0 : index
  %s = arith.constant {cols} : index
  %m = coop.load %src[%c0], %s, RowMajor : memref<{size}xi32> -> {m}
  %n = coop.length : {m}
  memref.store %n, %len[%c0] : memref<1xi32>
  %l = gpu.lane_id : index
  %x = coop.extract %m[{index}] : {m}
  memref.store %x, %ext[%l] : memref<{sg}xi32>
  %li = arith.index_cast %l : index to i32
  %k = arith.constant 1000 : i32
  %v = arith.addi %li, %k : i32
  %m2 = coop.insert %v, %m[{index}] : {m}
  coop.store %m2, %dst[%c0], %s, RowMajor : {m}, memref<{size}xi32>""", wg=sg)
    src = np.arange(size, dtype=np.int32) * 5 + 1
    ext = np.full(sg, -1, np.int32)
    ln = np.zeros(1, np.int32)
    dst = np.zeros(size, np.int32)
    run(text, [src, ext, ln, dst], subgroup_size=sg)
    assert ln[0] == length
    expect_ext = np.array([src[index * sg + lane] if index * sg + lane < size else 0
                           for lane in range(sg)], np.int32)
    assert np.array_equal(ext, expect_ext)
    expect_dst = src.copy()
    for lane in range(sg):
        if index * sg + lane < size:
            expect_dst[index * sg + lane] = 1000 + lane
    assert np.array_equal(dst, expect_dst)


def test_composite_construct_and_thread_ids():
    # each subgroup of each workgroup stores its own 256 elements (no data race)
    text = kernel("%out: memref<1024xf32>, %ids: memref<2x64xi32>", """
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %x = arith.constant 2.5 : f32
  %m = coop.composite_construct %x : f32 -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  %sg = gpu.subgroup_id : index
  %wg = gpu.block_id x
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %w2 = arith.muli %wg, %c2 : index
  %k = arith.addi %w2, %sg : index
  %o = arith.muli %k, %c256 : index
  coop.store %m, %out[%o], %c16, RowMajor : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, memref<1024xf32>
  %t = gpu.thread_id x
  %g = gpu.global_id x
  %ti = arith.index_cast %t : index to i32
  %gi = arith.index_cast %g : index to i32
  %c1 = arith.constant 1 : index
  %b = gpu.block_id x
  %b0 = arith.cmpi eq, %b, %c0 : index
  scf.if %b0 {
    memref.store %ti, %ids[%c0, %t] : memref<2x64xi32>
  }
  %bz = arith.cmpi eq, %b, %c1 : index
  scf.if %bz {
    memref.store %gi, %ids[%c1, %t] : memref<2x64xi32>
  }""", wg=64)
    out = np.zeros(1024, np.float32)
    ids = np.zeros((2, 64), np.int32)
    run(text, [out, ids], grid=(2, 1, 1))
    assert np.all(out == 2.5)
    assert np.array_equal(ids[0], np.arange(64)) and np.array_equal(ids[1], np.arange(64, 128))


def test_barrier_and_workgroup_memory_across_subgroups():
    sh = "memref<64xf32, #coop<storage_class Workgroup>>"
    text = kernel("%out: memref<128xf32>", f"""
  %sh = memref.alloc() : {sh}
  %t = gpu.thread_id x
  %ti = arith.index_cast %t : index to i32
  %f = arith.sitofp %ti : i32 to f32
  memref.store %f, %sh[%t] : {sh}
  "gpu.barrier"() : () -> ()
  %c63 = arith.constant 63 : index
  %r = arith.subi %c63, %t : index
  %v = memref.load %sh[%r] : {sh}
  %g = gpu.global_id x
  memref.store %v, %out[%g] : memref<128xf32>""", wg=64)
    out = np.zeros(128, np.float32)
    run(text, [out], grid=(2, 1, 1))  # 2 subgroups per workgroup: each reads the other's half
    assert np.array_equal(out, np.tile(np.arange(63, -1, -1, dtype=np.float32), 2))


def test_scalar_float_arith_rounds_to_f16():
    text = kernel("%out: memref<2xf16>", """
  %a = arith.constant 1.0 : f16
  %e = arith.constant 0.0004 : f16
  %s = arith.addf %a, %e : f16
  %s2 = arith.addf %s, %e : f16
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  memref.store %s2, %out[%c0] : memref<2xf16>
  %d = arith.divf %a, %e : f16
  memref.store %d, %out[%c1] : memref<2xf16>""")
    out = np.zeros(2, np.float16)
    run(text, [out])
    e = np.float16(0.0004)
    assert out[0] == np.float16(np.float16(1 + np.float64(e)) + np.float64(e))
    assert out[1] == np.float16(1 / np.float64(e))


# --------------------------------------------------------------------------------------------
# (c) errors
# --------------------------------------------------------------------------------------------


def test_error_out_of_bounds_load_names_op_and_location():
    text = kernel("%src: memref<64xf32>, %dst: memref<64xf32>", """
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %m = coop.load %src[%c9], %c8, RowMajor : memref<64xf32> -> !coop.matrix<8x8xf32, Subgroup, MatrixAcc>""")
    with pytest.raises(InterpreterError) as info:
        run(text, [np.zeros(64, np.float32), np.zeros(64, np.float32)])
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("test.mlir:6:3: error: 'coop.load' op out-of-bounds load")
    assert "index 64" in msg


def test_error_store_stride_zero_at_run_time():
    text = kernel("%dst: memref<64xf32>, %s: index", """
  %c0 = arith.constant 0 : index
  %x = arith.constant 1.0 : f32
  %m = coop.composite_construct %x : f32 -> !coop.matrix<8x8xf32, Subgroup, MatrixAcc>
  coop.store %m, %dst[%c0], %s, RowMajor : !coop.matrix<8x8xf32, Subgroup, MatrixAcc>, memref<64xf32>""")
    with pytest.raises(InterpreterError, match=r"test.mlir:6:3: .*'coop.store' op Stride must be "
                                               r"greater than 0.*got 0"):
        run(text, [np.zeros(64, np.float32), 0])


def test_error_fptosi_out_of_range():
    text = kernel("%out: memref<1xi32>", """
  %big = arith.constant 3.0e10 : f32
  %i = arith.fptosi %big : f32 to i32
  %c0 = arith.constant 0 : index
  memref.store %i, %out[%c0] : memref<1xi32>""")
    with pytest.raises(InterpreterError, match=r"test.mlir:4:3: .*'arith.fptosi' op .*not "
                                               r"representable"):
        run(text, [np.zeros(1, np.int32)])


def test_error_convert_f_to_s_out_of_range():
    x = np.full(64, 300.0, np.float16)
    text = unary_or_binary_kernel(8, 8, "f16", "i8", "coop.convert_f_to_s %m0 : {mi} -> {mo}", 1)
    with pytest.raises(InterpreterError, match="'coop.convert_f_to_s' op element \\(0, 0\\)"):
        run(text, [x, np.zeros(64, np.int8)])


def test_error_division_by_zero():
    x = np.ones(64, np.int32)
    y = np.ones(64, np.int32)
    y[9] = 0
    text = unary_or_binary_kernel(8, 8, "i32", "i32", "coop.sdiv %m0, %m1 : {mi}", 2)
    with pytest.raises(InterpreterError, match=r"division by zero at element \(1, 1\)"):
        run(text, [x, y, np.zeros(64, np.int32)])


def test_error_bad_buffers_and_missing_workgroup_size():
    text = kernel("%dst: memref<64xf32>", "")
    with pytest.raises(InterpreterError, match="needs dtype float32, got float16"):
        run(text, [np.zeros(64, np.float16)])
    with pytest.raises(InterpreterError, match=r"needs shape \(64,\), got \(63,\)"):
        run(text, [np.zeros(63, np.float32)])
    with pytest.raises(InterpreterError, match="coop.workgroup_size"):
        run_kernel(parse("func.func @k() {\n  func.return\n}\n"), "k", [], (1, 1, 1))


def test_error_divergent_branch():
    text = kernel("%out: memref<32xf32>", """
  %l = gpu.lane_id : index
  %c3 = arith.constant 3 : index
  %p = arith.cmpi ult, %l, %c3 : index
  scf.if %p {
  }""")
    with pytest.raises(InterpreterError, match="'scf.if' op .*differs between the invocations"):
        run(text, [np.zeros(32, np.float32)])


def test_barrier_skipped_by_one_subgroup_is_reported():
    text = kernel("%out: memref<1xf32>", """
  %sg = gpu.subgroup_id : index
  %c0 = arith.constant 0 : index
  %p = arith.cmpi eq, %sg, %c0 : index
  scf.if %p {
    "gpu.barrier"() : () -> ()
  }""", wg=64)
    with pytest.raises(InterpreterError, match="'gpu.barrier' op the barrier was abandoned"):
        run(text, [np.zeros(1, np.float32)])


def test_nv_mul_add_exact_and_overflow_undefined():
    m = n = k = 16
    ma, mb = f"!coop.matrix<{m}x{k}xsi8, Subgroup>", f"!coop.matrix<{k}x{n}xsi8, Subgroup>"
    mc = f"!coop.matrix<{m}x{n}xsi32, Subgroup>"
    text = kernel(f"%a: memref<{m * k}xsi8>, %b: memref<{k * n}xsi8>, %c: memref<{m * n}xsi32>", f"""
  %c0 = arith.constant 0 : index
  %s = arith.constant 16 : index
  %A = coop.load %a[%c0], %s, RowMajor : memref<{m * k}xsi8> -> {ma}
  %B = coop.load %b[%c0], %s, RowMajor : memref<{k * n}xsi8> -> {mb}
  %C = coop.load %c[%c0], %s, RowMajor : memref<{m * n}xsi32> -> {mc}
  %R = coop.mul_add %A, %B, %C : {ma}, {mb}, {mc} -> {mc}
  coop.store %R, %c[%c0], %s, RowMajor : {mc}, memref<{m * n}xsi32>""")
    rng = np.random.default_rng(5)
    a = rng.integers(-128, 128, m * k).astype(np.int8)
    b = rng.integers(-128, 128, k * n).astype(np.int8)
    c = rng.integers(-1000, 1000, m * n).astype(np.int32)
    expect = a.reshape(m, k).astype(np.int64) @ b.reshape(k, n).astype(np.int64) + c.reshape(m, n)
    run(text, [a, b, c])
    assert np.array_equal(c.reshape(m, n).astype(np.int64), expect)
    c[:] = 2**31 - 1
    a[:], b[:] = 1, 1
    with pytest.raises(InterpreterError, match="undefined behavior for NV"):
        run(text, [a, b, c])


def test_workgroup_scope_extract_uses_local_invocation_index():
    mt = "!coop.matrix<16x16xf32, Workgroup, MatrixAcc>"
    text = kernel("%src: memref<256xf32>, %ext: memref<3x64xf32>, %len: memref<1xi32>", f"""
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = arith.constant 16 : index
  %m = coop.load %src[%c0], %s, RowMajor : memref<256xf32> -> {mt}
  %n = coop.length : {mt}
  %sg = gpu.subgroup_id : index
  %sg0 = arith.cmpi eq, %sg, %c0 : index
  scf.if %sg0 {{  // one subgroup stores it (two would race)
    memref.store %n, %len[%c0] : memref<1xi32>
  }}
  %t = gpu.thread_id x
  %x0 = coop.extract %m[0] : {mt}
  %x3 = coop.extract %m[3] : {mt}
  memref.store %x0, %ext[%c0, %t] : memref<3x64xf32>
  memref.store %x3, %ext[%c1, %t] : memref<3x64xf32>""", wg=64)
    src = np.arange(256, dtype=np.float32)
    ext = np.zeros((3, 64), np.float32)
    ln = np.zeros(1, np.int32)
    run(text, [src, ext, ln])  # 2 subgroups of 32 share one 64-invocation Workgroup matrix
    assert ln[0] == 4
    assert np.array_equal(ext[0], np.arange(64)) and np.array_equal(ext[1], 192 + np.arange(64))
