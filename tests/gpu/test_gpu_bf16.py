"""bf16 through SPIR-V (SPV_KHR_bfloat16) on a Vulkan device with VK_KHR_shader_bfloat16,
against the interpreter (docs/vulkan.md, "bf16").

Kernels: the Subgroup-scope KHR GEMM of tests/test_bf16_spirv.py (bf16 loads of both layouts, a
bf16 C converted to f32 and the result back, a splat of a bf16 constant), the Workgroup-tile
bf16 GEMM of examples/gemm_bf16_wg.mlir at 256x256x64 (its generator), the any-shape bf16 GEMM
of coopdialect.kernels.gemm at 130x260x60 (clamped tensor layouts cut every tile edge) and
examples/gemm_any_bf16.mlir itself (bias + GELU) at that size.

Inputs are integers in [-2, 2], so every product, every f32 sum (at most 4K + 2 = 242 here) and
every bf16 result (integers up to 256 are exact in bf16) is exact: the device must give the
interpreter's bytes whatever its accumulation order and its rounding of OpFConvert (which
Vulkan leaves to the implementation). GELU's erf has no SPIR-V instruction: the module computes
an f32 approximation (absolute error 2^-21, coopdialect/math_bounds.py) where the interpreter's
erf is correctly rounded, so that kernel's outputs may differ by |x| 2^-20 plus one bf16 step
(either neighbour of a value between two bf16 numbers).

A device without VK_KHR_shader_bfloat16 or its features skips each test with what it lacks.

    python3 -P -m pytest tests/gpu/test_gpu_bf16.py -m gpu --device vulkan
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from gpu_compare import differing_bytes

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
BF = ml_dtypes.bfloat16
M, N, K = 130, 260, 60


@pytest.fixture(scope="module")
def bf16_vulkan(vulkan):
    """The Vulkan device, when it has what a bf16 cooperative-matrix module declares."""
    from coopdialect.runtime.vulkan import missing_features

    lacks = missing_features(["BFloat16TypeKHR", "BFloat16CooperativeMatrixKHR"],
                             ["SPV_KHR_bfloat16"], vulkan.ctx.enabled_features,
                             vulkan.ctx.enabled_extensions)
    if lacks:
        pytest.skip(f"the Vulkan device ({vulkan.ctx.device_info()['name']}) lacks "
                    + "; ".join(lacks))
    return vulkan


def _ints(rng, shape):
    return rng.integers(-2, 3, shape).astype(BF)


def _case(name: str):
    """(IR text, kernel, inputs, grid, index of the output buffer)."""
    rng = np.random.default_rng(21)
    if name == "subgroup":
        from test_bf16_spirv import SUBGROUP

        return SUBGROUP, "gemm_bf16", [_ints(rng, (16, 32)), _ints(rng, (32, 16)),
                                       _ints(rng, (16, 16)), np.zeros((16, 16), BF)], (1, 1, 1), 3
    if name == "gemm_bf16_wg":
        from coopdialect.kernels.gemm_tiles import gemm_wg_ir, grid

        return (gemm_wg_ir(256, 256, 64, "bf16"), "gemm_bf16_wg",
                [_ints(rng, (256, 64)), _ints(rng, (256, 64)), np.zeros((256, 256), BF)],
                grid(256, 256), 2)
    if name == "gemm_any_bf16_plain":
        from coopdialect.kernels.gemm import gemm_ir

        text, kernel, bias = gemm_ir("bf16"), "gemm_bf16", []
    else:
        text = (ROOT / "examples/gemm_any_bf16.mlir").read_text()
        kernel, bias = "gemm_bf16_bias_gelu", [_ints(rng, N)]
    bufs = [_ints(rng, (M, K)), _ints(rng, (N, K)), np.zeros((M, N), BF), *bias]
    return text, kernel, bufs + [np.int32(M), np.int32(N), np.int32(K)], None, 2


@pytest.mark.parametrize("name", ["subgroup", "gemm_bf16_wg", "gemm_any_bf16_plain",
                                  "gemm_any_bf16"])
def test_bf16_kernel_on_vulkan(bf16_vulkan, name: str) -> None:
    from coopdialect import api
    from coopdialect.runtime import run_kernel

    text, kernel, bufs, grid, out = _case(name)
    want = [b.copy() for b in bufs]
    api.run_kernel(api.parse(text, name), kernel, want, grid)
    got = [b.copy() for b in bufs]
    run_kernel(api.parse(text, name), kernel, got, grid, bf16_vulkan)
    w, g = want[out].astype(np.float64), got[out].astype(np.float64)
    assert np.count_nonzero(w) > w.size // 2, "the interpreter wrote too few outputs"
    if name != "gemm_any_bf16":  # every buffer, byte for byte
        arrays = [i for i, b in enumerate(bufs) if isinstance(b, np.ndarray)]
        bad, size = differing_bytes([got[i] for i in arrays], dict(enumerate(want[i] for i in arrays)))
        assert bad == 0, f"{name}: {bad} of {size} bytes differ from the interpreter's"
        return
    a, bt, bias = (b.astype(np.float64) for b in bufs[:2] + bufs[3:4])
    x = np.abs(a @ bt.T + bias)
    step = 2.0 ** (np.floor(np.log2(np.maximum(np.maximum(abs(w), abs(g)), 2.0 ** -126))) - 7)
    far = np.abs(w - g) > step + x * 2.0 ** -20
    assert not far.any(), (f"{np.count_nonzero(far)} outputs beyond erf's bound and a bf16 step: "
                           f"device {g[far][:4]}, interpreter {w[far][:4]}")
