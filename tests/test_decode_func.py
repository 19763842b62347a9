"""DecodeFunc (SPV_NV_cooperative_matrix2, CooperativeMatrixBlockLoadsNV): examples/block_decode_load.mlir
(4-bit Q4_0 blocks with an f16 scale per 32 elements) interpreted and compared with an independent
numpy dequantizer, before and after fold-tensor-views; its SPIR-V (PhysicalStorageBuffer pointer
parameter, Aliased, coordinate arrays) checked word by word against the grammar; refusals."""

from __future__ import annotations

import os

import numpy as np
import pytest

from coopdialect import api
from coopdialect.context import make_context
from coopdialect.diagnostics import LocatingParser
from coopdialect.interpreter import run_kernel
from coopdialect.passes.fold_tensor_views import FoldTensorViewsPass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "block_decode_load.mlir")
M, K, N = 64, 128, 32


def make_q4_0(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(Q words, W): random Q4_0 blocks (llama.cpp layout: f16 d, then 16 bytes of nibbles; element
    j is the low nibble of byte j for j < 16, the high nibble of byte j-16 otherwise; value
    (nibble - 8) * d) and the matrix they encode, built element by element from that text."""
    kb = K // 32
    nib = rng.integers(0, 16, (M, kb, 32))
    d = rng.choice(np.array([0.25, 0.5, 1.0, 2.0, -0.5], np.float16), (M, kb))
    blocks = np.zeros((M, kb, 18), np.uint8)
    blocks[:, :, 0:2] = d.view(np.uint8).reshape(M, kb, 2)
    for j in range(16):
        blocks[:, :, 2 + j] = nib[:, :, j] | (nib[:, :, j + 16] << 4)
    q = blocks.reshape(-1).view(np.int16).copy()
    w = ((nib - 8).astype(np.float32) * d[:, :, None].astype(np.float32)).reshape(M, K).astype(np.float16)
    return q, w


def _module(fold: bool):
    ctx = make_context()
    m = LocatingParser(ctx, open(EXAMPLE).read(), EXAMPLE).parse_module()
    m.verify()
    if fold:
        FoldTensorViewsPass().apply(ctx, m)
        m.verify()
    return m


@pytest.mark.parametrize("fold", [False, True])
def test_dequant_matches_numpy(fold):
    q, w = make_q4_0(np.random.default_rng(7))
    out = np.zeros((M, K), np.float16)
    run_kernel(_module(fold), "dequant_q4", [q, out], (K // 16, M // 16, 1))
    assert np.array_equal(out.view(np.uint16), w.view(np.uint16))


@pytest.mark.parametrize("fold", [False, True])
def test_gemm_matches_numpy(fold):
    rng = np.random.default_rng(8)
    q, w = make_q4_0(rng)
    b = rng.integers(-4, 5, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    run_kernel(_module(fold), "gemm_q4", [q, b, c], (N // 16, M // 16, 1))
    # every product and partial sum is exact in f32 (small integers times powers of two)
    assert np.array_equal(c, w.astype(np.float32) @ b.astype(np.float32))


def _words(data: bytes) -> list[int]:
    return list(np.frombuffer(data, "<u4"))


def _instructions(words: list[int]):
    pos = 5
    while pos < len(words):
        n, op = words[pos] >> 16, words[pos] & 0xFFFF
        yield op, words[pos + 1: pos + n]
        pos += n


def test_spirv_shape():
    """Checked against the spec text with opcode/enumerant numbers from the grammar tables:
    PhysicalStorageBuffer64 addressing, a PhysicalStorageBuffer pointer first parameter decorated
    Aliased, two arrays of Dim 32-bit integers, the DecodeFunc operand, Aligned loads."""
    from coopdialect.spirv.grammar_tables import ENUMS, INSTRUCTIONS

    data = api.compile_to_spirv(api.parse_file(EXAMPLE))
    insts = list(_instructions(_words(data)))
    op = {name: INSTRUCTIONS[name][0] for name in (
        "OpMemoryModel", "OpTypePointer", "OpFunctionParameter", "OpDecorate", "OpTypeArray",
        "OpCooperativeMatrixLoadTensorNV", "OpLoad", "OpFunction", "OpConstant", "OpTypeInt")}
    psb = ENUMS["StorageClass"]["PhysicalStorageBuffer"][0]
    (mm,) = [w for o, w in insts if o == op["OpMemoryModel"]]
    assert mm[0] == ENUMS["AddressingModel"]["PhysicalStorageBuffer64"][0]
    psb_ptrs = {w[0] for o, w in insts if o == op["OpTypePointer"] and w[1] == psb}
    params = [w for o, w in insts if o == op["OpFunctionParameter"]]
    assert len(params) == 3 and params[0][0] in psb_ptrs
    aliased = [w for o, w in insts if o == op["OpDecorate"] and w[1] == ENUMS["Decoration"]["Aliased"][0]]
    assert [w[0] for w in aliased] == [params[0][1]]
    consts = {w[1]: w[2] for o, w in insts if o == op["OpConstant"]}
    ints = {w[0]: w[1] for o, w in insts if o == op["OpTypeInt"]}
    arrays = {w[0]: (w[1], consts[w[2]]) for o, w in insts if o == op["OpTypeArray"]}
    for p in params[1:]:
        elem, length = arrays[p[0]]
        assert ints[elem] == 32 and length == 2  # Dim = 2
    loads = [w for o, w in insts if o == op["OpCooperativeMatrixLoadTensorNV"]]
    decode_bit = ENUMS["TensorAddressingOperands"]["DecodeFunc"][0]
    fn_ids = {w[1] for o, w in insts if o == op["OpFunction"]}
    assert len(loads) == 2
    for w in loads:  # ... MemoryOperand None (0), TensorAddressingOperands DecodeFunc, <id>
        assert w[-2] == decode_bit and w[-1] in fn_ids
    aligned = ENUMS["MemoryAccess"]["Aligned"][0]
    psb_loads = [w for o, w in insts if o == op["OpLoad"] and len(w) > 3]
    assert len(psb_loads) == 2 and all(w[3] == aligned and w[4] == 2 for w in psb_loads)


REFUSED = [
    ("%r = arith.sitofp %i : i32 to f32", "'arith.sitofp' op uses the DecodeFunc's index parameter"),
    ("%j = arith.index_cast %i : i32 to index\n  %two = arith.constant 2 : index\n"
     "  %k = arith.muli %j, %two : index\n  %v = memref.load %p[%k] : memref<256xi32>\n"
     "  %r = arith.sitofp %v : i32 to f32", "'arith.muli' op uses the DecodeFunc's index parameter"),
    ("%z = arith.constant 0 : index\n  %v = memref.load %p[%z] : memref<256xi32>\n"
     "  %r = arith.sitofp %v : i32 to f32", "'memref.load' op a load through the DecodeFunc's memref"),
    ("%z = arith.constant 0 : index\n  %one = arith.constant 1 : i32\n"
     "  memref.store %one, %p[%z] : memref<256xi32>\n  %r = arith.sitofp %one : i32 to f32",
     "'memref.store' op uses the DecodeFunc's memref parameter"),
]


@pytest.mark.parametrize("body,message", REFUSED, ids=range(len(REFUSED)))
def test_refused_forms(body, message):
    from coopdialect.errors import CoopError

    text = f"""
func.func @decode(%p: memref<256xi32>, %i: i32, %b: i32, %c: i32) -> f32 {{
  {body}
  func.return %r : f32
}}
func.func @k(%T: memref<256xi32>) attributes {{coop.workgroup_size = array<i32: 32, 1, 1>}} {{
  %z = arith.constant 0.0 : f32
  %obj = coop.composite_construct %z : f32 -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  %l = tensor_addr.create_layout : !tensor_addr.layout<1, Undefined>
  %x = coop.load_tensor %T, %obj, %l decode @decode : memref<256xi32>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, !tensor_addr.layout<1, Undefined> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}}
"""
    ctx = make_context()
    m = LocatingParser(ctx, text, "decode.mlir").parse_module()
    m.verify()
    with pytest.raises(CoopError) as e:
        api.compile_to_spirv(m)
    assert message in str(e.value) and "\n" not in str(e.value)
