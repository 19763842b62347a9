"""The example GEMMs through Vulkan against the interpreter, on exact and on random-float data.

Each case compiles an example with a pipeline (`convert-coop-to-spirv{flavor=khr|nv}`, or
legalize-coop-sizes first, docs/legalize.md), runs it on the Vulkan device and the interpreter
on the same inputs (runtime.run_kernel(check=True)). Small-integer data (exactly representable;
s8 accumulators near the int32 limits so that sums wrap, KHR: low-order 32 bits) must be
bit-exact in every buffer. Uniform f16 data in [-1, 1] must agree within the rounding of f16
products summed in f32 in another order: |gpu - interpreter| <= 1e-5 * K (far above one f32 ulp
of the result, far below any error a wrong element or layout gives).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
LEGALIZE = "legalize-coop-sizes{target=h200-vulkan}"
CASES = {  # name: (example, grid, pipeline, data kinds)
    "gemm_f16_khr": ("gemm_f16", (2, 2, 1), "convert-coop-to-spirv{flavor=khr}", ("int", "float")),
    "gemm_f16_nv": ("gemm_f16", (2, 2, 1), "convert-coop-to-spirv{flavor=nv}", ("int", "float")),
    "gemm_s8_khr": ("gemm_s8", (4, 2, 1), "convert-coop-to-spirv{flavor=khr}", ("int",)),
    "gemm_s8_nv": ("gemm_s8", (4, 2, 1), "convert-coop-to-spirv{flavor=nv}", ("int",)),
    # 64x64 matrices split into native tiles or flexible
    "large_split": ("gemm_f16_64_large", (1, 1, 1),
                    "legalize-coop-sizes{target=h200-vulkan flexible=false}", ("int", "float")),
    "large_flexible": ("gemm_f16_64_large", (1, 1, 1), LEGALIZE, ("int",)),
    "legalized_gemm_f16": ("gemm_f16", (2, 2, 1), LEGALIZE, ("int",)),
    "legalized_gemm_s8": ("gemm_s8", (4, 2, 1), LEGALIZE, ("int",)),
}
PARAMS = [(name, data) for name, (*_, kinds) in CASES.items() for data in kinds]


def _inputs(kernel: str, shapes, rng: np.random.Generator, data: str) -> list[np.ndarray]:
    if kernel == "gemm_s8":
        (m, k), (n, _), _ = shapes
        return [rng.integers(-128, 128, (m, k)).astype(np.int8),
                rng.integers(-128, 128, (n, k)).astype(np.int8),
                rng.integers(-(2**31), 2**31, (m, n), dtype=np.int64).astype(np.int32)]
    (m, k), (_, n), _ = shapes
    if data == "int":
        return [rng.integers(-4, 5, (m, k)).astype(np.float16),
                rng.integers(-4, 5, (k, n)).astype(np.float16),
                rng.integers(-64, 65, (m, n)).astype(np.float32)]
    return [rng.uniform(-1, 1, (m, k)).astype(np.float16),
            rng.uniform(-1, 1, (k, n)).astype(np.float16),
            rng.uniform(-1, 1, (m, n)).astype(np.float32)]


@pytest.mark.parametrize("name,data", PARAMS, ids=[f"{n}_{d}" for n, d in PARAMS])
def test_example_gemm_on_vulkan(vulkan, name: str, data: str) -> None:
    from coopdialect import api
    from coopdialect.runtime import run_kernel

    example, grid, pipeline, _ = CASES[name]
    module = api.parse_file(str(ROOT / "examples" / f"{example}.mlir"))
    fn = next(op for op in module.ops if getattr(op, "sym_name", None))
    shapes = [tuple(a.type.get_shape()) for a in fn.args]
    rng = np.random.default_rng([2026, PARAMS.index((name, data))])
    bufs = _inputs(example.replace("_64_large", ""), shapes, rng, data)
    r = run_kernel(module, example, bufs, grid, vulkan, pipeline=pipeline, check=True)
    if data == "int":
        assert r.passed, "\n".join(r.lines())
    else:
        out, bound = r.verdicts[-1], 1e-5 * shapes[0][1]
        assert out.max_abs <= bound, (f"%{out.name} {out.type}: max |gpu - interpreter| "
                                      f"{out.max_abs:.3g} (bound {bound:.3g}), "
                                      f"{out.differing}/{out.size} elements differ")
