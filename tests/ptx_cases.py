"""Kernel cases for the PTX backend: coop IR text, inputs, and exact expected outputs.

Used by tests/test_ptx_ptxas.py (every case through ptxas), tests/gpu/test_gpu_ptx.py (every
case on a GPU: the reference there is the coop interpreter, `interpreter_outputs`, checked
against this model by `check_model` first) and tests/test_ptx_cases_interpreter.py.
`Case.expected` comes from an exact numpy model of the coop
semantics (coop.py docstrings): loads/stores gather and scatter `buf[offset + r*stride + c]`
(RowMajor) or `buf[offset + c*stride + r]` (ColumnMajor) in a flat buffer; mul_add is computed
in int64 / float64 and rounded once (data are small integers or dyadic, so every partial sum is
exact in the accumulator type and the order of accumulation does not matter); integers wrap
unless SaturatingAccumulation clamps. Each case is a one-warp kernel (workgroup 32) or, for the
GEMM examples, the example file itself.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import ml_dtypes
import numpy as np

ROOT = Path(__file__).resolve().parents[1]

NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "si8": np.int8,
      "ui8": np.uint8, "i8": np.int8, "si32": np.int32, "ui32": np.uint32, "i32": np.int32,
      "si16": np.int16}


@dataclass
class Case:
    """One kernel launch: `buffers` in parameter order; `expected` maps buffer index -> array."""

    name: str
    mlir: str
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    buffers: list[np.ndarray]
    expected: dict[int, np.ndarray] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# numpy model of the coop ops used here
# ---------------------------------------------------------------------------------------------


def gather(buf: np.ndarray, off: int, stride: int, layout: str, rows: int, cols: int) -> np.ndarray:
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    idx = off + (r * stride + c if layout == "RowMajor" else c * stride + r)
    return buf[idx]


def scatter(buf: np.ndarray, m: np.ndarray, off: int, stride: int, layout: str) -> None:
    rows, cols = m.shape
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    idx = off + (r * stride + c if layout == "RowMajor" else c * stride + r)
    buf[idx] = m


def wrap(x: np.ndarray, t: str) -> np.ndarray:
    return x.astype(np.int64).astype(NP[t])  # two's-complement wrap


def mul_add(a, b, c, rtype: str, saturate: bool = False) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        p = a.astype(np.int64) @ b.astype(np.int64) + c.astype(np.int64)
        if saturate:
            info = np.iinfo(NP[rtype])
            p = np.clip(p, info.min, info.max)
        return wrap(p, rtype)
    p = a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)
    return p.astype(NP[rtype])


# ---------------------------------------------------------------------------------------------
# Case generators
# ---------------------------------------------------------------------------------------------


def _ints(rng: np.random.Generator, t: str, shape, lo=None, hi=None) -> np.ndarray:
    if t in ("f16", "bf16", "f32"):
        return rng.integers(-3 if lo is None else lo, 4 if hi is None else hi, shape).astype(NP[t])
    info = np.iinfo(NP[t])
    lo = info.min if lo is None else lo
    hi = info.max + 1 if hi is None else hi
    return rng.integers(lo, hi, shape, dtype=np.int64).astype(NP[t])


def _fit(rows: int, cols: int, layout: str, rnd: random.Random) -> tuple[int, int, int]:
    """(offset, stride, buffer length) for a matrix stored with some padding."""
    minor = cols if layout == "RowMajor" else rows
    major = rows if layout == "RowMajor" else cols
    stride = minor + rnd.choice([0, 0, 1, 3, 8])
    off = rnd.choice([0, 1, 5, 16, 33])
    return off, stride, off + (major - 1) * stride + minor + rnd.choice([0, 7])


def _kernel(name: str, args: list[tuple[str, int, str]], body: list[str], types: dict[str, str]) -> str:
    """A one-warp kernel; `args` = (name, length, element type); `types` = alias -> matrix type."""
    lines = [f"!{k} = {v}" for k, v in types.items()]
    params = ", ".join(f"%{n}: memref<{ln}x{t}>" for n, ln, t in args)
    lines.append(f"func.func @{name}({params}) attributes {{coop.workgroup_size = array<i32: 32, 1, 1>}} {{")
    lines += ["  " + s for s in body]
    lines += ["  func.return", "}"]
    return "\n".join(lines) + "\n"


def _mat(rows, cols, t, use) -> str:
    return f"!coop.matrix<{rows}x{cols}x{t}, Subgroup, {use}>"


def _consts(pairs: dict[str, int]) -> list[str]:
    return [f"%{k} = arith.constant {v} : index" for k, v in pairs.items()]


MMA_TYPES = [  # (A, B, C=Result, flags, k)
    ("f16", "f16", "f32", "", 16),
    ("f16", "f16", "f16", "", 16),
    ("bf16", "bf16", "f32", "", 16),
    ("si8", "si8", "si32", "", 32),
    ("ui8", "ui8", "ui32", "", 32),
    ("si8", "ui8", "si32", "", 32),
    ("si8", "si8", "si32", " <SaturatingAccumulation>", 32),
]


def mma_case(idx: int, rnd: random.Random, rng: np.random.Generator, types=None,
             ksteps: int | None = None) -> Case:
    ta, tb, tc, flags, k = types or rnd.choice(MMA_TYPES)
    m = rnd.choice([16, 32])
    n = rnd.choice([8, 16, 32])
    kk = k * (ksteps or rnd.choice([1, 2]))
    lays = [rnd.choice(["RowMajor", "ColumnMajor"]) for _ in range(4)]
    fits = [_fit(r, c, lay, rnd) for (r, c), lay in zip([(m, kk), (kk, n), (m, n), (m, n)], lays)]
    name = f"mma{idx}_{ta}_{tb}_{tc}_{m}x{n}x{kk}"
    sat = bool(flags)
    A = _ints(rng, ta, fits[0][2])
    B = _ints(rng, tb, fits[1][2])
    if tc == "f16":  # keep every partial sum an exact f16 integer
        A, B = _ints(rng, ta, fits[0][2], -2, 3), _ints(rng, tb, fits[1][2], -2, 3)
    if sat:
        C = _ints(rng, tc, fits[2][2], -2**31, 2**31)
        C[::3] = np.int32(2**31 - 5)
        C[1::3] = np.int32(-2**31 + 5)
    else:
        C = _ints(rng, tc, fits[2][2], -50, 50)
    D = np.zeros(fits[3][2], NP[tc])
    a = gather(A, fits[0][0], fits[0][1], lays[0], m, kk)
    b = gather(B, fits[1][0], fits[1][1], lays[1], kk, n)
    c = gather(C, fits[2][0], fits[2][1], lays[2], m, n)
    d = mul_add(a, b, c, tc, sat)
    expect = D.copy()
    scatter(expect, d, fits[3][0], fits[3][1], lays[3])
    consts = {f"o{i}": f[0] for i, f in enumerate(fits)} | {f"s{i}": f[1] for i, f in enumerate(fits)}
    body = _consts(consts) + [
        f"%a = coop.load %A[%o0], %s0, {lays[0]} : memref<{fits[0][2]}x{ta}> -> !a",
        f"%b = coop.load %B[%o1], %s1, {lays[1]} : memref<{fits[1][2]}x{tb}> -> !b",
        f"%c = coop.load %C[%o2], %s2, {lays[2]} : memref<{fits[2][2]}x{tc}> -> !c",
        f"%d = coop.mul_add %a, %b, %c{flags} : !a, !b, !c -> !c",
        f"coop.store %d, %D[%o3], %s3, {lays[3]} : !c, memref<{fits[3][2]}x{tc}>",
    ]
    mlir = _kernel(name, [("A", fits[0][2], ta), ("B", fits[1][2], tb), ("C", fits[2][2], tc),
                          ("D", fits[3][2], tc)], body,
                   {"a": _mat(m, kk, ta, "MatrixA"), "b": _mat(kk, n, tb, "MatrixB"),
                    "c": _mat(m, n, tc, "MatrixAcc")})
    return Case(name, mlir, name, (1, 1, 1), (32, 1, 1), [A, B, C, D], {3: expect})


ELEMENTWISE = {  # op -> (types, numpy function, unary?)
    "fadd": (["f16", "bf16", "f32"], lambda x, y: x + y, False),
    "fsub": (["f16", "bf16", "f32"], lambda x, y: x - y, False),
    "fmul": (["f16", "bf16", "f32"], lambda x, y: x * y, False),
    "fdiv": (["f16", "bf16", "f32"], lambda x, y: x / y, False),
    "fnegate": (["f16", "bf16", "f32"], lambda x: -x, True),
    "iadd": (["si8", "si32", "ui8"], lambda x, y: x + y, False),
    "isub": (["si8", "si32", "ui32"], lambda x, y: x - y, False),
    "imul": (["si8", "si32", "ui8"], lambda x, y: x * y, False),
    "sdiv": (["si8", "si32"], None, False),
    "udiv": (["ui8", "ui32"], lambda x, y: x // y, False),
    "snegate": (["si8", "si32"], lambda x: -x, True),
    "matrix_times_scalar": (["f16", "bf16", "f32"], None, True),
}


def _float_data(rng, t, n):
    """Dyadic values with a few mantissa bits, so results exercise rounding but stay finite."""
    v = rng.integers(-64, 64, n) / rng.choice([1, 2, 4, 8, 16], n)
    v[v == 0] = 0.75
    return v.astype(NP[t])


def elementwise_case(idx: int, rnd: random.Random, rng: np.random.Generator,
                     which: tuple[str, str] | None = None) -> Case:
    """One element-wise op on a random fragment; `which` = (op, element type) or random."""
    opname = which[0] if which else rnd.choice(sorted(ELEMENTWISE))
    ts, fn, unary = ELEMENTWISE[opname]
    t = which[1] if which else rnd.choice(ts)
    use, (m, n) = rnd.choice([("MatrixAcc", (16, 16)), ("MatrixA", (16, 32 if "8" in t else 16)),
                              ("MatrixB", (32 if "8" in t else 16, 8)), ("MatrixAcc", (32, 8))])
    if use != "MatrixAcc" and t in ("f32", "si32", "ui32"):
        use = "MatrixAcc"
    lays = [rnd.choice(["RowMajor", "ColumnMajor"]) for _ in range(3)]
    fits = [_fit(m, n, lay, rnd) for lay in lays]
    if t in ("f16", "bf16", "f32"):
        X, Y = _float_data(rng, t, fits[0][2]), _float_data(rng, t, fits[1][2])
    else:
        X, Y = _ints(rng, t, fits[0][2]), _ints(rng, t, fits[1][2])
        if opname in ("sdiv", "udiv"):
            Y[Y == 0] = 3
            if t.startswith("s"):
                X[X == np.iinfo(NP[t]).min] = 7
    x = gather(X, fits[0][0], fits[0][1], lays[0], m, n)
    y = gather(Y, fits[1][0], fits[1][1], lays[1], m, n)
    scalar = 1.5
    with np.errstate(all="ignore"):
        if opname == "sdiv":
            r = np.trunc(x.astype(np.float64) / y.astype(np.float64)).astype(np.int64)
            r = wrap(r, t)
        elif opname == "matrix_times_scalar":
            r = (x * NP[t](scalar)).astype(NP[t])
        elif t in ("f16", "bf16", "f32"):
            r = (fn(x) if unary else fn(x, y)).astype(NP[t])
        else:
            wide = fn(x.astype(np.int64)) if unary else fn(x.astype(np.int64), y.astype(np.int64))
            r = wrap(wide, t)
    out = np.zeros(fits[2][2], NP[t])
    expect = out.copy()
    scatter(expect, r, fits[2][0], fits[2][1], lays[2])
    name = f"ew{idx}_{opname}_{t}_{use}"
    consts = {f"o{i}": f[0] for i, f in enumerate(fits)} | {f"s{i}": f[1] for i, f in enumerate(fits)}
    body = _consts(consts) + [
        f"%x = coop.load %X[%o0], %s0, {lays[0]} : memref<{fits[0][2]}x{t}> -> !m",
        f"%y = coop.load %Y[%o1], %s1, {lays[1]} : memref<{fits[1][2]}x{t}> -> !m",
    ]
    if opname == "matrix_times_scalar":
        body += [f"%k = arith.constant {scalar} : {t}",
                 f"%r = coop.matrix_times_scalar %x, %k : !m, {t} -> !m"]
    elif unary:
        body.append(f"%r = coop.{opname} %x : !m")
    else:
        body.append(f"%r = coop.{opname} %x, %y : !m")
    body.append(f"coop.store %r, %R[%o2], %s2, {lays[2]} : !m, memref<{fits[2][2]}x{t}>")
    mlir = _kernel(name, [("X", fits[0][2], t), ("Y", fits[1][2], t), ("R", fits[2][2], t)],
                   body, {"m": _mat(m, n, t, use)})
    return Case(name, mlir, name, (1, 1, 1), (32, 1, 1), [X, Y, out], {2: expect})


CONVERSIONS = [  # (op, from, to)
    ("f_convert", "f32", "f16"), ("f_convert", "f16", "f32"), ("f_convert", "f32", "bf16"),
    ("f_convert", "bf16", "f32"),
    ("convert_f_to_s", "f32", "si32"), ("convert_f_to_s", "f16", "si8"),
    ("convert_f_to_u", "f32", "ui32"), ("convert_f_to_s", "bf16", "si32"),
    ("convert_s_to_f", "si32", "f32"), ("convert_s_to_f", "si8", "f16"),
    ("convert_s_to_f", "si32", "bf16"), ("convert_u_to_f", "ui8", "f32"),
    ("s_convert", "si8", "si32"), ("s_convert", "si32", "si8"), ("u_convert", "ui8", "ui32"),
    ("u_convert", "ui32", "ui8"), ("bitcast", "si32", "ui32"),
]


def convert_case(idx: int, rnd: random.Random, rng: np.random.Generator, which=None) -> Case:
    opname, s, d = which or rnd.choice(CONVERSIONS)
    m, n = rnd.choice([(16, 16), (16, 8), (32, 16)])
    lays = [rnd.choice(["RowMajor", "ColumnMajor"]) for _ in range(2)]
    fits = [_fit(m, n, lay, rnd) for lay in lays]
    if s in ("f16", "bf16", "f32"):
        X = _float_data(rng, s, fits[0][2])
        if opname == "convert_f_to_u":  # negative -> unsigned is undefined (SPIR-V)
            X = np.abs(X)
        if s == "f32":  # values that need rounding in f16/bf16
            X = (X.astype(np.float64) * (1 + rng.integers(0, 2**12, fits[0][2]) / 2**13)).astype(np.float32)
    elif opname in ("convert_s_to_f", "convert_u_to_f") and d == "bf16":
        X = _ints(rng, s, fits[0][2], -2**20, 2**20)
    else:
        X = _ints(rng, s, fits[0][2])
    x = gather(X, fits[0][0], fits[0][1], lays[0], m, n)
    if opname == "f_convert":
        r = x.astype(np.float64).astype(NP[d]) if s != "f32" else x.astype(NP[d])
    elif opname.startswith("convert_f_to"):
        r = np.trunc(x.astype(np.float64)).astype(np.int64).astype(NP[d])
    elif opname.startswith("convert_"):
        r = x.astype(np.int64).astype(np.float64).astype(NP[d])
    elif opname == "bitcast":
        r = x.view(NP[d])
    else:
        r = wrap(x.astype(np.int64), d)
    out = np.zeros(fits[1][2], NP[d])
    expect = out.copy()
    scatter(expect, r, fits[1][0], fits[1][1], lays[1])
    name = f"cv{idx}_{opname}_{s}_{d}"
    consts = {f"o{i}": f[0] for i, f in enumerate(fits)} | {f"s{i}": f[1] for i, f in enumerate(fits)}
    body = _consts(consts) + [
        f"%x = coop.load %X[%o0], %s0, {lays[0]} : memref<{fits[0][2]}x{s}> -> !s",
        f"%r = coop.{opname} %x : !s -> !d",
        f"coop.store %r, %R[%o1], %s1, {lays[1]} : !d, memref<{fits[1][2]}x{d}>",
    ]
    mlir = _kernel(name, [("X", fits[0][2], s), ("R", fits[1][2], d)], body,
                   {"s": _mat(m, n, s, "MatrixAcc"), "d": _mat(m, n, d, "MatrixAcc")})
    return Case(name, mlir, name, (1, 1, 1), (32, 1, 1), [X, out], {1: expect})


def fragment_cases(count: int = 60, seed: int = 2026) -> list[Case]:
    """`count` randomized one-warp cases: every mma type once, every conversion once, then random."""
    rnd, rng = random.Random(seed), np.random.default_rng(seed)
    cases = [mma_case(2 * i + ks, rnd, rng, t, ks) for i, t in enumerate(MMA_TYPES) for ks in (1, 2)]
    cases += [convert_case(100 + i, rnd, rng, c) for i, c in enumerate(CONVERSIONS)]
    i = 200
    while len(cases) < count:
        kind = rnd.choice(["mma", "mma", "ew", "cv"])
        cases.append({"mma": mma_case, "ew": elementwise_case, "cv": convert_case}[kind](i, rnd, rng))
        i += 1
    return cases


def elementwise_cases(seed: int = 2027) -> list[Case]:
    """Every element-wise op with every element type it takes, once each (33 one-warp cases);
    fragment use, shape, layouts, offsets and strides random."""
    rnd, rng = random.Random(seed), np.random.default_rng(seed)
    pairs = [(op, t) for op in sorted(ELEMENTWISE) for t in ELEMENTWISE[op][0]]
    return [elementwise_case(300 + i, rnd, rng, p) for i, p in enumerate(pairs)]


def example_cases(seed: int = 7) -> list[Case]:
    """The two example GEMMs with their dispatch grids and exact expected C."""
    rng = np.random.default_rng(seed)
    A = rng.integers(-3, 4, (128, 256)).astype(np.float16)
    B = rng.integers(-3, 4, (256, 128)).astype(np.float16)
    C = rng.integers(-8, 9, (128, 128)).astype(np.float32)
    f16 = Case("gemm_f16", (ROOT / "examples/gemm_f16.mlir").read_text(), "gemm_f16", (2, 2, 1),
               (128, 1, 1), [A, B, C],
               {2: (A.astype(np.float64) @ B.astype(np.float64) + C).astype(np.float32)})
    A8 = rng.integers(-128, 128, (64, 128)).astype(np.int8)
    Bt = rng.integers(-128, 128, (64, 128)).astype(np.int8)
    C8 = rng.integers(-2**31, 2**31, (64, 64), dtype=np.int64).astype(np.int32)
    want = wrap(A8.astype(np.int64) @ Bt.astype(np.int64).T + C8, "si32")
    s8 = Case("gemm_s8", (ROOT / "examples/gemm_s8.mlir").read_text(), "gemm_s8", (4, 2, 1),
              (64, 1, 1), [A8, Bt, C8], {2: want})
    return [f16, s8]


def compile_case(case: Case, target: str = "sm_90a") -> str:
    """PTX text of a case (parse, verify, convert-coop-to-ptx, emit)."""
    from xdsl.parser import Parser

    from coopdialect.context import make_context
    from coopdialect.passes.convert_coop_to_ptx import ConvertCoopToPtxPass
    from coopdialect.ptx import emit_ptx

    ctx = make_context()
    module = Parser(ctx, case.mlir, case.name).parse_module()
    module.verify()
    ConvertCoopToPtxPass(target=target).apply(ctx, module)
    module.verify()
    return emit_ptx(module)


class ModelMismatch(AssertionError):
    """The interpreter and the numpy model disagree on a case (message names the case)."""


def interpreter_outputs(case: Case) -> dict[int, np.ndarray]:
    """Run the case's IR text (the same text `compile_case` compiles) through the coop
    interpreter on copies of its buffers; returns buffer index -> whole buffer after the run,
    for the buffers the case checks (`case.expected`'s keys). Interpreter errors propagate."""
    from coopdialect import api

    module = api.parse(case.mlir, case.name)
    bufs = [b.copy() for b in case.buffers]
    api.run_kernel(module, case.kernel, bufs, case.grid)
    return {i: bufs[i] for i in sorted(case.expected)}


def check_model(case: Case, outputs: dict[int, np.ndarray]) -> None:
    """Raise ModelMismatch unless every byte of `outputs` equals the numpy model's
    (`case.expected`): bit-exact, so -0.0 vs 0.0 or NaN payloads count as differences."""
    if sorted(outputs) != sorted(case.expected):
        raise ModelMismatch(f"{case.name}: output buffers {sorted(outputs)} vs model "
                            f"{sorted(case.expected)}")
    for i, want in case.expected.items():
        got = outputs[i]
        if got.dtype != want.dtype or got.shape != want.shape:
            raise ModelMismatch(f"{case.name}: buffer {i} is {got.dtype}{got.shape}, model "
                                f"{want.dtype}{want.shape}")
        raw_g = np.ascontiguousarray(got).view(np.uint8).reshape(got.size, -1)
        raw_w = np.ascontiguousarray(want).view(np.uint8).reshape(want.size, -1)
        bad = np.nonzero((raw_g != raw_w).any(axis=1))[0]
        if bad.size:
            j = int(bad[0])
            raise ModelMismatch(f"{case.name}: interpreter != numpy model in buffer {i} at "
                                f"{bad.size} of {got.size} elements; first at flat index {j}: "
                                f"interpreter {got.reshape(-1)[j]!r}, model {want.reshape(-1)[j]!r}")


def wgmma_case(idx: int, et: str, n: int, k: int, lay_a: str, lay_b: str, seed: int = 11, *,
               m: int = 64, k_step: int | None = None, invocations: int = 128,
               types: tuple[str, str, str] | None = None, flags: str = "") -> Case:
    """One workgroup of `invocations` (whole warpgroups): D[m,n] = A[m,k] @ B[k,n] + C with
    workgroup-scope matrices, a K loop of m x n x k_step products (-> k_step/16 (f16/bf16) or
    k_step/32 (8-bit) wgmma.mma_async per 64-row block and N chunk). `et` f16 or bf16 with an
    f32 accumulator, or `types` = (A, B, C) 8-bit x 8-bit -> 32-bit integers (signedness by
    type, e.g. ("si8", "ui8", "si32"), or by `flags`, the Cooperative Matrix Operands with their
    leading space: " <SaturatingAccumulation>" clamps the addition of C, which the model
    does once: saturating cases take one K step, k = k_step).

    D is its own buffer, not C updated in place: the interpreter runs each subgroup's copy of
    a Workgroup matrix one after the other, so an in-place C would be read after another
    subgroup stored it (C + 4*A@B); which invocation loads/stores which elements is
    implementation-dependent (KHR), so in-place use without a barrier is not portable anyway."""
    rng = np.random.default_rng(seed + idx)
    ta, tb, tc = types or (et, et, "f32")
    integer = tc != "f32"
    k_step = k_step or (32 if integer else 16)
    sat = "SaturatingAccumulation" in flags
    if integer:
        A, B = _ints(rng, ta, m * k), _ints(rng, tb, k * n)
        C = _ints(rng, tc, m * n)
        if sat:
            C[::3] = NP[tc](2**31 - 5)
            C[1::3] = NP[tc](-2**31 + 5)
    else:
        A = rng.integers(-3, 4, m * k).astype(NP[et])
        B = rng.integers(-3, 4, k * n).astype(NP[et])
        C = rng.integers(-8, 9, m * n).astype(np.float32)
    a = gather(A, 0, k if lay_a == "RowMajor" else m, lay_a, m, k)
    b = gather(B, 0, n if lay_b == "RowMajor" else k, lay_b, k, n)
    want = mul_add(a, b, C.reshape(m, n), tc, sat).reshape(-1)
    kinds = et if not integer else f"{ta}_{tb}_{tc}{'_sat' if sat else ''}"
    name = f"wgmma{idx}_{kinds}_{m}x{n}x{k}_{lay_a[0]}{lay_b[0]}"
    sa = k if lay_a == "RowMajor" else m
    sb = n if lay_b == "RowMajor" else k
    # A's K step moves k_step columns (RowMajor) or k_step rows of the stored transpose.
    da = 1 if lay_a == "RowMajor" else m
    db = n if lay_b == "RowMajor" else 1
    body = _consts({"c0": 0, "step": k_step, "K": k, "sa": sa, "sb": sb, "sc": n, "da": da,
                    "db": db}) + [
        f"%init = coop.load %C[%c0], %sc, RowMajor : memref<{m * n}x{tc}> -> !c",
        "%acc = scf.for %kk = %c0 to %K step %step iter_args(%d = %init) -> (!c) {",
        "  %oa = arith.muli %kk, %da : index",
        "  %ob = arith.muli %kk, %db : index",
        f"  %a = coop.load %A[%oa], %sa, {lay_a} : memref<{m * k}x{ta}> -> !a",
        f"  %b = coop.load %B[%ob], %sb, {lay_b} : memref<{k * n}x{tb}> -> !b",
        f"  %e = coop.mul_add %a, %b, %d{flags} : !a, !b, !c -> !c",
        "  scf.yield %e : !c",
        "}",
        f"coop.store %acc, %D[%c0], %sc, RowMajor : !c, memref<{m * n}x{tc}>",
    ]
    mlir = _kernel(name, [("A", m * k, ta), ("B", k * n, tb), ("C", m * n, tc),
                          ("D", m * n, tc)], body,
                   {"a": f"!coop.matrix<{m}x{k_step}x{ta}, Workgroup, MatrixA>",
                    "b": f"!coop.matrix<{k_step}x{n}x{tb}, Workgroup, MatrixB>",
                    "c": f"!coop.matrix<{m}x{n}x{tc}, Workgroup, MatrixAcc>"})
    mlir = mlir.replace("array<i32: 32, 1, 1>", f"array<i32: {invocations}, 1, 1>")
    return Case(name, mlir, name, (1, 1, 1), (invocations, 1, 1), [A, B, C, np.zeros_like(C)],
                {3: want})


def wgmma_cases() -> list[Case]:
    """Dense wgmma cases: f16 and bf16 at several N, every A/B layout (0-4); 8-bit integers
    with every signedness mix, wrapping and saturating (5-8); more than one 64-row block per
    warpgroup, two warpgroups, N split into chunks (m64n256 + m64n8; m64n32 + m64n8 for
    integers), K steps of several wgmma (5-10)."""
    s8, u8 = ("si8", "si8", "si32"), ("ui8", "ui8", "ui32")
    return [wgmma_case(0, "f16", 64, 64, "RowMajor", "RowMajor"),
            wgmma_case(1, "f16", 8, 32, "RowMajor", "ColumnMajor"),
            wgmma_case(2, "bf16", 128, 48, "ColumnMajor", "RowMajor"),
            wgmma_case(3, "bf16", 256, 16, "ColumnMajor", "ColumnMajor"),
            wgmma_case(4, "f16", 24, 32, "RowMajor", "ColumnMajor"),
            wgmma_case(5, "", 32, 128, "RowMajor", "ColumnMajor", types=s8, k_step=64),
            wgmma_case(6, "", 64, 64, "ColumnMajor", "RowMajor", types=u8, m=128),
            wgmma_case(7, "", 48, 96, "RowMajor", "RowMajor", types=("si8", "ui8", "si32"),
                       m=128, invocations=256),
            wgmma_case(8, "", 40, 64, "ColumnMajor", "ColumnMajor", types=s8, k_step=64,
                       flags=" <SaturatingAccumulation>"),
            wgmma_case(9, "f16", 264, 32, "RowMajor", "ColumnMajor"),
            wgmma_case(10, "bf16", 64, 96, "ColumnMajor", "RowMajor", m=256, k_step=48,
                       invocations=256)]
