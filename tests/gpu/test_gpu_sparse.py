"""2:4 sparse MMA (wgmma.mma_async.sp) on a CUDA GPU against the interpreter, bit for bit.

Cases: 120 random one-warpgroup variants (tests/sparse_cases.py `random_variants(120, seed=7)`:
every type family f16/bf16/tf32/e4m3/e5m2/s8/u8 and their mixes, both selectors, SS and RS,
negation, transposes, scale-d 0/1, satfinite, 1-3 chained instructions, several N and memory
layouts, on random 2:4 data) and the sparse GEMM example (examples/sparse_gemm_f16.mlir at
256³, 8 warpgroups, whose interpreter result must also equal numpy's dense product). Every byte
of D must equal the interpreter's. tests/test_sparse_ptxas.py assembles every variant family.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from gpu_compare import differing_bytes

import sparse_cases

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = "example_sparse_gemm_f16_256"


@functools.lru_cache(maxsize=1)
def _variants() -> dict:
    """"NNN_<variant name>" -> (IR text, kernel, grid, buffers, numpy's D or None); one
    generator draws the variants' inputs in order (two draws may be the same variant)."""
    rng = np.random.default_rng(2026)
    return {f"{i:03d}_{v.name}": (sparse_cases.kernel_ir(v), "sp", (1, 1, 1),
                                  sparse_cases.inputs(v, rng)[0], None)
            for i, v in enumerate(sparse_cases.random_variants(120, seed=7))}


def _example():
    from coopdialect.interpreter.sparse_mma import compress
    from coopdialect.kernels.sparse_gemm import grid, random_sparse_24

    m = n = k = 256
    dense = random_sparse_24(np.random.default_rng(5), m, k)
    vals, meta = compress(None, dense, 4)
    bt = np.random.default_rng(6).integers(-3, 4, (n, k)).astype(np.float16)
    c = np.random.default_rng(8).integers(-4, 5, (m, n)).astype(np.float32)
    numpy_d = c + dense.astype(np.float64) @ bt.T.astype(np.float64)
    return ((ROOT / "examples" / "sparse_gemm_f16.mlir").read_text(), "sparse_gemm_f16",
            grid(m, n), [vals, meta, bt, c], numpy_d)


@pytest.mark.parametrize("name", [*_variants(), EXAMPLE])
def test_sparse_case_on_cuda(cuda, name: str) -> None:
    from coopdialect import api
    from coopdialect.runtime import run_kernel

    text, kernel, grid, bufs, numpy_d = _example() if name == EXAMPLE else _variants()[name]
    want = [b.copy() for b in bufs]
    api.run_kernel(api.parse(text, name), kernel, want, grid)
    if numpy_d is not None:
        assert np.array_equal(want[3], numpy_d), "the interpreter differs from numpy's product"
    got = [b.copy() for b in bufs]
    run_kernel(api.parse(text, name), kernel, got, grid, cuda)
    bad, size = differing_bytes(got, {3: want[3]})
    assert bad == 0, f"{name}: {bad} of {size} bytes of D differ from the interpreter"
