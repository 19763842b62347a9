"""The math dialect across SPIR-V: kernels written with math ops, lowered to SPIR-V bytes (spirv-val),
read back and raised, interpret to the same bits as before; glslang's GLSL built-ins (OpExtInst
GLSL.std.450) are lifted and interpret to the correctly rounded value of each function; erf's
SPIR-V sequence, raised (its Exp lifted back to math.exp), stays within its bound. (What is not
lifted, one located line: tests/test_raise_spirv.py.)"""

from __future__ import annotations

import math as pymath
from pathlib import Path

import mpmath
import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from coopdialect import api
from coopdialect.math_bounds import VULKAN
from coopdialect.spirv.reader import deserialize
from validators import glslang, grammar_defines, spirv_val

ROOT = Path(__file__).resolve().parent.parent
mpmath.mp.prec = 120


def raised(data: bytes) -> tuple[ModuleOp, str]:
    module = ModuleOp([deserialize(data)])
    api.run_pipeline(module, "raise-spirv-to-coop")
    module.verify()
    (kernel,) = [op for op in module.body.block.ops if isinstance(op, func.FuncOp)
                 and "coop.workgroup_size" in op.attributes]
    return module, kernel.sym_name.data


def f32(v: float) -> float:
    return float(np.float32(v))


def test_glslang_builtins_are_lifted_and_exact() -> None:
    module, name = raised(glslang("tests/data/glsl_math.comp"))
    text = str(module)
    for op in ("math.exp", "math.exp2", "math.log", "math.log2", "math.sqrt", "math.rsqrt",
               "math.tanh", "math.absf", "math.fma", "math.floor", "math.ceil", "math.trunc",
               "math.roundeven", "math.absi", "arith.minsi", "arith.maxsi"):
        assert op in text, op
    n = 128
    rng = np.random.default_rng(9)
    a = np.exp(rng.uniform(-20, 20, n)).astype(np.float32)
    b = (rng.standard_normal(n) * 4).astype(np.float32)
    b[::9] = np.round(b[::9] * 4) / 8  # halves for roundEven(4 y)
    k = rng.integers(-6, 7, n).astype(np.int32)
    o, q = np.zeros(16 * n, np.float32), np.zeros(4 * n, np.int32)
    api.run_kernel(module, name, [a, b, o, k, q], (n // 64, 1, 1))
    mp = lambda v: mpmath.mpf(float(v))  # noqa: E731
    want = []
    for x, y in zip(a, b):
        want += [f32(mpmath.exp(mp(y))), f32(mpmath.power(2, mp(y))), f32(mpmath.log(mp(x))),
                 f32(mpmath.log(mp(x), 2)), f32(mpmath.sqrt(mp(x))), f32(1 / mpmath.sqrt(mp(x))),
                 f32(mpmath.tanh(mp(y))), abs(float(y)), f32(mp(x) * mp(y) + 1), pymath.floor(y),
                 pymath.ceil(y), float(np.trunc(y)), float(np.rint(np.float32(4) * y)),
                 float(y if y < x else x), float(y if x < y else x),  # FMin / FMax definitions
                 float(min(max(y, np.float32(-0.5)), x))]
    np.testing.assert_array_equal(o.astype(np.float64), np.array(want))
    kk = k.astype(np.int64)
    np.testing.assert_array_equal(q.reshape(n, 4), np.stack(
        [np.abs(kk), np.minimum(kk, 3), np.maximum(kk, -3), np.clip(kk, -2, 2)], axis=1))


def test_coopmat2_shader_with_fmax_combine_is_lifted() -> None:
    """glslang's coopmat2 shader (a row reduction whose CombineFunc is GLSL max(), an OpExtInst
    FMax, and a per-element op), raised and interpreted, equals a numpy model."""
    module, name = raised(glslang("tests/data/coopmat2_nv.comp", *grammar_defines()))
    a = np.random.default_rng(2).integers(-3, 4, 64 * 64).astype(np.float16)
    c = np.zeros(64 * 64, np.float32)
    api.run_kernel(module, name, [a, c], (1, 1, 1))
    A = a.reshape(64, 64).astype(np.float64)
    # workgroup 0: A rows 0..15 times B = the (1, 0)-permuted view of rows k..k+15, columns 0..15
    acc = sum(A[0:16, k:k + 16] @ A[k:k + 16, 0:16].T for k in range(0, 64, 16))
    r, col = np.arange(16)[:, None], np.arange(16)[None, :]
    want = np.repeat(acc.max(axis=1, keepdims=True), 16, axis=1) + r * 0.5 - col
    np.testing.assert_array_equal(c.reshape(64, 64)[:16, :16], want.astype(np.float32))


# -- round trip: math in per-element functions, SPIR-V bytes, read, raised ------------------------

EXACT_ONES = """
!m = !coop.matrix<16x16x{t}, Subgroup, MatrixAcc>
func.func @f(%r: i32, %c: i32, %x: {t}, %y: {t}) -> {t} {{
  %a = math.absf %x : {t}
  %e = math.exp %y : {t}
  %e2 = math.exp2 %e : {t}
  %l = math.log %a : {t}
  %l2 = math.log2 %a : {t}
  %s = math.sqrt %a : {t}
  %q = math.rsqrt %s : {t}
  %t = math.tanh %l : {t}
  %m = math.fma %t, %e2, %q : {t}
  %fl = math.floor %l2 : {t}
  %ce = math.ceil %m : {t}
  %tr = math.trunc %s : {t}
  %re = math.roundeven %l : {t}
  %mx = arith.maxnumf %fl, %ce : {t}
  %mn = arith.minnumf %tr, %re : {t}
  %u = arith.addf %mx, %mn : {t}
  %v = arith.addf %u, %m : {t}
  func.return %v : {t}
}}
func.func @k(%X: memref<512x{t}>, %Y: memref<256x{t}>) attributes {{coop.workgroup_size = array<i32: 32, 1, 1>}} {{
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %x = coop.load %X[%c0], %c16, RowMajor : memref<512x{t}> -> !m
  %y = coop.load %X[%c256], %c16, RowMajor : memref<512x{t}> -> !m
  %z = coop.per_element_op @f(%x, %y) : !m, !m -> !m
  coop.store %z, %Y[%c0], %c16, RowMajor : !m, memref<256x{t}>
  func.return
}}
"""


@pytest.mark.parametrize("t", ["f32", "f16"])
def test_write_read_raise_interprets_the_same(t: str, tmp_path: Path) -> None:
    text = EXACT_ONES.format(t=t)
    dt = np.float32 if t == "f32" else np.float16
    rng = np.random.default_rng(4)
    x = np.concatenate([np.exp(rng.uniform(-4, 4, 256)) * rng.choice([-1, 1], 256),
                        rng.uniform(-2, 2, 256)]).astype(dt)
    want = [x.copy(), np.zeros(256, dt)]
    api.run_kernel(api.parse(text, "math"), "k", want, (1, 1, 1))
    assert np.isfinite(want[1].astype(np.float64)).all()
    data = api.compile_to_spirv(api.parse(text, "math"))
    spirv_val(data, tmp_path)
    module, name = raised(data)
    got = [x.copy(), np.zeros(256, dt)]
    api.run_kernel(module, name, got, (1, 1, 1))
    np.testing.assert_array_equal(got[1].view(np.uint8), want[1].view(np.uint8))


ERF = """
!m = !coop.matrix<16x16x{t}, Subgroup, MatrixAcc>
func.func @f(%r: i32, %c: i32, %x: {t}) -> {t} {{
  %y = math.erf %x : {t}
  func.return %y : {t}
}}
func.func @k(%X: memref<{n}x{t}>, %Y: memref<{n}x{t}>) attributes {{coop.workgroup_size = array<i32: 32, 1, 1>}} {{
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %w = gpu.block_id x
  %o = arith.muli %w, %c256 : index
  %x = coop.load %X[%o], %c16, RowMajor : memref<{n}x{t}> -> !m
  %y = coop.per_element_op @f(%x) : !m -> !m
  coop.store %y, %Y[%o], %c16, RowMajor : !m, memref<{n}x{t}>
  func.return
}}
"""


@pytest.mark.parametrize("t", ["f32", "f16"])
def test_spirv_erf_sequence_is_within_its_bound(t: str, tmp_path: Path) -> None:
    """The erf sequence as written to SPIR-V, raised (OpExtInst Exp -> math.exp, exact in the
    interpreter; every other step one correct rounding): within the documented Vulkan bound, and
    the same IR through the interpreter is the correctly rounded erf."""
    n = 16 * 256
    text = ERF.format(t=t, n=n)
    dt = np.float32 if t == "f32" else np.float16
    rng = np.random.default_rng(12)
    x = np.concatenate([rng.standard_normal(n // 2) * 2, rng.uniform(-1.05, 1.05, n // 4),
                        np.exp(rng.uniform(-14, 1.5, n // 4)) * rng.choice([-1, 1], n // 4)]).astype(dt)
    data = api.compile_to_spirv(api.parse(text, "erf"))
    spirv_val(data, tmp_path)
    module, name = raised(data)
    got = np.zeros(n, dt)
    api.run_kernel(module, name, [x, got], (n // 256, 1, 1))
    exact = np.array([pymath.erf(v) for v in x.astype(np.float64)])
    bound = VULKAN[("math.erf", t)]
    tol = bound.tolerance([x.astype(np.float64)], exact, t)
    err = np.abs(got.astype(np.float64) - exact)
    assert (err <= tol).all(), (x[err > tol][:4], got[err > tol][:4], exact[err > tol][:4])
    oracle = np.zeros(n, dt)
    api.run_kernel(api.parse(text, "erf"), "k", [x, oracle], (n // 256, 1, 1))
    np.testing.assert_array_equal(oracle, exact.astype(dt))


def _softmax_gelu_model(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 models of examples/softmax_exp_rows.mlir's two outputs (64x16)."""
    x = x.astype(np.float64).reshape(64, 16)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)
    g = 0.5 * x * (1 + np.tanh(0.797884583 * (x + 0.044715 * x ** 3)))
    return y, g


def test_softmax_exp_example_and_its_round_trip(tmp_path: Path) -> None:
    """The example interprets to the float64 softmax and GELU (each step rounded to f32: within a
    few f32 ulps), and lowered to SPIR-V, read back and raised, to the same bits."""
    path = ROOT / "examples" / "softmax_exp_rows.mlir"
    x = (np.random.default_rng(8).standard_normal((64, 16)) * 3).astype(np.float32)
    want = [x.copy(), np.zeros((64, 16), np.float32), np.zeros((64, 16), np.float32)]
    api.run_kernel(api.parse_file(path), "softmax_exp_rows", want, (1, 4, 1))
    y, g = _softmax_gelu_model(x)
    np.testing.assert_allclose(want[1].reshape(64, 16), y, rtol=2e-6, atol=1e-12)
    np.testing.assert_allclose(want[2].reshape(64, 16), g, rtol=2e-6, atol=1e-6)
    data = api.compile_to_spirv(api.parse_file(path))
    spirv_val(data, tmp_path)
    module, name = raised(data)
    got = [x.reshape(-1).copy(), np.zeros(1024, np.float32), np.zeros(1024, np.float32)]
    api.run_kernel(module, name, got, (1, 4, 1))  # the raised kernel takes memref<?xf32>
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a.view(np.uint32), b.reshape(-1).view(np.uint32))
