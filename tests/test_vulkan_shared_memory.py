"""VulkanDevice.compile refuses a module whose Workgroup variables exceed the device's
maxComputeSharedMemorySize (a dispatch over the limit lost the H200's device instead of failing),
on a stand-in context with the H200's limits (48 KB, docs/vulkan.md): the staged Workgroup-tile
GEMM's three 48 KB slots are refused, a small staged GEMM is not."""

from __future__ import annotations

import re

import pytest

from coopdialect import api
from coopdialect.kernels import gemm_tiles
from coopdialect.runtime.device import DeviceError
from coopdialect.runtime.vulkan import VulkanDevice


class _Ctx:
    enabled_features = {"*"}
    enabled_extensions = set()

    def device_info(self) -> dict:
        return {"name": "stand-in", "limits": {"maxComputeSharedMemorySize": 49152}}


def _device(monkeypatch) -> VulkanDevice:
    import coopdialect.runtime.vulkan as vulkan

    monkeypatch.setattr(vulkan, "missing_features", lambda *a: [])
    dev = VulkanDevice.__new__(VulkanDevice)
    dev.ctx = _Ctx()
    return dev


def test_workgroup_memory_over_the_limit_is_refused(monkeypatch):
    dev = _device(monkeypatch)
    module = api.parse(gemm_tiles.gemm_wg_ir(512, 512, 512, "f16"), "gemm_f16_wg")
    with pytest.raises(DeviceError, match=r"Workgroup variables take (\d+) bytes, more than the "
                                          r"device's maxComputeSharedMemorySize of 49152") as e:
        dev.compile(module, "pipeline-coop-loads{stages=3}")
    # at least the three slots of the 128x64 A and 64x256 B f16 tiles
    assert int(re.search(r"take (\d+) bytes", str(e.value)).group(1)) >= 3 * (128 * 64 + 64 * 256) * 2


def test_workgroup_memory_within_the_limit_compiles(monkeypatch):
    dev = _device(monkeypatch)
    text = gemm_tiles.workgroup_gemm_ir(128, 128, 128, 64, 64, 32, 128)
    program = dev.compile(api.parse(text, "g"), "pipeline-coop-loads{stages=2}")
    assert program.binary[:4] == b"\x03\x02\x23\x07"  # the SPIR-V magic number, little-endian
