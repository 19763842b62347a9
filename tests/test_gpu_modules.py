"""Every SPIR-V module that tests/gpu/test_gpu_tensor.py dispatches on a Vulkan GPU passes
spirv-val.

The GPU machine has no spirv-val; `tensor_cases.cases("vulkan")` is deterministic, so the same
modules (examples unfolded and folded, the random cases, the probes) are built and validated
here, and each random case's interpreter result is checked against the reference on the way.
"""

from __future__ import annotations

import tensor_cases
from validators import spirv_val

from coopdialect import api


def test_vulkan_tensor_modules_pass_spirv_val(tmp_path):
    cases = tensor_cases.cases("vulkan")
    for c in cases.values():
        module = api.parse(c.k.text, c.name)
        if c.pipeline:
            api.run_pipeline(module, c.pipeline)
        spirv_val(api.compile_to_spirv(module), tmp_path, f"{c.name}.spv")
    assert list(cases) == tensor_cases.names("vulkan")
    assert len(cases) == 2 * 4 + 60 + len(tensor_cases.probes())
