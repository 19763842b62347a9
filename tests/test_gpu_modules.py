"""Every SPIR-V module that tests/gpu/test_gpu_tensor.py dispatches on a Vulkan GPU passes
spirv-val.

The GPU machine has no spirv-val; the cases of tests/tensor_cases.py are deterministic, so the
same modules (examples unfolded and folded, the random cases, the probes) are built and
validated here, one test per group, and each random case's interpreter result is checked against
the reference on the way.
"""

from __future__ import annotations

import parsed
import pytest
import tensor_cases
from validators import spirv_val

from coopdialect import api


@pytest.mark.parametrize("group", tensor_cases.GROUPS["vulkan"])
def test_vulkan_tensor_modules_pass_spirv_val(tmp_path, group):
    cases = tensor_cases.group("vulkan", group)
    for c in cases:
        module = parsed.parse(c.k.text, c.k.source)  # the one the case's reference run parsed
        if c.pipeline:
            api.run_pipeline(module, c.pipeline)
        spirv_val(api.compile_to_spirv(module), tmp_path, f"{c.name}.spv")
    names = tensor_cases.names("vulkan")
    assert [c.name for c in cases] == [n for n in names if n.startswith(
        {"example": ("gemm", "conv", "softmax"), "random": "random_", "probe": "probe_"}[group])]
