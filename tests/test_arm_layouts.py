"""SPV_ARM_cooperative_matrix_layouts: the interpreter against an independent byte-level model.

The model below is written from the extension text in the other direction from the interpreter:
it walks memory in address order (group, interleaved 4-byte word slot, byte) and says which
matrix element byte lives there; the interpreter computes an address per element byte.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopdialect.context import make_context
from coopdialect.diagnostics import LocatingParser
from coopdialect.interpreter import run_kernel
from hypothesis_profiles import scaled

SETTINGS = settings(max_examples=scaled(20), deadline=None)

# MLIR type, numpy dtype
TYPES = {
    "i8": np.int8, "ui8": np.uint8, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
    "f32": np.float32, "i32": np.int32, "f64": np.float64, "i64": np.int64,
}
LAYOUTS = ("RowBlockedInterleavedARM", "ColumnBlockedInterleavedARM")


def model_memory(matrix: np.ndarray, layout: str, stride: int) -> np.ndarray:
    """The bytes of `matrix` in the Arm layout, built by walking memory in address order."""
    rows, cols = matrix.shape
    e = matrix.dtype.itemsize
    per_block_cols = 16 // e
    nbr, nbc = rows // 4, cols // per_block_cols
    src = np.ascontiguousarray(matrix).view(np.uint8).reshape(rows, cols, e)
    out = bytearray()
    for group in range(nbr * nbc // stride):
        for slot in range(16 * stride):  # 16 words per 64-byte block, S blocks interleaved
            word, member = divmod(slot, stride)
            block = group * stride + member
            if layout == "RowBlockedInterleavedARM":
                br, bc = divmod(block, nbc)
            else:
                bc, br = divmod(block, nbr)
            for q in range(4):
                byte_in_block = word * 4 + q
                elem, k = divmod(byte_in_block, e)
                er, ec = divmod(elem, per_block_cols)
                out.append(int(src[br * 4 + er, bc * per_block_cols + ec, k]))
    assert len(out) == rows * cols * e
    return np.frombuffer(bytes(out), dtype=np.uint8)


def random_matrix(rng, rows, cols, dtype) -> np.ndarray:
    raw = rng.integers(0, 256, rows * cols * np.dtype(dtype).itemsize, dtype=np.uint8)
    m = raw.view(dtype).reshape(rows, cols)
    if np.dtype(dtype).kind == "f" or dtype is ml_dtypes.bfloat16:
        m = rng.integers(-50, 50, (rows, cols)).astype(dtype)  # no NaN payload questions
    return m


def parse(text: str):
    module = LocatingParser(make_context(), text, "arm.mlir").parse_module()
    module.verify()
    return module


def kernel(t: str, rows: int, cols: int, n_in: int, n_out: int, load_layout: str,
           load_stride: int, store_layout: str, store_stride: int, offset_in: int = 0,
           offset_out: int = 0) -> str:
    m = f"!coop.matrix<{rows}x{cols}x{t}, Subgroup, MatrixAcc>"
    return f"""
func.func @k(%src: memref<{n_in}x{t}>, %dst: memref<{n_out}x{t}>)
    attributes {{coop.workgroup_size = array<i32: 32, 1, 1>}} {{
  %oi = arith.constant {offset_in} : index
  %oo = arith.constant {offset_out} : index
  %sl = arith.constant {load_stride} : index
  %ss = arith.constant {store_stride} : index
  %m = coop.load %src[%oi], %sl, {load_layout} : memref<{n_in}x{t}> -> {m}
  coop.store %m, %dst[%oo], %ss, {store_layout} : {m}, memref<{n_out}x{t}>
  func.return
}}
"""


@st.composite
def cases(draw):
    t = draw(st.sampled_from(sorted(TYPES)))
    layout = draw(st.sampled_from(LAYOUTS))
    stride = draw(st.sampled_from([1, 2, 4]))
    e = np.dtype(TYPES[t]).itemsize
    bc = 16 // e
    if layout == "RowBlockedInterleavedARM":
        rows = 4 * draw(st.integers(1, 4))
        cols = bc * stride * draw(st.integers(1, 2))
    else:
        rows = 4 * stride * draw(st.integers(1, 2))
        cols = bc * draw(st.integers(1, 4))
    offset = draw(st.integers(0, 3)) * (16 // e)  # any element offset works; keep a few
    return t, layout, stride, rows, cols, offset


@SETTINGS
@given(cases(), st.integers(0, 2**31))
def test_load_matches_model(case, seed):
    t, layout, stride, rows, cols, offset = case
    dt = TYPES[t]
    rng = np.random.default_rng(seed)
    m = random_matrix(rng, rows, cols, dt)
    e = np.dtype(dt).itemsize
    mem = np.zeros((offset + rows * cols + 5) * e, np.uint8)
    mem[offset * e: (offset + rows * cols) * e] = model_memory(m, layout, stride)
    src = mem.view(dt)
    dst = np.zeros(rows * cols, dt)
    text = kernel(t, rows, cols, src.size, dst.size, layout, stride, "RowMajor", cols, offset)
    run_kernel(parse(text), "k", [src, dst], (1, 1, 1))
    assert dst.view(np.uint8).tobytes() == np.ascontiguousarray(m).view(np.uint8).tobytes()


@SETTINGS
@given(cases(), st.integers(0, 2**31))
def test_store_matches_model_and_round_trips(case, seed):
    t, layout, stride, rows, cols, offset = case
    dt = TYPES[t]
    rng = np.random.default_rng(seed)
    m = random_matrix(rng, rows, cols, dt)
    e = np.dtype(dt).itemsize
    src = np.ascontiguousarray(m).reshape(-1).copy()
    sentinel = np.full((offset + rows * cols + 5) * e, 0xA5, np.uint8)
    dst = sentinel.copy().view(dt)
    text = kernel(t, rows, cols, src.size, dst.size, "RowMajor", cols, layout, stride, 0, offset)
    run_kernel(parse(text), "k", [src, dst], (1, 1, 1))
    got = dst.view(np.uint8)
    assert got[offset * e: (offset + rows * cols) * e].tobytes() == model_memory(m, layout, stride).tobytes()
    assert (got[: offset * e] == 0xA5).all() and (got[(offset + rows * cols) * e:] == 0xA5).all()
    # load∘store: reading the blocked bytes back in the same layout gives the matrix again
    back = np.zeros(rows * cols, dt)
    text2 = kernel(t, rows, cols, dst.size, back.size, layout, stride, "RowMajor", cols, offset)
    run_kernel(parse(text2), "k", [dst, back], (1, 1, 1))
    assert back.view(np.uint8).tobytes() == np.ascontiguousarray(m).view(np.uint8).tobytes()


def test_worked_example_of_the_docs():
    """docs/arm-layouts.md: 8x16 f16, RowBlockedInterleavedARM, Stride 2; element (5, 11)."""
    m = np.arange(128, dtype=np.float16).reshape(8, 16)
    mem = model_memory(m, "RowBlockedInterleavedARM", 2).view(np.float16)
    # block (1, 1): j = 3, group 1, member 1; byte in block ((5%4)*8 + 11%8)*2 = 22: word 5, byte 2
    # address = 1*128 + (5*2 + 1)*4 + 2 = 174 bytes = element 87 of the buffer
    assert mem[87] == m[5, 11]


def test_out_of_bounds_is_an_error():
    text = kernel("f16", 4, 8, 31, 32, "RowBlockedInterleavedARM", 1, "RowMajor", 8)
    with pytest.raises(Exception, match="out-of-bounds load"):
        run_kernel(parse(text), "k", [np.zeros(31, np.float16), np.zeros(32, np.float16)], (1, 1, 1))
