"""The Workgroup-tile GEMMs, staged, on a GPU against the interpreter (docs/staging.md).

For each kernel of coopdialect.kernels.gemm_tiles (dense f16, dense bf16, 2:4 sparse f16, and on
CUDA an s8 one: `workgroup_gemm_ir` with a 128x128 tile, K step 128, B column-major) at
M = N = K = 512 and each stage count 2..4, the device runs the kernel after
`pipeline-coop-loads{stages=S}` and its own conversion, on small-integer inputs (valid 2:4
metadata for the sparse kernel); every byte of D must equal the interpreter's on the ORIGINAL,
unstaged kernel (which must itself equal numpy's product): the staging pass and the backend's
lowering of the staged form are checked together. CUDA runs all four kernels; Vulkan the dense
ones at a 64x64x32 tile of 128 invocations (`workgroup_gemm_ir`: the 128x256x64 tile's slots
take 48 KB each, over the driver's 48 KB of shared memory in all, which VulkanDevice refuses),
and checks that refusal (2:4 sparse MMA is PTX-only: wgmma.mma_async.sp).
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np
import pytest
from gpu_compare import differing_bytes

pytestmark = pytest.mark.gpu
SIZE = 512
KERNELS = ["gemm_f16_wg", "gemm_bf16_wg", "sparse_gemm_f16_wg"]
SMALL = "tile64_f16"  # workgroup_gemm_ir's 64x64x32 tile over 128 invocations (Vulkan)
META = [i | (j << 2) for i in range(4) for j in range(i + 1, 4)]  # the six valid 2:4 values


@functools.lru_cache(maxsize=None)
def _kernel(name: str):
    """(IR text, grid, inputs, the interpreter's D) of a kernel at SIZE³."""
    from coopdialect import api
    from coopdialect.kernels import gemm_tiles

    n = SIZE
    rng = np.random.default_rng(0)
    dt = ml_dtypes.bfloat16 if "bf16" in name else np.float16
    if name == "gemm_s8_tile":  # 8-bit operands (wgmma k32 into s32), K-major like 16-bit ones
        text = gemm_tiles.workgroup_gemm_ir(n, n, n, 128, 128, 128, 128, "i8", b_col=True,
                                            name=name)
        a = rng.integers(-128, 128, (n, n)).astype(np.int8)
        bt = rng.integers(-128, 128, (n, n)).astype(np.int8)
        inputs = [a, bt, np.zeros((n, n), np.int32)]
        grid = gemm_tiles.grid(n, n, 128, 128)
        want = [b.copy() for b in inputs]
        api.run_kernel(api.parse(text, name), name, want, grid)
        numpy_d = a.astype(np.int64) @ bt.astype(np.int64).T
        assert np.array_equal(want[-1], numpy_d.astype(np.int32)), \
            f"{name}: the interpreter differs from numpy's product"
        return text, grid, inputs, want[-1]
    if name == SMALL:
        text = gemm_tiles.workgroup_gemm_ir(n, n, n, 64, 64, 32, 128, name=SMALL)
        a = rng.integers(-3, 4, (n, n)).astype(dt)
        b = rng.integers(-3, 4, (n, n)).astype(dt)
        inputs = [a, b, np.zeros((n, n), np.float32)]
        want = [x.copy() for x in inputs]
        api.run_kernel(api.parse(text, name), name, want, gemm_tiles.grid(n, n, 64, 64))
        assert np.array_equal(want[-1], (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32))
        return text, gemm_tiles.grid(n, n, 64, 64), inputs, want[-1]
    if name.startswith("sparse"):
        text = gemm_tiles.sparse_gemm_wg_ir(n, n, n, "f16")
        a = rng.integers(-3, 4, (n, n // 2)).astype(dt)
        meta = rng.choice(META, (n, n // 4)).astype(np.uint8)
        # chunk c of a row keeps its values 2c, 2c+1 at positions 4c + (meta & 3), 4c + (meta >> 2)
        dense_a = np.zeros((n, n), np.float64)
        rows, chunks = np.indices(meta.shape)
        dense_a[rows, 4 * chunks + (meta & 3)] = a[:, 0::2]
        dense_a[rows, 4 * chunks + (meta >> 2)] = a[:, 1::2]
        inputs = [a, meta]
    else:
        text = gemm_tiles.gemm_wg_ir(n, n, n, "bf16" if "bf16" in name else "f16")
        a = dense_a = rng.integers(-3, 4, (n, n)).astype(dt)
        inputs = [a]
    bt = rng.integers(-3, 4, (n, n)).astype(dt)
    inputs += [bt, np.zeros((n, n), dt)]
    grid = gemm_tiles.grid(n, n)
    want = [b.copy() for b in inputs]
    api.run_kernel(api.parse(text, name), name, want, grid)
    numpy_d = (np.asarray(dense_a, np.float64) @ bt.astype(np.float64).T).astype(np.float32)
    assert np.array_equal(want[-1].astype(np.float32), numpy_d.astype(dt).astype(np.float32)), \
        f"{name}: the interpreter differs from numpy's product"
    return text, grid, inputs, want[-1]


def _check(dev, name: str, stages: int) -> None:
    from coopdialect import api
    from coopdialect.runtime import run_kernel

    text, grid, inputs, want = _kernel(name)
    got = [b.copy() for b in inputs]
    run_kernel(api.parse(text, name), name, got, grid, dev,
               pipeline=f"pipeline-coop-loads{{stages={stages}}}")
    bad, size = differing_bytes(got, {len(got) - 1: want})
    assert bad == 0, f"{name} {SIZE}³ stages={stages}: {bad} of {size} bytes of D differ"


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("name", KERNELS + ["gemm_s8_tile"])
def test_staged_gemm_on_cuda(cuda, name: str, stages: int) -> None:
    _check(cuda, name, stages)


@pytest.mark.parametrize("stages", [2, 3, 4])
def test_staged_gemm_on_vulkan(vulkan, stages: int) -> None:
    _check(vulkan, SMALL, stages)


@pytest.mark.parametrize("name", ["gemm_f16_wg", "gemm_bf16_wg"])
def test_staged_wide_tile_refused_on_vulkan(vulkan, name: str) -> None:
    from coopdialect import api
    from coopdialect.runtime.device import DeviceError

    text = _kernel(name)[0]
    with pytest.raises(DeviceError, match="more than the device's maxComputeSharedMemorySize"):
        vulkan.compile(api.parse(text, name), "pipeline-coop-loads{stages=2}")
