"""Cooperative-matrix-2 and tensor addressing through PTX on a CUDA GPU, against the interpreter.

The cases of tests/tensor_cases.py for CUDA (80): the three tensor-addressing examples and the
coopmat2 GEMM (coopdialect.kernels.coopmat2_gemm, 256x512x128), each as written and after
fold-tensor-views; 60 random tensor-addressed loads and stores (the same draws as the Vulkan
test, the interpreter equal to the independent reference on each); examples/block_decode_load.mlir
(DecodeFunc on Q4_0 blocks), both kernels, unfolded and folded, 3 data sets each. Every byte of
every buffer must equal the interpreter's on the source IR (softmax's division is IEEE
div.rn.f32 in PTX, so bit-exact too). tests/test_nv2_ptx_check.py runs the same cases through
the CUDA device on a fake driver that interprets, and ptxas on each module.
"""

from __future__ import annotations

import pytest

import tensor_cases

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", tensor_cases.names("cuda"))
def test_tensor_case_through_ptx(cuda, name: str) -> None:
    case = tensor_cases.cases("cuda")[name]
    why = tensor_cases.mismatch(case, tensor_cases.run_on(cuda, case), "cuda")
    assert why is None, f"{name} ({case.info or case.group}): {why}"
