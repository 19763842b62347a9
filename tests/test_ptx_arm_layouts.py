"""The Arm blocked-interleaved layouts (SPV_ARM_cooperative_matrix_layouts) through PTX
(coopdialect/ptx/matrix_addressing.py): lowered kernels, run by tests/ptx_sim.py, against the
byte-level model of the extension text in tests/test_arm_layouts.py (written in the other
direction: memory in address order) and against the interpreter, bit for bit.

* Subgroup fragments of every mma.sync operand and accumulator type (A/B of f16, bf16, 8-bit
  integers; accumulators of f16, f32, 32- and 64-bit: 8-byte components split over two
  interleaved words when Stride > 1), both layouts, Stride 1, 2 and 4, constant and run-time
  offsets: a load in the Arm layout (stored back RowMajor) and a store into it (bytes outside
  the matrix untouched).
* Workgroup scope: a wgmma GEMM whose A, B and accumulator are all in Arm layouts.
* examples/gemm_f16_arm_blocked.mlir, and ptxas on the lowered kernels.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ptx_sim
from hypothesis_profiles import scaled
from test_arm_layouts import model_memory, random_matrix
from test_nv2_ptx import _lower, _run_both
from test_ptx_ptxas import _ptxas, find_ptxas

ROOT = Path(__file__).resolve().parents[1]
LAYOUTS = ("RowBlockedInterleavedARM", "ColumnBlockedInterleavedARM")
NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "i8": np.int8, "ui8": np.uint8,
      "f32": np.float32, "i32": np.int32, "f64": np.float64, "i64": np.int64}
FRAGMENTS = [  # (use, type, rows, cols): shapes with an mma.sync fragment and an Arm layout
    ("MatrixA", "f16", 16, 16), ("MatrixA", "bf16", 16, 32), ("MatrixA", "i8", 16, 32),
    ("MatrixA", "ui8", 32, 64), ("MatrixB", "f16", 16, 8), ("MatrixB", "f16", 32, 16),
    ("MatrixB", "i8", 32, 16), ("MatrixB", "ui8", 64, 32), ("MatrixAcc", "f32", 16, 8),
    ("MatrixAcc", "f32", 32, 16), ("MatrixAcc", "f16", 16, 16), ("MatrixAcc", "i32", 16, 8),
    ("MatrixAcc", "f64", 16, 8), ("MatrixAcc", "i64", 32, 8),
]


def _strides(layout: str, rows: int, cols: int, e: int) -> list[int]:
    """The Strides the extension's rules allow for this shape."""
    return [s for s in (1, 2, 4) if (cols % (16 // e * s) == 0 if layout == LAYOUTS[0]
                                     else rows % (4 * s) == 0)]


@st.composite
def cases(draw):
    use, t, rows, cols = draw(st.sampled_from(FRAGMENTS))
    e = np.dtype(NP[t]).itemsize
    layout = draw(st.sampled_from(LAYOUTS))
    stride = draw(st.sampled_from(_strides(layout, rows, cols, e)))
    offset = draw(st.integers(0, 40))
    return use, t, rows, cols, layout, stride, offset, draw(st.booleans())


def _kernel(use, t, rows, cols, layout, stride, offset, per_wg, runtime) -> str:
    m = f"!coop.matrix<{rows}x{cols}x{t}, Subgroup, {use}>"
    if runtime:  # the offset a register: workgroup x takes the matrix at x*per_wg + offset
        off = ["%w = gpu.block_id x", f"%per = arith.constant {per_wg} : index",
               "%wo = arith.muli %w, %per : index", f"%o0 = arith.constant {offset} : index",
               "%o = arith.addi %wo, %o0 : index",
               f"%n = arith.constant {rows * cols} : index", "%ro = arith.muli %w, %n : index"]
    else:
        off = [f"%o = arith.constant {offset} : index", "%ro = arith.constant 0 : index"]
    body = "\n  ".join(off)
    n = 2 * per_wg
    return f"""
func.func @k(%P: memref<{n}x{t}>, %O: memref<{2 * rows * cols}x{t}>, %Q: memref<{2 * rows * cols}x{t}>,
             %R: memref<{n}x{t}>) attributes {{coop.workgroup_size = array<i32: 32, 1, 1>}} {{
  {body}
  %s = arith.constant {stride} : index
  %ld = arith.constant {cols} : index
  %x = coop.load %P[%o], %s, {layout} : memref<{n}x{t}> -> {m}
  coop.store %x, %O[%ro], %ld, RowMajor : {m}, memref<{2 * rows * cols}x{t}>
  %y = coop.load %Q[%ro], %ld, RowMajor : memref<{2 * rows * cols}x{t}> -> {m}
  coop.store %y, %R[%o], %s, {layout} : {m}, memref<{n}x{t}>
  func.return
}}
"""


@settings(max_examples=scaled(10), deadline=None)  # hypothesis_profiles: 100 in `long`
@given(cases(), st.integers(0, 2**31))
def test_fragments_in_arm_layouts_equal_the_model_and_the_interpreter(case, seed) -> None:
    use, t, rows, cols, layout, stride, offset, runtime = case
    dt = NP[t]
    e = np.dtype(dt).itemsize
    rng = np.random.default_rng(seed)
    per_wg = offset + rows * cols + 3
    grid = (2, 1, 1) if runtime else (1, 1, 1)
    mats = [random_matrix(rng, rows, cols, dt) for _ in range(4)]
    P = np.zeros(2 * per_wg * e, np.uint8)
    R = np.full(2 * per_wg * e, 0xA5, np.uint8)
    want_r = R.copy()
    for w in range(grid[0]):
        at = (w * per_wg + offset) * e
        P[at:at + rows * cols * e] = model_memory(mats[w], layout, stride)
        want_r[at:at + rows * cols * e] = model_memory(mats[2 + w], layout, stride)
    Q = np.concatenate([mats[2].reshape(-1), mats[3].reshape(-1)]).astype(dt)
    bufs = [P.view(dt), np.zeros(2 * rows * cols, dt), Q, R.view(dt)]
    text = _kernel(use, t, rows, cols, layout, stride, offset, per_wg, runtime)
    got = [b.copy() for b in bufs]
    ptx_sim.Kernel(_lower(text, "arm")["k"]).run(got, grid, (32, 1, 1))
    want_o = np.concatenate([mats[w].reshape(-1) if w < grid[0] else np.zeros(rows * cols, dt)
                             for w in range(2)])
    assert got[1].view(np.uint8).tobytes() == want_o.astype(dt).view(np.uint8).tobytes()
    assert got[3].view(np.uint8).tobytes() == want_r.tobytes()
    _run_both(text, "arm", "k", bufs, grid, (32, 1, 1))


WG_GEMM = """
!a = !coop.matrix<64x32xf16, Workgroup, MatrixA>
!b = !coop.matrix<32x16xf16, Workgroup, MatrixB>
!c = !coop.matrix<64x16xf32, Workgroup, MatrixAcc>
func.func @wg(%A: memref<2048xf16>, %B: memref<512xf16>, %C: memref<1024xf32>, %D: memref<1024xf32>)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %s1 = arith.constant 1 : index
  %s2 = arith.constant 2 : index
  %s4 = arith.constant 4 : index
  %a = coop.load %A[%c0], %s4, RowBlockedInterleavedARM : memref<2048xf16> -> !a
  %b = coop.load %B[%c0], %s2, ColumnBlockedInterleavedARM : memref<512xf16> -> !b
  %c = coop.load %C[%c0], %s2, RowBlockedInterleavedARM : memref<1024xf32> -> !c
  %d = coop.mul_add %a, %b, %c : !a, !b, !c -> !c
  coop.store %d, %D[%c0], %s1, ColumnBlockedInterleavedARM : !c, memref<1024xf32>
  func.return
}
"""


def test_workgroup_gemm_in_arm_layouts() -> None:
    """A, B staged for wgmma from Arm layouts; the accumulator loaded and stored in them."""
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (64, 32)).astype(np.float16)
    b = rng.integers(-3, 4, (32, 16)).astype(np.float16)
    c = rng.integers(-9, 10, (64, 16)).astype(np.float32)
    bufs = [model_memory(a, "RowBlockedInterleavedARM", 4).view(np.float16),
            model_memory(b, "ColumnBlockedInterleavedARM", 2).view(np.float16),
            model_memory(c, "RowBlockedInterleavedARM", 2).view(np.float32),
            np.zeros(1024, np.float32)]
    got = [x.copy() for x in bufs]
    ptx_sim.Kernel(_lower(WG_GEMM, "wg")["wg"]).run(got, (1, 1, 1), (128, 1, 1))
    d = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
    assert got[3].view(np.uint8).tobytes() == \
        model_memory(d, "ColumnBlockedInterleavedARM", 1).tobytes()
    _run_both(WG_GEMM, "wg", "wg", bufs, (1, 1, 1), (128, 1, 1))


def test_arm_example_runs_like_the_interpreter() -> None:
    """examples/gemm_f16_arm_blocked.mlir: A tiles RowBlockedInterleavedARM Stride 2, B tiles
    ColumnBlockedInterleavedARM Stride 1, C row-major; grid 2x2."""
    rng = np.random.default_rng(4)
    bufs = [rng.integers(-4, 5, 1024).astype(np.float16),
            rng.integers(-4, 5, 1024).astype(np.float16),
            rng.integers(-8, 9, 1024).astype(np.float32)]
    _run_both((ROOT / "examples/gemm_f16_arm_blocked.mlir").read_text(), "arm",
              "gemm_f16_arm_blocked", bufs, (2, 2, 1), (32, 1, 1))


def test_arm_kernels_assemble(tmp_path: Path) -> None:
    from coopdialect.ptx import emit_ptx

    ptxas = find_ptxas()
    texts = {"wg": WG_GEMM}
    for i, (use, t, rows, cols) in enumerate(FRAGMENTS):
        e = np.dtype(NP[t]).itemsize
        for layout in LAYOUTS:
            stride = _strides(layout, rows, cols, e)[-1]
            texts[f"f{i}_{layout[:3]}"] = _kernel(use, t, rows, cols, layout, stride, 5,
                                                  rows * cols + 8, True)
    bad = []
    for name, text in texts.items():
        from coopdialect import api
        from coopdialect.passes.convert_coop_to_ptx import ConvertCoopToPtxPass
        from coopdialect.context import make_context

        module = api.parse(text, name)
        ConvertCoopToPtxPass().apply(make_context(), module)
        p = tmp_path / f"{name}.ptx"
        p.write_text(emit_ptx(module))
        rc, out = _ptxas(ptxas, p)
        if rc or out:
            bad.append(f"{name}: rc={rc}\n{out}")
    assert not bad, "\n".join(bad)
