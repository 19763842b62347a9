"""tools/gpu/math_check.py without a GPU: every module it dispatches passes spirv-val (Vulkan cases)
or ptxas (CUDA cases), as the GPU machine cannot check; and the whole check runs on the
interpreter as the device, which must be within half an ulp everywhere, while a device that
returns wrong values fails it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from coopdialect import api
from validators import ptxas, spirv_val

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "gpu"))
import math_check  # noqa: E402


def test_vulkan_modules_pass_spirv_val(tmp_path: Path) -> None:
    for c in math_check.cases(["vulkan"]):
        data = api.compile_to_spirv(api.parse(math_check.kernel_ir(c.op, c.t, 512), c.name))
        spirv_val(data, tmp_path, f"{c.op}_{c.t}.spv")


def test_cuda_modules_pass_ptxas(tmp_path: Path) -> None:
    from coopdialect.context import make_context
    from coopdialect.passes.convert_coop_to_ptx import ConvertCoopToPtxPass
    from coopdialect.ptx.printer import emit_ptx

    bad = []
    for c in math_check.cases(["cuda"]):
        module = api.parse(math_check.kernel_ir(c.op, c.t, 512), c.name)
        ConvertCoopToPtxPass().apply(make_context(), module)
        p = tmp_path / f"{c.op}_{c.t}.ptx"
        p.write_text(emit_ptx(module))
        r = subprocess.run([ptxas(), "-arch=sm_90a", str(p), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True)
        if r.returncode or r.stdout or r.stderr:
            bad.append(f"{p.name}: {r.stdout}{r.stderr}")
    assert not bad, "\n".join(bad)


def test_check_passes_on_the_interpreter(tmp_path: Path) -> None:
    assert math_check.run(["interp"], 1024, tmp_path) == 0
    text = (tmp_path / "math_check.txt").read_text()
    assert "math_check: 48/48 cases within the documented bounds" in text


def test_measure_fails_a_result_beyond_the_bound() -> None:
    """A CUDA exp result 4 ulp off (the bound is 3) and a Vulkan one within (3 + 2|x|) ulp."""
    x = np.array([1.0, 2.0, -3.0], np.float32)
    exact = np.exp(x.astype(np.float64))
    from coopdialect.math_bounds import ulp
    off = (exact + 4 * ulp(exact, "f32")).astype(np.float32)
    ok, line = math_check.measure(math_check.Case("cuda", "math.exp", "f32"), [x], off)
    assert not ok and "of the bound '3 ulp'" in line
    ok, _ = math_check.measure(math_check.Case("vulkan", "math.exp", "f32"), [x], off)
    assert ok
