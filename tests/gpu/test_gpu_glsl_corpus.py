"""glslang's compute shaders of tests/data/glsl/ on a GPU, two ways, each against a numpy model of
the GLSL (tests/glsl_corpus_cases.py): glslang's binary through Vulkan, and the same binary
raised (`raise-spirv-to-coop`, push constants bound) and lowered to PTX through CUDA. A shader
the H200's Vulkan cannot run (the Arm layouts) or whose raised IR has no PTX lowering (the
backend's one-line refusal, the list tests/test_glsl_corpus.py pins) is skipped with the reason.
"""

from __future__ import annotations

import functools

import pytest
from gpu_compare import differing_bytes

import glsl_corpus_cases as corpus

pytestmark = pytest.mark.gpu


@functools.lru_cache(maxsize=1)
def _cases() -> dict:
    return corpus.cases()


@pytest.mark.parametrize("name", list(corpus.CASES))
def test_glslang_binary_on_vulkan(vulkan, name: str) -> None:
    case, run = _cases()[name]
    if case.vulkan:
        pytest.skip(f"{name}: {case.vulkan}")
    for m in corpus.subgroup_rows_missing(name, vulkan.ctx.cooperative_matrix_properties()):
        print(f"no VkCooperativeMatrixPropertiesKHR row for {m}")
    got = corpus.vulkan_run(vulkan.ctx, name, run)
    bad, size = differing_bytes(got, run.expected)
    assert bad == 0, f"{name}: {bad} of {size} bytes differ from the model"


@pytest.mark.parametrize("name", list(corpus.CASES))
def test_raised_shader_through_ptx(cuda, name: str) -> None:
    from coopdialect import api
    from coopdialect.errors import CoopError
    from coopdialect.runtime import run_kernel

    _, run = _cases()[name]
    module, kernel = corpus.raised_module(name, run)
    try:
        api.compile_to_ptx(module.clone())
    except CoopError as e:
        pytest.skip(f"no PTX lowering: {str(e).splitlines()[0]}")
    got = [b.copy() for b in run.buffers]
    run_kernel(module, kernel, got, run.grid, cuda)
    bad, size = differing_bytes(got, run.expected)
    assert bad == 0, f"{name}: {bad} of {size} bytes differ from the model"
