"""tests/gpu/test_gpu_math.py without a GPU: every module it dispatches passes spirv-val (Vulkan
cases) or ptxas (CUDA cases), as the GPU machine cannot check; and every case runs on the
interpreter as the device, which must be within half an ulp everywhere, while a device that
returns wrong values fails it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import math_cases as math_check
import numpy as np
from validators import ptxas, spirv_val

from coopdialect import api


def test_vulkan_modules_pass_spirv_val(tmp_path: Path) -> None:
    for c in math_check.cases(["vulkan"]):
        data = api.compile_to_spirv(api.parse(math_check.kernel_ir(c.op, c.t, 512, c.flags), c.name))
        spirv_val(data, tmp_path, f"{c.op}_{c.t}{c.flags}.spv")


def test_cuda_modules_pass_ptxas(tmp_path: Path) -> None:
    from coopdialect.context import make_context
    from coopdialect.passes.convert_coop_to_ptx import ConvertCoopToPtxPass
    from coopdialect.ptx.printer import emit_ptx

    bad = []
    for c in math_check.cases(["cuda"]):
        module = api.parse(math_check.kernel_ir(c.op, c.t, 512, c.flags), c.name)
        ConvertCoopToPtxPass().apply(make_context(), module)
        p = tmp_path / f"{c.op}_{c.t}{c.flags}.ptx"
        p.write_text(emit_ptx(module))
        r = subprocess.run([ptxas(), "-arch=sm_90a", str(p), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True)
        if r.returncode or r.stdout or r.stderr:
            bad.append(f"{p.name}: {r.stdout}{r.stderr}")
    assert not bad, "\n".join(bad)


def test_cases_pass_on_the_interpreter() -> None:
    from coopdialect.runtime import open_device

    cases = math_check.cases(["interp"])
    with open_device("interp") as dev:
        bad = [f"{c.name}: {line}" for c in cases for ok, line in [math_check.run_case(dev, c, 1024)]
               if not ok]
    assert not bad, "\n".join(bad)
    assert len(cases) == 50  # 16 ops x 3 types, erf and exp2 marked afn (f32)


def test_measure_fails_a_result_beyond_the_bound() -> None:
    """A CUDA exp result 4 ulp off (the bound is 3 away from a power of two) and a Vulkan one
    within (3 + 2|x|) ulp."""
    x = np.array([1.0, 2.0, -3.0], np.float32)
    exact = np.exp(x.astype(np.float64))
    from coopdialect.math_bounds import ulp
    off = (exact + 4 * ulp(exact, "f32")).astype(np.float32)
    ok, line = math_check.measure(math_check.Case("cuda", "math.exp", "f32"), [x], off)
    assert not ok and "of the bound '0.5 ulp + 2.5 ulp of 2^hi" in line
    ok, _ = math_check.measure(math_check.Case("vulkan", "math.exp", "f32"), [x], off)
    assert ok
