"""Tensor loads and stores of accumulator tiles through plain box layouts (coopdialect/ptx/
box_access.py: whole rows inside the tensor, element by element at its edges, a bias row by a
1-D layout), run by the PTX simulator (tests/ptx_sim.py) against the interpreter, which follows
SPV_NV_tensor_addressing's pseudo-code.

The kernel is the reduction of coopdialect.kernels.gemm.splitk_ir: it loads S partial 64 x 128
f32 tiles through a 3-D layout (S x M x N, one slice each), adds them, adds a bias row (a 1-D
layout of span 128), converts to f16 and stores through a 2-D layout — at sizes whose tiles are
whole, cut at the bottom, at the right and at both.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from coopdialect import api
from coopdialect.kernels.gemm import GemmConfig, splitk_ir


@pytest.mark.parametrize("m,n,s", [(70, 200, 2)])  # tiles whole, cut right, below, both
def test_split_k_reduction_runs_like_the_interpreter(m, n, s):
    import ptx_sim

    text = splitk_ir("f16", GemmConfig(64, 64, 64, 4, False, 4), "bias")
    kernel = "gemm_f16_bias_splitk_reduce"
    rng = np.random.default_rng(m * n + s)
    w = rng.integers(-64, 65, s * m * n).astype(np.float32)
    bias = rng.integers(-8, 9, n).astype(np.float16)
    grid = (-(-n // 128), -(-m // 64), 1)
    want = np.full((m, n), np.nan, np.float16)
    api.run_kernel(api.parse(text, "splitk.mlir"), kernel, [w, want, bias, m, n, s], grid)
    ref = (w.reshape(s, m, n).sum(0) + bias.astype(np.float32)).astype(np.float16)
    assert np.array_equal(want, ref)  # the interpreter against numpy first

    module = api.parse(text, "splitk.mlir")
    api.run_pipeline(module, "pipeline-coop-loads{stages=4},convert-coop-to-ptx")
    (k,) = [op for op in module.ops if op.sym_name.data == kernel]
    got = np.full((m, n), np.nan, np.float16)
    scalars = [struct.pack("<I", v) for v in (m, n, s)]
    ptx_sim.Kernel(k).run([w.copy(), got, bias.copy(), *scalars], grid, (128, 1, 1))
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))
