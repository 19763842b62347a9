"""The PTX backend on a CUDA GPU against the interpreter, bit for bit (tests/ptx_cases.py).

Cases: the two example GEMMs (gemm_f16, gemm_s8), 60 randomized one-warp fragment cases (load
layouts, offsets and strides, every mma.sync type, element-wise ops, conversions, both
accumulate types), every element-wise op x element type once, and one-warpgroup wgmma GEMMs
(f16/bf16, several N, every A/B layout). Each case's expected outputs come from the interpreter
on the IR that is compiled, and must first equal the independent numpy model of ptx_cases.py
bit for bit (ModelMismatch otherwise); the device's output buffers must then equal them byte for
byte. tests/test_ptx_ptxas.py assembles every one of these kernels with ptxas.
"""

from __future__ import annotations

import functools

import pytest
from gpu_compare import differing_bytes

import ptx_cases

pytestmark = pytest.mark.gpu


@functools.lru_cache(maxsize=1)
def _cases() -> dict:
    cases = (ptx_cases.example_cases() + ptx_cases.fragment_cases(60)
             + ptx_cases.elementwise_cases() + ptx_cases.wgmma_cases())
    return {c.name: c for c in cases}


def _names() -> list[str]:
    return list(_cases())


@pytest.mark.parametrize("name", _names())
def test_ptx_case_on_cuda(cuda, name: str) -> None:
    from coopdialect import api
    from coopdialect.runtime import run_kernel

    c = _cases()[name]
    expected = ptx_cases.interpreter_outputs(c)
    ptx_cases.check_model(c, expected)
    got = [b.copy() for b in c.buffers]
    run_kernel(api.parse(c.mlir, c.name), c.kernel, got, c.grid, cuda)
    bad, size = differing_bytes(got, expected)
    assert bad == 0, f"{name}: {bad} of {size} bytes differ from the interpreter"
