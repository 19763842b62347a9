"""tests/gpu/test_gpu_spirv_read.py without a GPU: the glslang binaries it ships to the GPU
machine are what glslang makes of the shaders today, they and their rewrites pass spirv-val, and
its cases pass with the interpreter (on the raised binaries) standing in for Vulkan."""

from __future__ import annotations

import inspect

import numpy as np
import spirv_read_cases as check
from validators import glslang, grammar_defines, spirv_val
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, IntegerType, MemRefType, ModuleOp

from coopdialect import api
from coopdialect.spirv.reader import deserialize


def test_committed_glslang_binaries_are_up_to_date_and_valid(tmp_path):
    for name, (src, _) in check.CASES.items():
        fresh = glslang(src, *grammar_defines())
        assert check.binary_path(src).read_bytes() == fresh, (
            f"{check.binary_path(src)} is not glslang's binary of {src}: "
            "run `python tests/spirv_read_cases.py --regen`")
        spirv_val(fresh, tmp_path, f"{name}_glslang.spv")
        spirv_val(check.rewrite(fresh, src), tmp_path, f"{name}_rewrite.spv")


class InterpreterContext:
    """VulkanContext's surface that the cases use; a dispatch raises the binary
    (raise-spirv-to-coop) and interprets it, push constants becoming the kernel's trailing
    scalar arguments (4-byte members in declaration order, as std430 lays them out)."""

    def __init__(self, rows: list[dict]):
        self.dispatches = []
        self.rows = rows  # the VkCooperativeMatrixPropertiesKHR table the stand-in reports

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


def _rows_of_every_mul_add() -> list[dict]:
    """A table listing every multiply-add the shaders use (the interpreter implements them all)."""
    return [m for src, _ in check.CASES.values()
            for m in check.mul_adds(check.binary_path(src).read_bytes())]


def test_cases_pass_with_the_interpreter_as_the_device():
    from coopdialect.runtime import vulkan_ctypes

    real = inspect.signature(vulkan_ctypes.VulkanContext.run_compute).parameters
    assert {"entry", "push_constants"} <= set(real)  # the stand-in's surface is the real one's
    assert hasattr(vulkan_ctypes.VulkanContext, "cooperative_matrix_properties")
    ctx = InterpreterContext(_rows_of_every_mul_add())
    names = []
    for name, theirs, ours, inputs, expected, grid, push in check.prepared():
        undefined = check.undefined_buffers(name, theirs, ctx.cooperative_matrix_properties())
        assert undefined == set()
        got = check.dispatch(ctx, theirs, ours, inputs, grid, push)
        assert check.verdict(got, expected, undefined) is None, (name, check.verdict(got, expected))
        names.append(name)
    assert names == list(check.CASES)
    assert len(ctx.dispatches) == 2 * len(check.CASES)
    assert ctx.dispatches[0] == ("main", (4, 4, 1), np.array([64] * 3, np.uint32).tobytes())


def test_a_multiply_add_the_device_does_not_list_is_not_held_to_the_model():
    """With the H200's table (s8 only at 16x16x32 and 16x8x32, nothing saturating), gemm_select's
    s8 16x16x16 SaturatingAccumulation MulAdd has no row: its buffer is undefined there, the
    rest still compared. The table below is the one docs/spirv-reader.md quotes."""
    rows = []
    for m, n, k, ab, cr in [(16, 16, 16, "f16", "f16"), (16, 8, 16, "f16", "f16"), (16, 8, 8, "f16", "f16"),
                            (16, 16, 16, "f16", "f32"), (16, 8, 16, "f16", "f32"), (16, 8, 8, "f16", "f32"),
                            (16, 16, 32, "u8", "u32"), (16, 16, 32, "s8", "s32"), (16, 8, 32, "u8", "u32"),
                            (16, 8, 32, "s8", "s32"), (16, 16, 16, "bf16", "f32")]:
        rows.append(dict(M=m, N=n, K=k, A=ab, B=ab, C=cr, Result=cr, saturatingAccumulation=False,
                         scope="subgroup"))
    select_spv = check.binary_path("tests/data/raise_gemm_select.comp").read_bytes()
    (select,) = [m for m in check.mul_adds(select_spv) if m["A"] == "s8"]
    assert select == dict(M=16, N=16, K=16, A="s8", B="s8", C="s32", Result="s32", saturatingAccumulation=True,
                          scope="subgroup")
    assert check.missing_rows(select_spv, rows) == [select]
    undefined = {name: check.undefined_buffers(name, check.binary_path(src).read_bytes(), rows)
                 for name, (src, _) in check.CASES.items()}
    assert undefined == {n: ({4} if n == "gemm_select" else set()) for n in check.CASES}
    ctx = InterpreterContext(rows)
    for name, theirs, ours, inputs, expected, grid, push in check.prepared():
        if name == "gemm_select":
            got = check.dispatch(ctx, theirs, ours, inputs, grid, push)
            assert check.verdict(got, expected, undefined[name]) is None
            wrong = {"glslang": list(got["glslang"]), "rewrite": list(got["rewrite"])}
            for w in wrong:  # the undefined buffer is not held to the model; the others are
                wrong[w][4] = wrong[w][4] + 1
            assert check.verdict(wrong, expected, {4}) is None
            assert check.verdict(wrong, expected) == ("glslang != numpy model in buffer 4; "
                                                      "rewrite != numpy model in buffer 4")
            wrong["rewrite"][2] = wrong["rewrite"][2] + 1
            assert "rewrite != glslang in buffer 2" in check.verdict(wrong, expected, {4})


def test_verdict_names_what_differs():
    got = {"glslang": [np.zeros(4, np.float32), np.ones(2, np.float32)],
           "rewrite": [np.zeros(4, np.float32), np.array([1, -0.0], np.float32)]}
    assert check.verdict(got, {1: np.ones(2, np.float32)}) == (
        "rewrite != glslang in buffer 1; rewrite != numpy model in buffer 1")
    assert check.verdict(got, {0: np.zeros(4, np.float32)}) is None
