"""Sparse MMA test kernels: one warpgroup, one `sparse_mma.mma_sp`, every variant of wgmma.mma_async.sp.

`Variant` names a type combination and the options; `kernel_ir(v)` is the kernel (IR text):

    func @sp(%A: memref<...>, %E: memref<64xGxui8 flat>, %B: memref<...>, %C: memref<64xN acc>)

loads A (compressed), the metadata, B and C with `coop.load` (RowMajor or ColumnMajor, with a
padded stride), runs the product and stores D over C. `inputs(v, rng)` builds random 2:4 data
(dyadic / integer, exact on the hardware) in those memory layouts. Used by
tests/test_sparse_ptxas.py (every variant through ptxas), tests/test_sparse_interpreter.py and
tests/gpu/test_gpu_sparse.py (GPU vs the interpreter).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import ml_dtypes
import numpy as np

IR_TYPE = {"f16": "f16", "bf16": "bf16", "tf32": "f32", "e4m3": "f8E4M3FN", "e5m2": "f8E5M2",
           "s8": "si8", "u8": "ui8"}
ACC_IR = {"f16": "f16", "f32": "f32", "s32": "i32"}
NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32,
      "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2, "s8": np.int8, "u8": np.uint8,
      "f32": np.float32, "s32": np.int32}
INSTR_K = {"f16": 32, "bf16": 32, "tf32": 16, "e4m3": 64, "e5m2": 64, "s8": 64, "u8": 64}


@dataclass(frozen=True)
class Variant:
    at: str
    bt: str
    dt: str
    n: int = 8
    steps: int = 1
    sel: int = 0
    scale_d: bool = True
    neg_a: bool = False
    neg_b: bool = False
    trans_a: bool = False
    trans_b: bool = False
    satfinite: bool = False
    rs: bool = False
    a_col: bool = False  # A values stored ColumnMajor
    b_col: bool = False  # B stored ColumnMajor
    aligned: bool = False  # Aligned 16 + 16-byte strides (vector staging)

    @property
    def name(self) -> str:
        flags = "".join(f"_{f}" for f, on in (
            ("sel1", self.sel), ("nod", not self.scale_d), ("nega", self.neg_a),
            ("negb", self.neg_b), ("ta", self.trans_a), ("tb", self.trans_b),
            ("sat", self.satfinite), ("rs", self.rs), ("acol", self.a_col), ("bcol", self.b_col),
            ("al", self.aligned)) if on)
        return f"sp_{self.dt}_{self.at}_{self.bt}_n{self.n}_k{self.k}{flags}"

    @property
    def k(self) -> int:
        return INSTR_K[self.at] * self.steps

    @property
    def group(self) -> int:
        return 2 if self.at == "tf32" else 4

    def shapes(self):
        """Logical shapes of the A value, metadata, B value, C."""
        kc = self.k // 2
        a = (kc, 64) if self.trans_a else (64, kc)
        b = (self.n, self.k) if self.trans_b else (self.k, self.n)
        return a, (64, self.k // self.group), b, (64, self.n)


def _pad(v: Variant, cols_major: int, es: int) -> int:
    """Stride (elements) of a matrix whose contiguous extent is cols_major."""
    if v.aligned:
        return cols_major + (16 // es if es < 16 else 0) * 2
    return cols_major + 3


def _mem(v: Variant, shape, col: bool, es: int):
    """(stride, storage rows, storage cols) of a logical matrix in memory."""
    r, c = shape
    major, minor = (c, r) if col else (r, c)
    stride = _pad(v, minor, es)
    return stride, major, minor


def kernel_ir(v: Variant, name: str = "sp") -> str:
    """The kernel `@NAME` of a variant (IR text)."""
    sa, se, sb, sc = v.shapes()
    es = {"f16": 2, "bf16": 2, "tf32": 4}.get(v.at, 1)
    esc = 2 if v.dt == "f16" else 4
    lay = {}
    for key, shape, col, e in (("A", sa, v.a_col, es), ("E", se, False, 1), ("B", sb, v.b_col, es),
                               ("C", sc, False, esc)):
        stride, major, _ = _mem(v, shape, col, e)
        lay[key] = (stride, major * stride + 5, "ColumnMajor" if col else "RowMajor")
    ta, tb, tc = IR_TYPE[v.at], IR_TYPE[v.bt], ACC_IR[v.dt]
    props = []
    if v.sel:
        props.append(f"sp_sel = {v.sel} : i32")
    if not v.scale_d:
        props.append("scale_d = false")
    if v.neg_a:
        props.append("imm_scale_a = -1 : i32")
    if v.neg_b:
        props.append("imm_scale_b = -1 : i32")
    if v.trans_a:
        props.append("imm_trans_a = 1 : i32")
    if v.trans_b:
        props.append("imm_trans_b = 1 : i32")
    if v.satfinite:
        props.append("satfinite")
    if v.rs:
        props.append("a_registers")
    pd = " {" + ", ".join(props) + "}" if props else ""
    ma = ", <Aligned 16>" if v.aligned else ""
    t = {"A": f"!coop.matrix<{sa[0]}x{sa[1]}x{ta}, Workgroup, MatrixA>",
         "E": f"!coop.matrix<{se[0]}x{se[1]}xui8, Workgroup, MatrixA>",
         "B": f"!coop.matrix<{sb[0]}x{sb[1]}x{tb}, Workgroup, MatrixB>",
         "C": f"!coop.matrix<{sc[0]}x{sc[1]}x{tc}, Workgroup, MatrixAcc>"}
    et = {"A": ta, "E": "ui8", "B": tb, "C": tc}
    mem = {k: f"memref<{lay[k][1]}x{et[k]}>" for k in "AEBC"}
    off = {"A": 5, "E": 5, "B": 5, "C": 5} if not v.aligned else {"A": 0, "E": 5, "B": 0, "C": 5}
    lines = [f"func.func @{name}(%A: {mem['A']}, %E: {mem['E']}, %B: {mem['B']}, %C: {mem['C']})",
             "    attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {"]
    for k in "AEBC":
        lines.append(f"  %o{k} = arith.constant {off[k]} : index")
        lines.append(f"  %s{k} = arith.constant {lay[k][0]} : index")
    for k, x in (("A", "a"), ("E", "e"), ("B", "b"), ("C", "c")):
        extra = ma if k in "AB" else ""
        lines.append(f"  %{x} = coop.load %{k}[%o{k}], %s{k}, {lay[k][2]}{extra} : {mem[k]} -> {t[k]}")
    # every subgroup's copy of the workgroup-scope C is read before any invocation writes D
    lines.append('  "gpu.barrier"() : () -> ()')
    lines.append(f"  %d = sparse_mma.mma_sp %a, %e, %b, %c{pd} : {t['A']}, {t['E']}, {t['B']}, "
                 f"{t['C']} -> {t['C']}")
    lines.append(f"  coop.store %d, %C[%oC], %sC, RowMajor : {t['C']}, {mem['C']}")
    lines += ["  func.return", "}", ""]
    return "\n".join(lines)


def _values(t: str, rng: np.random.Generator, shape, small: bool) -> np.ndarray:
    if t == "s8":
        return rng.integers(-128, 128, shape).astype(np.int8)
    if t == "u8":
        return rng.integers(0, 256, shape).astype(np.uint8)
    if small:  # integers: exact even with an f16 accumulator
        x = rng.integers(-3, 4, shape).astype(np.float64)
    else:
        x = rng.integers(-8, 9, shape) / 4.0
    if t == "tf32":
        f = x.astype(np.float32)
        noise = rng.integers(0, 1 << 13, shape).astype(np.uint32)  # cleared by the instruction
        return (f.view(np.uint32) | np.where(f != 0, noise, 0).astype(np.uint32)).view(np.float32)
    return x.astype(NP[t])


def _store(v: Variant, shape, col: bool, es: int, arr: np.ndarray, off: int, fill) -> np.ndarray:
    stride, major, _ = _mem(v, shape, col, es)
    buf = np.full(major * stride + 5, fill, dtype=arr.dtype)
    body = arr.T if col else arr
    for i in range(major):
        buf[off + i * stride: off + i * stride + body.shape[1]] = body[i]
    return buf


def inputs(v: Variant, rng: np.random.Generator):
    """(buffers [A, E, B, C], logical (a_vals, meta, b, c)) of random 2:4 data."""
    sa, se, sb, sc = v.shapes()
    small = v.dt == "f16"
    kc = v.k // 2
    vals = _values(v.at, rng, (64, kc), small)
    if v.group == 2:
        meta = rng.choice([0x4, 0xE], size=se).astype(np.uint8)
    else:
        meta = rng.choice([0x4, 0x8, 0xC, 0x9, 0xD, 0xE], size=se).astype(np.uint8)
    b = _values(v.bt, rng, (v.k, v.n), small)
    if v.dt == "s32":
        c = rng.integers(-2**31, 2**31, sc).astype(np.int32)
        # push some entries to the edge so that wrap / saturation happen
        c[::3] = np.where(rng.random(c[::3].shape) < 0.5, 2**31 - 7, -2**31 + 7)
    elif v.dt == "f16":
        c = rng.integers(-8, 9, sc).astype(np.float16)
    else:
        c = (rng.integers(-64, 65, sc) / 8.0).astype(np.float32)
    a_val = vals.T.copy() if v.trans_a else vals
    b_val = b.T.copy() if v.trans_b else b
    es = {"f16": 2, "bf16": 2, "tf32": 4}.get(v.at, 1)
    esc = 2 if v.dt == "f16" else 4
    offa = 0 if v.aligned else 5
    bufs = [_store(v, sa, v.a_col, es, a_val, offa, a_val.flat[0]),
            _store(v, se, False, 1, meta, 5, 0),
            _store(v, sb, v.b_col, es, b_val, offa, b_val.flat[0]),
            _store(v, sc, False, esc, c, 5, c.flat[0])]
    return bufs, (vals, meta, b, c)


def _family(at: str) -> str:
    return {"e4m3": "fp8", "e5m2": "fp8", "s8": "int", "u8": "int"}.get(at, at)


def type_combos() -> list[tuple[str, str, str]]:
    """Every (.atype, .btype, .dtype) of wgmma.mma_async.sp."""
    out = [("f16", "f16", "f16"), ("f16", "f16", "f32"), ("bf16", "bf16", "f32"),
           ("tf32", "tf32", "f32")]
    for a, b in itertools.product(("e4m3", "e5m2"), repeat=2):
        out += [(a, b, "f16"), (a, b, "f32")]
    for a, b in itertools.product(("s8", "u8"), repeat=2):
        out.append((a, b, "s32"))
    return out


def n_values(at: str) -> tuple[int, ...]:
    return (24, 48, 256) if _family(at) == "int" else (8, 40, 256)


def ptxas_variants() -> list[Variant]:
    """For ptxas: every type combination x SS/RS at each of its three N, and each option it has
    (sp-sel 1, scale-d 0, negation or .satfinite, the transposes) once per SS/RS at one of the N,
    the N turning with the option and the type combination: each option meets both forms and,
    over the combinations, every N (a covering set, not the product: N changes the fragment's
    registers, an option the instruction's modifiers, independently)."""
    out = []
    for c, (at, bt, dt) in enumerate(type_combos()):
        fam = _family(at)
        ns = n_values(at)
        for rs in (False, True):
            bases = [Variant(at, bt, dt, n=n, rs=rs, steps=1 if n > 128 else 2) for n in ns]
            out += bases
            options = [dict(sel=1)] if fam in ("f16", "bf16", "tf32") else []
            options.append(dict(scale_d=False))
            options.append(dict(satfinite=True) if fam == "int" else dict(neg_a=True, neg_b=True))
            if fam in ("f16", "bf16"):
                options.append(dict(trans_b=True))
                if not rs:
                    options.append(dict(trans_a=True, trans_b=True))
            out += [replace(bases[(i + c) % len(ns)], **o) for i, o in enumerate(options)]
    return out


def fits_smem(v: Variant) -> bool:
    es = {"f16": 2, "bf16": 2, "tf32": 4}.get(v.at, 1)
    sa = 0 if v.rs else 64 * (v.k // 2) * es
    return sa + v.n * v.k * es <= 48 * 1024


def random_variants(count: int, seed: int = 1) -> list[Variant]:
    """`count` random variants covering every type combination and both selectors."""
    rng = np.random.default_rng(seed)
    combos = type_combos()
    out = []
    i = 0
    while len(out) < count:
        at, bt, dt = combos[i % len(combos)]
        i += 1
        fam = _family(at)
        ns = [n for n in (8, 16, 24, 32, 40, 48, 64, 96, 128, 192, 256)
              if fam != "int" or n in (8, 16, 24, 32, 48, 64, 96, 128, 192, 256)]
        v = Variant(at, bt, dt, n=int(rng.choice(ns)), steps=int(rng.integers(1, 4)),
                    sel=int(rng.integers(0, 2)) if fam in ("f16", "bf16", "tf32") else 0,
                    scale_d=bool(rng.random() < 0.8),
                    neg_a=fam != "int" and bool(rng.random() < 0.3),
                    neg_b=fam != "int" and bool(rng.random() < 0.3),
                    satfinite=fam == "int" and bool(rng.random() < 0.5),
                    rs=bool(rng.random() < 0.35),
                    a_col=bool(rng.random() < 0.3), b_col=bool(rng.random() < 0.5),
                    aligned=bool(rng.random() < 0.3))
        if fam in ("f16", "bf16"):
            v = replace(v, trans_b=bool(rng.random() < 0.3),
                        trans_a=not v.rs and bool(rng.random() < 0.3))
        if not fits_smem(v):
            v = replace(v, steps=1, n=min(v.n, 64))
        out.append(v)
    return out
