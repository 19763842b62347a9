"""The `math` dialect in the interpreter, against an independent reference: mpmath at 200 bits,
rounded to the result type by the rounding rule itself (nearest, ties to even, with the format's
precision, subnormal range and overflow), not by numpy or ml_dtypes.

f16, bf16 and f32 results must be equal to the correctly rounded value (the interpreter's float64
detour misses it only in vanishingly rare cases, none among these fixed inputs); f64 results
carry numpy's float64 error, checked to be at most two ulp."""

from __future__ import annotations

import math as pymath

import ml_dtypes
import mpmath
import numpy as np
import pytest
from xdsl.interpreter import Interpreter

from coopdialect import api
from coopdialect.interpreter import register_implementations

mpmath.mp.prec = 200

# (mantissa bits with the implicit one, minimum normal exponent, largest finite value)
FORMATS = {
    "f16": (11, -14, 65504.0, np.dtype(np.float16)),
    "bf16": (8, -126, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max), np.dtype(ml_dtypes.bfloat16)),
    "f32": (24, -126, float(np.finfo(np.float32).max), np.dtype(np.float32)),
    "f64": (53, -1022, float(np.finfo(np.float64).max), np.dtype(np.float64)),
}


def round_to(v: mpmath.mpf, fmt: str) -> float:
    """The value of `fmt` nearest to v (ties to even), inf beyond the largest finite value
    plus half an ulp."""
    p, emin, big, _ = FORMATS[fmt]
    if not mpmath.isfinite(v):
        return float(v)
    if v == 0:
        return 0.0
    e = max(int(mpmath.floor(mpmath.log(abs(v), 2))), emin)
    q = mpmath.ldexp(1, e - p + 1)
    n = v / q
    r = mpmath.floor(n)
    frac = n - r
    if frac > 0.5 or (frac == 0.5 and int(r) % 2):
        r += 1
    out = r * q
    if abs(out) > big:
        return pymath.copysign(pymath.inf, float(v))
    return float(out)


def interpret(op_text: str, types: list[str], result: str, *args: np.ndarray) -> np.ndarray:
    """Run one math op on lane vectors through the interpreter."""
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    operands = ", ".join(f"%a{i}" for i in range(len(types)))
    text = f"""func.func @f({params}) -> {result} {{
  %r = {op_text.format(operands=operands)}
  func.return %r : {result}
}}"""
    module = api.parse(text, "math_test")
    interp = Interpreter(module, index_bitwidth=64)
    register_implementations(interp)
    (out,) = interp.call_op("f", tuple(args))
    return np.asarray(out)


UNARY = {  # op -> (mpmath function, input sampler (rng, n) -> float64 array inside the domain)
    "exp": (mpmath.exp, lambda g, n: g.uniform(-20, 20, n)),
    "exp2": (lambda x: mpmath.power(2, x), lambda g, n: g.uniform(-30, 30, n)),
    "expm1": (mpmath.expm1, lambda g, n: g.uniform(-5, 5, n)),
    "log": (mpmath.log, lambda g, n: np.exp(g.uniform(-30, 30, n))),
    "log2": (lambda x: mpmath.log(x, 2), lambda g, n: np.exp(g.uniform(-30, 30, n))),
    "log10": (mpmath.log10, lambda g, n: np.exp(g.uniform(-30, 30, n))),
    "log1p": (mpmath.log1p, lambda g, n: g.uniform(-0.9, 5, n)),
    "sqrt": (mpmath.sqrt, lambda g, n: np.exp(g.uniform(-30, 30, n))),
    "rsqrt": (lambda x: 1 / mpmath.sqrt(x), lambda g, n: np.exp(g.uniform(-30, 30, n))),
    "cbrt": (lambda x: mpmath.sign(x) * mpmath.cbrt(abs(x)), lambda g, n: g.uniform(-100, 100, n)),
    "tanh": (mpmath.tanh, lambda g, n: g.standard_normal(n) * 3),
    "erf": (mpmath.erf, lambda g, n: g.standard_normal(n) * 2),
    "sin": (mpmath.sin, lambda g, n: g.uniform(-10, 10, n)),
    "cos": (mpmath.cos, lambda g, n: g.uniform(-10, 10, n)),
    "tan": (mpmath.tan, lambda g, n: g.uniform(-1.5, 1.5, n)),
    "asin": (mpmath.asin, lambda g, n: g.uniform(-1, 1, n)),
    "acos": (mpmath.acos, lambda g, n: g.uniform(-1, 1, n)),
    "atan": (mpmath.atan, lambda g, n: g.standard_normal(n) * 10),
    "sinh": (mpmath.sinh, lambda g, n: g.uniform(-10, 10, n)),
    "cosh": (mpmath.cosh, lambda g, n: g.uniform(-10, 10, n)),
    "asinh": (mpmath.asinh, lambda g, n: g.standard_normal(n) * 10),
    "acosh": (mpmath.acosh, lambda g, n: 1 + np.exp(g.uniform(-5, 5, n))),
    "atanh": (mpmath.atanh, lambda g, n: g.uniform(-0.99, 0.99, n)),
    "absf": (abs, lambda g, n: g.standard_normal(n) * 100),
    "floor": (mpmath.floor, lambda g, n: g.standard_normal(n) * 100),
    "ceil": (mpmath.ceil, lambda g, n: g.standard_normal(n) * 100),
    "trunc": (lambda x: mpmath.floor(x) if x >= 0 else mpmath.ceil(x),
              lambda g, n: g.standard_normal(n) * 100),
    "roundeven": (mpmath.nint, lambda g, n: np.round(g.standard_normal(n) * 50) / 2),
    "round": (lambda x: mpmath.sign(x) * mpmath.floor(abs(x) + mpmath.mpf(1) / 2),
              lambda g, n: np.round(g.standard_normal(n) * 50) / 2),
}


def _inputs(fmt: str, sampler, n: int = 400, seed: int = 7) -> np.ndarray:
    dt = FORMATS[fmt][3]
    with np.errstate(all="ignore"):
        x = sampler(np.random.default_rng(seed), n).astype(dt)
    return x[np.isfinite(x.astype(np.float64))]


def _assert_correctly_rounded(got: np.ndarray, want: list[float], x, fmt: str, name: str):
    got64 = got.astype(np.float64)
    want = np.array(want)
    if fmt == "f64":  # numpy's float64 functions: within two ulp
        ulp = np.spacing(np.abs(want))
        bad = ~(np.abs(got64 - want) <= 2 * ulp) & ~(np.isnan(got64) & np.isnan(want))
    else:
        bad = ~((got64 == want) | (np.isnan(got64) & np.isnan(want)))
    assert not bad.any(), (f"math.{name} : {fmt}: x = {x[bad][:4]} gives {got64[bad][:4]}, "
                           f"want {want[bad][:4]}")


@pytest.mark.parametrize("fmt", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_is_the_correctly_rounded_value(name, fmt):
    f, sampler = UNARY[name]
    x = _inputs(fmt, sampler)
    if name in ("log", "log2", "log10", "rsqrt"):
        x = x[x != 0]  # underflowed samples: the pole is test_special_values' business
    got = interpret(f"math.{name} {{operands}} : {fmt}", [fmt], fmt, x)
    assert got.dtype == FORMATS[fmt][3] and got.shape == x.shape
    want = [round_to(f(mpmath.mpf(float(v))), fmt) for v in x.astype(np.float64)]
    _assert_correctly_rounded(got, want, x, fmt, name)


BINARY = {
    "atan2": (mpmath.atan2, lambda g, n: g.standard_normal(n) * 5),
    "powf": (mpmath.power, lambda g, n: np.abs(g.standard_normal(n)) * 3),
    "copysign": (lambda a, b: abs(a) * (-1 if b < 0 else 1), lambda g, n: g.standard_normal(n)),
}


@pytest.mark.parametrize("fmt", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_is_the_correctly_rounded_value(name, fmt):
    f, sampler = BINARY[name]
    a, b = _inputs(fmt, sampler, seed=1), _inputs(fmt, sampler, seed=2)
    n = min(a.size, b.size)
    a, b = a[:n], b[:n]
    got = interpret(f"math.{name} {{operands}} : {fmt}", [fmt, fmt], fmt, a, b)
    want = [round_to(f(mpmath.mpf(float(p)), mpmath.mpf(float(q))), fmt)
            for p, q in zip(a.astype(np.float64), b.astype(np.float64))]
    _assert_correctly_rounded(got, want, a, fmt, name)


@pytest.mark.parametrize("fmt", ["f16", "bf16", "f32", "f64"])
def test_fma_rounds_once(fmt):
    """a*b + c with one rounding: products that cancel against c leave the low bits that a
    product rounded first would lose (the cases where fma and mul-then-add differ)."""
    dt = FORMATS[fmt][3]
    g = np.random.default_rng(11)
    a = g.standard_normal(2000).astype(dt)
    b = g.standard_normal(2000).astype(dt)
    # c close to -a*b: the exact sum is the rounding error of the product
    c = (-(a.astype(np.float64) * b.astype(np.float64)) * (1 + g.standard_normal(2000) * 2.0 ** -12)).astype(dt)
    c[::3] = g.standard_normal(c[::3].size).astype(dt)
    got = interpret("math.fma {operands} : " + fmt, [fmt] * 3, fmt, a, b, c)
    mp = lambda v: mpmath.mpf(float(v))  # noqa: E731
    want = [round_to(mp(x) * mp(y) + mp(z), fmt) for x, y, z in zip(a, b, c)]
    got64 = got.astype(np.float64)
    assert np.array_equal(got64, np.array(want)), fmt
    # and it is not the unfused value everywhere (the inputs do reach the difference)
    unfused = (a.astype(np.float64) * b.astype(np.float64)).astype(dt).astype(np.float64) + c.astype(np.float64)
    assert np.any(unfused.astype(dt).astype(np.float64) != got64)


def test_special_values():
    inf, nan = np.inf, np.nan
    x = np.array([0.0, -0.0, inf, -inf, nan, -1.0], np.float32)
    cases = {  # op -> IEEE 754 / C99 Annex F results
        "exp": [1, 1, inf, 0, nan, pymath.exp(-1)],
        "log": [-inf, -inf, inf, nan, nan, nan],
        "sqrt": [0.0, -0.0, inf, nan, nan, nan],
        "rsqrt": [inf, -inf, 0, nan, nan, nan],
        "tanh": [0.0, -0.0, 1, -1, nan, pymath.tanh(-1)],
        "erf": [0.0, -0.0, 1, -1, nan, pymath.erf(-1)],
        "absf": [0, 0, inf, inf, nan, 1],
        "floor": [0.0, -0.0, inf, -inf, nan, -1],
        "round": [0.0, -0.0, inf, -inf, nan, -1],
    }
    for name, want in cases.items():
        got = interpret(f"math.{name} {{operands}} : f32", ["f32"], "f32", x).astype(np.float64)
        want = np.array(want, np.float32).astype(np.float64)
        same = (got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want))
        assert same.all(), (name, got, want)


def test_scalars_stay_scalars_and_lanes_mix():
    """A scalar operand gives a scalar of the exact type; a scalar with a lane vector broadcasts."""
    r = interpret("math.exp {operands} : f16", ["f16"], "f16", np.float16(1.0))
    assert r.shape == () and r.dtype == np.float16 and float(r) == float(np.float16(pymath.e))
    lanes = np.arange(4, dtype=np.float32)
    r = interpret("math.fma {operands} : f32", ["f32"] * 3, "f32", lanes, np.float32(2), np.float32(1))
    assert np.array_equal(r, lanes * 2 + 1)


def test_maxnumf_minnumf_take_the_number():
    a = np.array([1.0, np.nan, -0.0, np.nan, 3.0], np.float32)
    b = np.array([np.nan, 2.0, 0.0, np.nan, -4.0], np.float32)
    mx = interpret("arith.maxnumf {operands} : f32", ["f32", "f32"], "f32", a, b)
    mn = interpret("arith.minnumf {operands} : f32", ["f32", "f32"], "f32", a, b)
    np.testing.assert_array_equal(mx[[0, 1, 4]], [1, 2, 3])
    np.testing.assert_array_equal(mn[[0, 1, 4]], [1, 2, -4])
    assert np.isnan(mx[3]) and np.isnan(mn[3])


@pytest.mark.parametrize("fmt", ["f16", "bf16", "f32"])
def test_maximumf_minimumf_order_signed_zeros(fmt):
    """MLIR arith.maximumf/minimumf: IEEE 754-2019 maximum/minimum, NaN if either operand is,
    -0.0 less than +0.0 in either operand order (numpy's maximum/minimum return their first
    argument for +0 and -0)."""
    dt = FORMATS[fmt][3]
    a = np.array([0.0, -0.0, -0.0, 0.0, np.nan, 1.0], dt)
    b = np.array([-0.0, 0.0, -0.0, 0.0, 1.0, 2.0], dt)
    mx = interpret(f"arith.maximumf {{operands}} : {fmt}", [fmt, fmt], fmt, a, b)
    mn = interpret(f"arith.minimumf {{operands}} : {fmt}", [fmt, fmt], fmt, a, b)
    assert [bool(np.signbit(x)) for x in mx[:4]] == [False, False, True, False]
    assert [bool(np.signbit(x)) for x in mn[:4]] == [True, True, True, False]
    assert np.isnan(mx[4]) and np.isnan(mn[4]) and mx[5] == 2 and mn[5] == 1


@pytest.mark.parametrize("name, ref", [
    ("absi", lambda v, w: abs(v) if v != -(1 << (w - 1)) else v),
    ("ctlz", lambda v, w: w - (v % (1 << w)).bit_length()),
    ("cttz", lambda v, w: w if v % (1 << w) == 0 else ((v % (1 << w)) & -(v % (1 << w))).bit_length() - 1),
    ("ctpop", lambda v, w: bin(v % (1 << w)).count("1")),
])
@pytest.mark.parametrize("width", [8, 32])
def test_integer_ops(name, ref, width):
    g = np.random.default_rng(3)
    lo, hi = -(1 << (width - 1)), 1 << (width - 1)
    x = np.concatenate([[0, -1, lo, hi - 1], g.integers(lo, hi, 60)]).astype(np.int64)
    got = interpret(f"math.{name} {{operands}} : i{width}", [f"i{width}"], f"i{width}", x)
    want = [((ref(int(v), width) + (1 << (width - 1))) % (1 << width)) - (1 << (width - 1)) for v in x]
    np.testing.assert_array_equal(got, want)


def test_per_element_op_function_uses_math():
    """A coop.per_element_op function body (its operands are arrays of all elements): GELU with
    tanh, exactly as the scalar reference rounds each step."""
    text = """
!m = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @gelu(%r: i32, %c: i32, %x: f32) -> f32 {
  %k = arith.constant 0.7978845608 : f32
  %a = arith.constant 0.044715 : f32
  %h = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %x2 = arith.mulf %x, %x : f32
  %p = math.fma %a, %x2, %one : f32
  %u = arith.mulf %x, %p : f32
  %v = arith.mulf %k, %u : f32
  %t = math.tanh %v : f32
  %s = arith.addf %t, %one : f32
  %hx = arith.mulf %h, %x : f32
  %y = arith.mulf %hx, %s : f32
  func.return %y : f32
}
func.func @k(%X: memref<256xf32>, %Y: memref<256xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %x = coop.load %X[%c0], %c16, RowMajor : memref<256xf32> -> !m
  %y = coop.per_element_op @gelu(%x) : !m -> !m
  coop.store %y, %Y[%c0], %c16, RowMajor : !m, memref<256xf32>
  func.return
}
"""
    x = (np.random.default_rng(5).standard_normal(256) * 3).astype(np.float32)
    y = np.zeros(256, np.float32)
    api.run_kernel(api.parse(text, "gelu"), "k", [x, y], (1, 1, 1))
    f = np.float32
    mp = lambda v: mpmath.mpf(float(v))  # noqa: E731
    for xi, yi in zip(x, y):
        k, a = f(0.7978845608), f(0.044715)
        p = f(round_to(mp(a) * mp(f(xi * xi)) + 1, "f32"))
        t = f(round_to(mpmath.tanh(mp(f(k * f(xi * p)))), "f32"))
        assert yi == f(f(f(0.5) * xi) * f(t + f(1))), xi
