"""The Vulkan runner (coopdialect/runtime/vulkan_ctypes.py) apart from coopdialect's compiler, on
shaders glslang compiled (tests/data/trivial.spv, coopmat_khr_f16_f32.spv, from the .comp files
beside them): results against numpy in both memory modes, push constants, timestamps, the
device's KHR cooperative-matrix table, and the refusal of malformed SPIR-V."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
DATA = Path(__file__).resolve().parents[1] / "data"


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    return got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)


def test_device_reports_khr_cooperative_matrices(vulkan) -> None:
    from coopdialect.runtime.vulkan_ctypes import format_coopmat_table

    info = vulkan.ctx.device_info()
    table = info["cooperative_matrix_khr"]
    print(info["name"], info["driver_version"], info["api_version"])
    print(format_coopmat_table(table))
    assert table, "no VK_KHR_cooperative_matrix properties"


@pytest.mark.parametrize("memory", ["host", "device"])
def test_scalar_shader_with_push_constants(vulkan, memory: str) -> None:
    from coopdialect.runtime import vulkan_ctypes

    spv, n = (DATA / "trivial.spv").read_bytes(), 1000
    rng = np.random.default_rng(0)
    a = rng.integers(-8, 8, n).astype(np.float32)
    b = rng.integers(-8, 8, n).astype(np.float32)
    o = np.full(n + 24, -1.0, np.float32)  # the tail beyond n must stay untouched
    want = o.copy()
    want[:n] = a * b + np.arange(n, dtype=np.float32)
    pc = np.array([n], np.uint32).tobytes()
    ra, _, ro = vulkan.ctx.run_compute(spv, [a, b, o], ((n + 63) // 64, 1, 1),
                                       push_constants=pc, memory=memory)
    assert _same(ro, want) and _same(ra, a)
    if memory == "host":  # the module-level one-shot API
        outs = vulkan_ctypes.run_compute(spv, [a, b, o], ((n + 63) // 64, 1, 1),
                                         push_constants=pc)
        assert _same(outs[2], want)


@pytest.mark.parametrize("memory", ["host", "device"])
@pytest.mark.parametrize("m,n,k", [(16, 16, 16), (64, 48, 96)])
def test_khr_cooperative_matrix_shader(vulkan, m: int, n: int, k: int, memory: str) -> None:
    """16x16x16 f16 x f16 + f32 coopMatMulAdd tiles, D = A*B + C, exact on small integers."""
    spv = (DATA / "coopmat_khr_f16_f32.spv").read_bytes()
    rng = np.random.default_rng([m, n, k])
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = rng.integers(-8, 9, (m, n)).astype(np.float32)
    want = (a.astype(np.float32) @ b.astype(np.float32) + c).astype(np.float32)
    pc = np.array([m, n, k], np.uint32).tobytes()
    outs, ns = vulkan.ctx.run_compute(spv, [a, b, c, np.zeros((m, n), np.float32)],
                                      (n // 16, m // 16, 1), push_constants=pc, memory=memory,
                                      timing=True)
    print(f"gpu {ns:.0f} ns")
    assert _same(outs[3], want) and ns > 0


def test_malformed_spirv_is_refused(vulkan) -> None:
    with pytest.raises(ValueError):
        vulkan.ctx.run_compute(b"\x00" * 20, [np.zeros(4, np.float32)], (1, 1, 1))
