"""tools/gpu/spirv_read_check.py without a GPU: the glslang binaries it ships to the GPU machine
are what glslang makes of the shaders today, they and their rewrites pass spirv-val, and the
check itself passes with the interpreter (on the raised binaries) standing in for Vulkan."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import numpy as np
from validators import spirv_tool, spirv_val
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, IntegerType, MemRefType, ModuleOp

from coopdialect import api
from coopdialect.spirv.reader import deserialize

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "gpu"))
import spirv_read_check as check  # noqa: E402


def test_committed_glslang_binaries_are_up_to_date_and_valid(tmp_path):
    for name, (src, _) in check.CASES.items():
        fresh = check.compile_glslang(src, tmp_path / f"{name}.spv", spirv_tool("glslangValidator"))
        assert check.binary_path(src).read_bytes() == fresh, (
            f"{check.binary_path(src)} is not glslang's binary of {src}: "
            "run `python tools/gpu/spirv_read_check.py --regen`")
        spirv_val(fresh, tmp_path, f"{name}_glslang.spv")
        spirv_val(check.rewrite(fresh, src), tmp_path, f"{name}_rewrite.spv")


class InterpreterContext:
    """VulkanContext's surface that the check uses; a dispatch raises the binary
    (raise-spirv-to-coop) and interprets it, push constants becoming the kernel's trailing
    scalar arguments (4-byte members in declaration order, as std430 lays them out)."""

    dispatches: list = []

    def __init__(self, validation=None):
        pass

    rows: list = []  # the VkCooperativeMatrixPropertiesKHR table the stand-in reports

    def device_info(self):
        return {"name": "interpreter", "driver_version": "-", "api_version": "-"}

    def cooperative_matrix_properties(self):
        return self.rows

    def run_compute(self, spirv, buffers, grid, entry="main", *, push_constants=None):
        module = ModuleOp([deserialize(spirv)])
        api.run_pipeline(module, "raise-spirv-to-coop")
        (kernel,) = [op for op in module.body.block.ops if isinstance(op, func.FuncOp)
                     and "coop.workgroup_size" in op.attributes]
        scalars = [t for t in kernel.function_type.inputs.data if not isinstance(t, MemRefType)]
        words = np.frombuffer(push_constants or b"", np.uint32)
        assert len(words) == len(scalars)
        args = [b.copy() for b in buffers]
        for t, w in zip(scalars, words):
            assert isinstance(t, Float32Type | IntegerType) and t.bitwidth == 32
            args.append(float(w.view(np.float32)) if isinstance(t, Float32Type) else int(w))
        api.run_kernel(module, kernel.sym_name.data, args, grid)
        self.dispatches.append((entry, grid, push_constants))
        return args[:len(buffers)]

    def close(self):
        pass


def test_check_passes_with_the_interpreter_as_the_device(monkeypatch, tmp_path):
    from coopdialect.runtime import vulkan_ctypes

    real = inspect.signature(vulkan_ctypes.VulkanContext.run_compute).parameters
    assert {"entry", "push_constants"} <= set(real)  # the stand-in's surface is the real one's
    assert all(hasattr(vulkan_ctypes.VulkanContext, n) for n in ("device_info", "close"))
    monkeypatch.setattr(vulkan_ctypes, "VulkanContext", InterpreterContext)
    InterpreterContext.dispatches = []
    # the interpreter implements every multiply-add the shaders use
    InterpreterContext.rows = [m for src, _ in check.CASES.values() for m in check.mul_adds(
        check.binary_path(src).read_bytes())]
    assert check.main(["--out", str(tmp_path)]) == 0
    lines = (tmp_path / "spirv_read_check.txt").read_text().splitlines()
    assert lines[1:-1] == [f"[PASS] {n}: rewrite == glslang's binary: True; both == numpy model: True"
                           for n in check.CASES]
    assert lines[-1].startswith("5/5 cases")
    assert len(InterpreterContext.dispatches) == 2 * len(check.CASES)
    assert InterpreterContext.dispatches[0] == ("main", (4, 4, 1), np.array([64] * 3, np.uint32).tobytes())


def test_a_multiply_add_the_device_does_not_list_is_not_held_to_the_model(monkeypatch, tmp_path):
    """With the H200's table (s8 only at 16x16x32 and 16x8x32, nothing saturating), gemm_select's
    s8 16x16x16 SaturatingAccumulation MulAdd has no row: its buffer is reported as undefined
    there, the rest still compared. The table below is the one docs/spirv-reader.md quotes."""
    from coopdialect.runtime import vulkan_ctypes

    rows = []
    for m, n, k, ab, cr in [(16, 16, 16, "f16", "f16"), (16, 8, 16, "f16", "f16"), (16, 8, 8, "f16", "f16"),
                            (16, 16, 16, "f16", "f32"), (16, 8, 16, "f16", "f32"), (16, 8, 8, "f16", "f32"),
                            (16, 16, 32, "u8", "u32"), (16, 16, 32, "s8", "s32"), (16, 8, 32, "u8", "u32"),
                            (16, 8, 32, "s8", "s32"), (16, 16, 16, "bf16", "f32")]:
        rows.append(dict(M=m, N=n, K=k, A=ab, B=ab, C=cr, Result=cr, saturatingAccumulation=False,
                         scope="subgroup"))
    (select,) = [m for m in check.mul_adds(check.binary_path("tests/data/raise_gemm_select.comp").read_bytes())
                 if m["A"] == "s8"]
    assert select == dict(M=16, N=16, K=16, A="s8", B="s8", C="s32", Result="s32", saturatingAccumulation=True,
                          scope="subgroup")
    monkeypatch.setattr(vulkan_ctypes, "VulkanContext", InterpreterContext)
    InterpreterContext.dispatches = []
    InterpreterContext.rows = rows
    assert check.main(["--out", str(tmp_path)]) == 0
    lines = (tmp_path / "spirv_read_check.txt").read_text().splitlines()
    (line,) = [ln for ln in lines if "gemm_select" in ln]
    assert line.startswith("[PASS] gemm_select: rewrite == glslang's binary: True; both == numpy model: True; "
                           "no VkCooperativeMatrixPropertiesKHR row for the MulAdd"), line
    assert "buffers [4] undefined here, equal to the model anyway: True" in line
    assert sum("no VkCooperativeMatrixPropertiesKHR row" in ln for ln in lines) == 1
