"""The Workgroup-tile GEMM examples (examples/gemm_{f16,bf16}_wg.mlir, sparse_gemm_f16_wg.mlir):
the checked-in files are what coopdialect.kernels.gemm_tiles generates, and at a small size the
interpreter gives numpy's product (torch.matmul(A, Bt.T) semantics, rounded once to the output
type) both as written and after `pipeline-coop-loads`."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from coopdialect.context import make_context
from coopdialect.diagnostics import LocatingParser, verify_with_locations
from coopdialect.dialects import coop_async
from coopdialect.interpreter import run_kernel
from coopdialect.kernels import gemm_tiles as gen
from coopdialect.passes.pipeline_coop_loads import PipelineCoopLoadsPass

ROOT = Path(__file__).resolve().parents[1]

DT = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}
META = [(i, j) for i in range(4) for j in range(i + 1, 4)]  # kept pairs of a 2:4 chunk


@pytest.mark.parametrize("path,args", [
    ("examples/gemm_f16_wg.mlir", (8192, 8192, 8192, "f16")),
    ("examples/gemm_bf16_wg.mlir", (8192, 8192, 8192, "bf16")),
])
def test_dense_examples_are_the_generator_output(path, args):
    assert (ROOT / path).read_text() == gen.gemm_wg_ir(*args)


def test_sparse_example_is_the_generator_output():
    assert (ROOT / "examples/sparse_gemm_f16_wg.mlir").read_text() == \
        gen.sparse_gemm_wg_ir(8192, 8192, 8192, "f16")
    assert (ROOT / "examples/sparse_gemm_f16_tiles_wg.mlir").read_text() == \
        gen.sparse_gemm_wg_ir(8192, 8192, 8192, "f16", meta_tiles=True)


def _module(text: str, stages: int | None):
    module = LocatingParser(make_context(), text, "gemm_wg.mlir").parse_module()
    verify_with_locations(module)
    if stages is not None:
        PipelineCoopLoadsPass(stages=stages).apply(make_context(), module)
        verify_with_locations(module)
        assert any(isinstance(op, coop_async.AsyncCopyOp) for op in module.walk())
    return module


@pytest.mark.parametrize("dtype,stages", [("f16", None), ("f16", 4), ("bf16", 3)])
def test_dense_gemm_wg_equals_numpy(dtype, stages):
    m, n, k = 128, 512, 128
    rng = np.random.default_rng(7)
    a = rng.integers(-3, 4, (m, k)).astype(DT[dtype])
    bt = rng.integers(-3, 4, (n, k)).astype(DT[dtype])
    d = np.zeros((m, n), DT[dtype])
    run_kernel(_module(gen.gemm_wg_ir(m, n, k, dtype), stages), f"gemm_{dtype}_wg", [a, bt, d],
               (n // 256, m // 128, 1))
    want = (a.astype(np.float64) @ bt.astype(np.float64).T).astype(np.float32).astype(DT[dtype])
    assert np.array_equal(d.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("stages,tiles", [(None, False), (3, False), (None, True), (2, True)])
def test_sparse_gemm_wg_equals_numpy(stages, tiles):
    m, n, k = 256, 256, 128
    rng = np.random.default_rng(8)
    pairs = rng.integers(0, len(META), (m, k // 4))
    vals = rng.integers(-3, 4, (m, k // 2)).astype(np.float16)
    dense = np.zeros((m, k), np.float64)
    meta = np.zeros((m, k // 4), np.uint8)
    for r in range(m):
        for c in range(k // 4):
            i0, i1 = META[pairs[r, c]]
            meta[r, c] = i0 | (i1 << 2)
            dense[r, 4 * c + i0] = vals[r, 2 * c]
            dense[r, 4 * c + i1] = vals[r, 2 * c + 1]
    bt = rng.integers(-3, 4, (n, k)).astype(np.float16)
    d = np.zeros((m, n), np.float16)
    if tiles:  # the tile order, written out from its definition (not gen.meta_tile_order)
        meta = np.concatenate([meta[128 * y:128 * (y + 1), 16 * i:16 * (i + 1)].reshape(1, -1)
                               for y in range(m // 128) for i in range(k // 64)])
        assert np.array_equal(meta, gen.meta_tile_order(meta_rows := np.vstack(
            [np.hstack([meta[y * (k // 64) + i].reshape(128, 16) for i in range(k // 64)])
             for y in range(m // 128)])))
        assert meta_rows.shape == (m, k // 4)
    run_kernel(_module(gen.sparse_gemm_wg_ir(m, n, k, meta_tiles=tiles), stages),
               "sparse_gemm_f16_wg", [vals, meta, bt, d], (n // 256, m // 128, 1))
    want = (dense @ bt.astype(np.float64).T).astype(np.float32).astype(np.float16)
    assert np.array_equal(d.view(np.uint16), want.view(np.uint16))
