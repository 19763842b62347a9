"""Every SPIR-V module that tools/gpu/tensor_check.py dispatches on the H200 passes spirv-val.

The check builds its cases on the GPU machine, which has no spirv-val; `cases()` is
deterministic for its arguments, so the same modules (default seed and count, plus the probes)
are built and validated here.
"""

from __future__ import annotations

import sys
from pathlib import Path

from validators import spirv_val

from coopdialect import api

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "gpu"))
import tensor_check  # noqa: E402
from tensor_block_probe import probes  # noqa: E402


def test_tensor_check_modules_pass_spirv_val(tmp_path):
    names = []
    for c in tensor_check.cases(probes=True):
        module = api.parse(c.text, c.name)
        if c.pipeline:
            api.run_pipeline(module, c.pipeline)
        spirv_val(api.compile_to_spirv(module), tmp_path, f"{c.name}.spv")
        names.append(c.name)
    assert len(names) == 2 * 4 + 60 + len(probes())  # examples x (chain, folded), random, probes
