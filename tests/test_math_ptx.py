"""The `math` dialect through convert-coop-to-ptx: every lowered (op, type) assembles with
`ptxas -arch=sm_90a` without a word; the emitted PTX, executed by tests/ptx_sim.py, stays within
the documented bound (`coopdialect.math_bounds.PTX`) of the exact value - with the special-function
instructions modelled at their correctly rounded value and also pushed to either end of the error
the PTX ISA allows them; exact ops equal the interpreter bit for bit; what has no lowering is one
located line."""

from __future__ import annotations

import math as pymath
import subprocess
import zlib
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ptx_sim
from coopdialect import api
from coopdialect.math_bounds import PTX, ptx_bound, ulp
from cli import run_coop_opt
from validators import ptxas
import parsed

ROOT = Path(__file__).resolve().parents[1]
DT = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
N = 256  # elements per case: 4 workgroups of 64 threads

UNARY = ["math.exp", "math.exp2", "math.log", "math.log2", "math.sqrt", "math.rsqrt", "math.tanh",
         "math.erf", "math.absf", "math.floor", "math.ceil", "math.trunc", "math.roundeven"]
BINARY = ["arith.maxnumf", "arith.minnumf"]
F64_OPS = ["math.sqrt", "math.rsqrt", "math.absf", "math.floor", "math.ceil", "math.trunc",
           "math.roundeven", "math.fma", *BINARY]


def kernel(op: str, t: str, arity: int, n: int = N, flags: str = "") -> str:
    """Thread i of the grid: Y[i] = op(X0[i], ...) (memref.load / memref.store); `flags`: the
    op's fastmath flags (`afn`), if any."""
    m = f"memref<{n}x{t}>"
    ins = ", ".join(f"%X{k}: {m}" for k in range(arity))
    loads = "\n".join(f"  %x{k} = memref.load %X{k}[%i] : {m}" for k in range(arity))
    operands = ", ".join(f"%x{k}" for k in range(arity))
    return f"""func.func @k({ins}, %Y: {m}) attributes {{coop.workgroup_size = array<i32: 64, 1, 1>}} {{
  %c64 = arith.constant 64 : index
  %b = gpu.block_id x
  %t = gpu.thread_id x
  %o = arith.muli %b, %c64 : index
  %i = arith.addi %o, %t : index
{loads}
  %r = {op} {operands}{f" fastmath<{flags}>" if flags else ""} : {t}
  memref.store %r, %Y[%i] : {m}
  func.return
}}
"""


def lower(text: str, name: str):
    from coopdialect.context import make_context
    from coopdialect.passes.convert_coop_to_ptx import ConvertCoopToPtxPass

    module = parsed.parse(text, name)
    ConvertCoopToPtxPass().apply(make_context(), module)
    return module


def lowered_cases() -> list[tuple[str, str, int]]:
    cases = [(op, t, 1) for op in UNARY for t in ("f16", "bf16", "f32")]
    cases += [(op, t, 2) for op in BINARY for t in ("f16", "bf16", "f32")]
    cases += [("math.fma", t, 3) for t in ("f16", "bf16", "f32")]
    cases += [(op, "f64", 3 if op == "math.fma" else 2 if op in BINARY else 1) for op in F64_OPS]
    return cases


def test_every_lowering_assembles(tmp_path: Path) -> None:
    """One module per case, all through ptxas (no output at all means clean)."""
    from coopdialect.ptx.printer import emit_ptx

    paths = []
    for op, t, arity in lowered_cases():
        p = tmp_path / f"{op.replace('.', '_')}_{t}.ptx"
        p.write_text(emit_ptx(lower(kernel(op, t, arity), p.name)))
        paths.append(p)
    bad = []
    for p in paths:
        r = subprocess.run([ptxas(), "-arch=sm_90a", str(p), "-o", str(tmp_path / "out.cubin")],
                           capture_output=True, text=True)
        if r.returncode != 0 or r.stdout or r.stderr:
            bad.append(f"{p.name}: {r.stdout}{r.stderr}")
    assert not bad, "\n".join(bad)
    assert len(paths) == len(lowered_cases()) >= 50


# -- numbers: the simulated PTX against the exact value --------------------------------------------

def _inputs(op: str, t: str, rng: np.random.Generator) -> list[np.ndarray]:
    """N operands per operand of `op`, inside the range where type t's results are finite and
    normal, with the edges of each lowering's pieces."""
    big = {"f16": 11.0, "bf16": 88.0, "f32": 88.0, "f64": 700.0}[t]
    u = lambda lo, hi, k: rng.uniform(lo, hi, k)  # noqa: E731
    if op == "math.exp":
        x = np.concatenate([u(-big, big, N - 8), [0.0, 1e-6, -1e-6, big, -big, 1.0, -1.0, 0.5]])
    elif op == "math.exp2":
        x = np.concatenate([u(-big * 1.4, big * 1.4, N - 4), [0.0, 1.0, -1.0, 0.5]])
    elif op in ("math.log", "math.log2", "math.sqrt", "math.rsqrt"):
        span = {"f16": 9.0, "bf16": 80.0, "f32": 80.0, "f64": 600.0}[t]
        x = np.concatenate([np.exp(u(-span, span, N // 2)), u(0.5, 2.0, N // 4),
                            1 + u(-1e-2, 1e-2, N // 4)])
    elif op == "math.tanh":
        x = np.concatenate([rng.standard_normal(N // 2) * 3, u(-0.6, 0.6, N // 4),
                            np.exp(u(-12, 3, N // 4)) * rng.choice([-1, 1], N // 4)])
    elif op == "math.erf":
        x = np.concatenate([rng.standard_normal(N // 2) * 2, u(-1.1, 1.1, N // 4),
                            np.exp(u(-12, 1.6, N // 4)) * rng.choice([-1, 1], N // 4)])
    elif op in BINARY:
        x = rng.standard_normal(N) * 10
        x[::7] = np.nan
        return [x, np.where(np.arange(N) % 5 == 0, np.nan, rng.standard_normal(N))]
    elif op == "math.fma":
        return [rng.standard_normal(N), rng.standard_normal(N), rng.standard_normal(N)]
    else:  # absf and the roundings: halves included
        x = np.round(rng.standard_normal(N) * 40) / 2 + np.where(np.arange(N) % 3 == 0, 0.25, 0)
    return [x[:N]]


def _exact(op: str, args: list[np.ndarray]) -> np.ndarray:
    x = args[0]
    with np.errstate(all="ignore"):
        return {
            "math.exp": np.exp, "math.exp2": np.exp2, "math.log": np.log, "math.log2": np.log2,
            "math.sqrt": np.sqrt, "math.rsqrt": lambda v: 1 / np.sqrt(v), "math.tanh": np.tanh,
            "math.erf": np.vectorize(pymath.erf), "math.absf": np.abs, "math.floor": np.floor,
            "math.ceil": np.ceil, "math.trunc": np.trunc, "math.roundeven": np.rint,
            "arith.maxnumf": lambda v: np.fmax(v, args[1]), "arith.minnumf": lambda v: np.fmin(v, args[1]),
            "math.fma": lambda v: v * args[1] + args[2],
        }[op](x)


def _simulate(op: str, t: str, args: list[np.ndarray], flags: str = "") -> np.ndarray:
    module = lower(kernel(op, t, len(args), flags=flags), f"{op}_{t}")
    (k,) = list(module.ops)
    bufs = [a.copy() for a in args] + [np.zeros(N, DT[t])]
    ptx_sim.Kernel(k).run(bufs, (N // 64, 1, 1), (64, 1, 1))
    return bufs[-1]


def _check(op: str, t: str, args: list[np.ndarray], got: np.ndarray, label: str,
           afn: bool = False) -> None:
    # the exact value of the operands as the type holds them (fma in exact fractions)
    xs = [a.astype(np.float64) for a in args]
    if op == "math.fma":
        from fractions import Fraction
        exact = np.array([float(Fraction(a) * Fraction(b) + Fraction(c)) for a, b, c in zip(*xs)])
    else:
        exact = _exact(op, xs)
    got64 = got.astype(np.float64)
    bound = ptx_bound(op, t, afn)
    tol = bound.tolerance(xs, exact, t)
    both_nan = np.isnan(got64) & np.isnan(exact)
    with np.errstate(invalid="ignore"):  # inf - inf: equal values are within any bound
        bad = ~((np.abs(got64 - exact) <= tol) | both_nan | (got64 == exact))
    assert not bad.any(), (f"{op} : {t} ({label}): x = {xs[0][bad][:3]} gives {got64[bad][:3]}, exact "
                           f"{exact[bad][:3]}, bound '{bound.text}' = {tol[bad][:3]}")


def _cases():
    return [(op, t) for op in [*UNARY, *BINARY, "math.fma"] for t in ("f16", "bf16", "f32")]


@pytest.mark.parametrize("op, t", _cases())
def test_simulated_ptx_is_within_the_bound(op: str, t: str) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{op} {t}".encode()))
    args = [a.astype(DT[t]) for a in _inputs(op, t, rng)]
    got = _simulate(op, t, args)
    _check(op, t, args, got, "special functions correctly rounded")
    if PTX[(op, t)].text in ("exact", "correctly rounded (0.5 ulp)"):  # bit for bit the interpreter
        want = [a.copy() for a in args] + [np.zeros(N, DT[t])]
        api.run_kernel(parsed.parse(kernel(op, t, len(args)), "k"), "k", want, (N // 64, 1, 1))
        assert np.array_equal(got.view(np.uint8), want[-1].view(np.uint8))


def _toward(exact: np.ndarray, target: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """The f32 value nearest `target` that is within `bound` of `exact` (toward exact)."""
    f = target.astype(np.float32)
    over = np.abs(f.astype(np.float64) - exact) > bound
    return np.where(over, np.nextafter(f, exact.astype(np.float32)), f).astype(np.float64)


def _worst(sign: int) -> dict:
    """Special-function models at the far end of the PTX ISA's bounds, on the `sign` side."""
    def ex2(x):
        cr = np.float32(np.exp2(x))
        return float(cr) + sign * 2 * float(ulp(np.array(float(cr)), "f32"))

    def lg2(x):
        e = np.log2(x)
        b = 2.0 ** -22 if 0.5 < x < 2 else 2.0 ** -22 * abs(e)
        return float(_toward(np.array(e), np.array(e + sign * b), np.array(b)))

    def rel(f, r):
        def g(x):
            e = f(x)
            return float(_toward(np.array(e), np.array(e * (1 + sign * r)), np.array(abs(e) * r)))
        return g
    return {"ex2": ex2, "lg2": lg2, "rsqrt": rel(lambda x: 1 / np.sqrt(x), 2.0 ** -22.9),
            "tanh": rel(np.tanh, 2.0 ** -11)}


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("op, t", [(op, t) for op in ("math.exp", "math.exp2", "math.log",
                                                      "math.log2", "math.rsqrt", "math.tanh", "math.erf")
                                   for t in ("f16", "f32")])
def test_bound_holds_with_the_worst_special_functions(op, t, sign, monkeypatch) -> None:
    """The documented bound covers the instructions' own error: ex2, lg2, rsqrt and tanh return
    results at the edge of what the PTX ISA allows them."""
    for name, f in _worst(sign).items():
        monkeypatch.setitem(ptx_sim.APPROX, name, f)
    rng = np.random.default_rng(zlib.crc32(f"{op} {t} {sign}".encode()))
    args = [a.astype(DT[t]) for a in _inputs(op, t, rng)]
    _check(op, t, args, _simulate(op, t, args), f"special functions at {'+' if sign > 0 else '-'} bound")


@pytest.mark.parametrize("sign", [0, 1, -1])
def test_erf_afn_f32_within_its_bound(sign: int, monkeypatch) -> None:
    """`math.erf fastmath<afn> : f32` takes the fast erf (no division, one ex2.approx.ftz):
    within PTX_AFN's absolute bound with ex2 correctly rounded and at either end of its 2 ulp,
    on the erf inputs, a grid across the split and the clamp, and the specials."""
    if sign:
        monkeypatch.setitem(ptx_sim.APPROX, "ex2", _worst(sign)["ex2"])
    rng = np.random.default_rng(17 + sign)
    x = np.concatenate([_inputs("math.erf", "f32", rng)[0][: N // 2], np.linspace(-4.2, 4.2, N // 2 - 12),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -3e38, 1 / 16, 4.0, -4.0, 3.9, 1e-3]])
    args = [x.astype(np.float32)]
    got = _simulate("math.erf", "f32", args, flags="afn")
    _check("math.erf", "f32", args, got, f"afn, ex2 at {sign:+d} bound", afn=True)
    ptx = emit_ptx_text(kernel("math.erf", "f32", 1, flags="afn"))
    assert "div." not in ptx and ptx.count("ex2.approx.ftz.f32") == 1


@pytest.mark.parametrize("sign", [0, 1, -1])
def test_exp2_afn_f32_within_its_bound(sign: int, monkeypatch) -> None:
    """`math.exp2 fastmath<afn> : f32` is one `ex2.approx.ftz.f32`: within PTX_AFN's bound (the
    2 ulp of ex2 above 2^-126, absolute 2^-126 where the result is flushed) with ex2 correctly
    rounded and at either end of its 2 ulp, across the normal range, the subnormal results it
    flushes (x in (-150, -126)) and the specials; without the flag the subnormals are kept."""
    if sign:
        monkeypatch.setitem(ptx_sim.APPROX, "ex2", _worst(sign)["ex2"])
    # the worst-case models of ex2 move a result by 2 ulp of its own size: normal results only
    lo = -160.0 if sign == 0 else -125.0
    x = np.concatenate([np.linspace(lo, 127.0, N - 8),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, -126.0, -126.5, -149.0]])
    args = [x.astype(np.float32)]
    got = _simulate("math.exp2", "f32", args, flags="afn")
    _check("math.exp2", "f32", args, got, f"afn, ex2 at {sign:+d} bound", afn=True)
    flushed = (x < -126.5) & (x > -149)
    assert (got[flushed] == 0).all()
    if sign == 0:
        assert (_simulate("math.exp2", "f32", args)[flushed] > 0).all()
    ptx = emit_ptx_text(kernel("math.exp2", "f32", 1, flags="afn"))
    assert ptx.count("ex2.approx.ftz.f32") == 1


def emit_ptx_text(text: str) -> str:
    from coopdialect.ptx.printer import emit_ptx
    return emit_ptx(lower(text, "k"))


def test_special_values_f32() -> None:
    """inf, NaN, zeros and overflow through the sequences (exp's |hi| >= 128 guard, tanh's and
    erf's saturation and sign)."""
    inf = np.inf
    x = np.array([0.0, -0.0, inf, -inf, np.nan, 100.0, -100.0, 89.0, -104.0, 20.0, -20.0] + [0.0] * 53,
                 np.float32)
    want = {
        "math.exp": [1, 1, inf, 0, np.nan, inf, np.exp(-100.0), inf, np.exp(-104.0), np.exp(20.0), np.exp(-20.0)],
        "math.tanh": [0.0, -0.0, 1, -1, np.nan, 1, -1, 1, -1, 1, -1],
        "math.erf": [0.0, -0.0, 1, -1, np.nan, 1, -1, 1, -1, 1, -1],
    }
    for op, w in want.items():
        got = _simulate(op, "f32", [np.resize(x, N)])[:11].astype(np.float64)
        w = np.array(w, np.float64)
        with np.errstate(invalid="ignore"):
            close = ((got == w) | (np.abs(got - w) <= 3 * ulp(w, "f32"))) & (np.signbit(got) == np.signbit(w))
        assert (close | (np.isnan(got) & np.isnan(w))).all(), (op, got, w)


@pytest.mark.parametrize("text, message", [
    ("%r = math.cbrt %x0 : f32", "'math.cbrt' op math.cbrt has no PTX lowering (convert-coop-to-ptx lowers"),
    ("%r = math.exp %x0 : f64", "'math.exp' op math.exp of f64 has no PTX lowering"),
    ("%r = math.sin %x0 : f32", "'math.sin' op math.sin has no PTX lowering"),
])
def test_unsupported_is_one_line(text: str, message: str, tmp_path: Path) -> None:
    t = text.rsplit(": ", 1)[1]
    src = kernel("OP", t, 1).replace("%r = OP %x0 : " + t, text)
    f = tmp_path / "k.mlir"
    f.write_text(src)
    r = run_coop_opt([f, "-p", "convert-coop-to-ptx", "-t", "ptx"])
    line = r.stderr.strip()
    assert r.returncode == 1 and r.stdout == "" and "\n" not in line, r.stderr
    assert line.startswith(f"{f}:8:3: error: ") and message in line, line


def test_emit_math_on_fragment_registers() -> None:
    """`emit_math` is callable on any register, as an epilogue over accumulator fragments would:
    exp of every element of a subgroup accumulator, through per_element_op's inlining."""
    text = """
!m = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @e(%r: i32, %c: i32, %x: f32) -> f32 {
  %y = math.exp %x : f32
  func.return %y : f32
}
func.func @k(%X: memref<256xf32>, %Y: memref<256xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %x = coop.load %X[%c0], %c16, RowMajor : memref<256xf32> -> !m
  %y = coop.per_element_op @e(%x) : !m -> !m
  coop.store %y, %Y[%c0], %c16, RowMajor : !m, memref<256xf32>
  func.return
}
"""
    module = lower(text, "frag")
    (k,) = [op for op in module.ops if op.sym_name.data == "k"]
    x = np.random.default_rng(3).uniform(-80, 80, 256).astype(np.float32)
    y = np.zeros(256, np.float32)
    ptx_sim.Kernel(k).run([x, y], (1, 1, 1), (32, 1, 1))
    exact = np.exp(x.astype(np.float64))
    assert (np.abs(y - exact) <= PTX[("math.exp", "f32")].tolerance([x], exact, "f32")).all()


def test_softmax_exp_example_through_the_simulator() -> None:
    """examples/softmax_exp_rows.mlir lowered to PTX and executed (reductions by shuffles, exp
    and tanh by the sequences above): within a few f32 ulps of the interpreter."""
    text = (ROOT / "examples" / "softmax_exp_rows.mlir").read_text()
    module = lower(text, "softmax_exp_rows.mlir")
    (k,) = [op for op in module.ops if op.sym_name.data == "softmax_exp_rows"]
    x = (np.random.default_rng(8).standard_normal((64, 16)) * 3).astype(np.float32)
    want = [x.copy(), np.zeros((64, 16), np.float32), np.zeros((64, 16), np.float32)]
    api.run_kernel(parsed.parse(text, "softmax_exp_rows.mlir"), "softmax_exp_rows", want, (1, 4, 1))
    got = [x.copy(), np.zeros((64, 16), np.float32), np.zeros((64, 16), np.float32)]
    ptx_sim.Kernel(k).run(got, (1, 4, 1), (32, 1, 1))
    np.testing.assert_allclose(got[1], want[1], rtol=2e-6, atol=1e-12)
    np.testing.assert_allclose(got[2], want[2], rtol=2e-6, atol=1e-6)


def test_unsupported_in_an_inlined_function_is_located_there(tmp_path: Path) -> None:
    text = """!m = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @f(%r: i32, %c: i32, %x: f32) -> f32 {
  %y = math.log1p %x : f32
  func.return %y : f32
}
func.func @k(%X: memref<256xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %x = coop.load %X[%c0], %c16, RowMajor : memref<256xf32> -> !m
  %y = coop.per_element_op @f(%x) : !m -> !m
  coop.store %y, %X[%c0], %c16, RowMajor : !m, memref<256xf32>
  func.return
}
"""
    f = tmp_path / "k.mlir"
    f.write_text(text)
    r = run_coop_opt([f, "-p", "convert-coop-to-ptx", "-t", "ptx"])
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(f"{f}:3:3: error: 'math.log1p' op math.log1p has no PTX lowering"), r.stderr


@pytest.mark.parametrize("t, flags", [("f16", ""), ("bf16", ""), ("f32", "afn")])
def test_fast_erf_is_the_modelled_sequence(t: str, flags: str) -> None:
    """The emitted fast erf, run by the simulator, equals bit for bit the instruction-by-instruction
    model that tests/test_math_sequences.py holds to the bound (every 32nd bit pattern of f16 /
    bf16 / the f32 high half, specials included): the bound proved there is the PTX's."""
    from math_models import erf_fast_model

    n = 2048
    if t == "f32":
        bits = (np.arange(n, dtype=np.uint32) * 32 << 16) | 0x1234
        x = bits.view(np.float32)
    else:
        x = (np.arange(n, dtype=np.uint16) * 32 + 7).view(DT[t])
    module = lower(kernel("math.erf", t, 1, n, flags), f"erf_{t}")
    (k,) = list(module.ops)
    out = np.zeros(n, DT[t])
    with np.errstate(all="ignore"):  # NaN operands
        ptx_sim.Kernel(k).run([x.copy(), out], (n // 64, 1, 1), (64, 1, 1))
        want = erf_fast_model(x.astype(np.float64), 0, relative=t != "f32").astype(DT[t])
    assert np.array_equal(out.view(np.uint8), want.view(np.uint8))
