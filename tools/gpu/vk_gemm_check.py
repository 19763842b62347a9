"""The example GEMMs through Vulkan on the H200 against the interpreter, on exact and on random-float data.

    python3 tools/gpu/vk_gemm_check.py [--out D]     # on the GPU (coopdialect installed there)

Each case compiles an example with a pipeline (`convert-coop-to-spirv{flavor=khr|nv}`, or
legalize-coop-sizes first), runs it with coopdialect.runtime on the Vulkan device and the
interpreter on the same inputs (runtime.run_kernel(check=True)). Small-integer data (exactly
representable; s8 accumulators near the int32 limits so that sums wrap, KHR: low-order 32 bits)
must be bit-exact in every buffer. Uniform f16 data in [-1, 1] must agree within the rounding of
f16 products summed in f32 in another order: |gpu - interpreter| <= 1e-5 * K (far above one f32
ulp of the result, far below any error a wrong element or layout gives).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
LEGALIZE = "legalize-coop-sizes{target=h200-vulkan}"
CASES = [
    # (name, example, kernel, grid, pipeline, data kinds)
    ("gemm_f16_khr", "gemm_f16", (2, 2, 1), "convert-coop-to-spirv{flavor=khr}", ("int", "float")),
    ("gemm_f16_nv", "gemm_f16", (2, 2, 1), "convert-coop-to-spirv{flavor=nv}", ("int", "float")),
    ("gemm_s8_khr", "gemm_s8", (4, 2, 1), "convert-coop-to-spirv{flavor=khr}", ("int",)),
    ("gemm_s8_nv", "gemm_s8", (4, 2, 1), "convert-coop-to-spirv{flavor=nv}", ("int",)),
    # legalize-coop-sizes (docs/legalize.md): 64x64 matrices split into native tiles or flexible
    ("large_split", "gemm_f16_64_large", (1, 1, 1),
     "legalize-coop-sizes{target=h200-vulkan flexible=false}", ("int", "float")),
    ("large_flexible", "gemm_f16_64_large", (1, 1, 1), LEGALIZE, ("int",)),
    ("legalized_gemm_f16", "gemm_f16", (2, 2, 1), LEGALIZE, ("int",)),
    ("legalized_gemm_s8", "gemm_s8", (4, 2, 1), LEGALIZE, ("int",)),
]


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


def main(argv: list[str]) -> int:
    from coopdialect import api
    from coopdialect.runtime import open_device, run_kernel

    rng, lines, failures = np.random.default_rng(2026), [], 0
    with open_device("vulkan") as dev:
        lines.append(f"device: {dev.ctx.device_info()['name']}")
        for name, example, grid, pipeline, kinds in CASES:
            path = str(ROOT / "examples" / f"{example}.mlir")
            module = api.parse_file(path)
            fn = next(op for op in module.ops if getattr(op, "sym_name", None))
            shapes = [tuple(a.type.get_shape()) for a in fn.args]
            for data in kinds:
                bufs = _inputs(example.replace("_64_large", ""), shapes, rng, data)
                try:
                    r = run_kernel(module, example, bufs, grid, dev, pipeline=pipeline, check=True)
                    out = r.verdicts[-1]
                    bound = 1e-5 * shapes[0][1]
                    ok = r.passed if data == "int" else out.max_abs <= bound
                    detail = out.line() if data == "int" else (
                        f"%{out.name} {out.type}: max |gpu - interpreter| {out.max_abs:.3g} "
                        f"(bound {bound:.3g}), {out.differing}/{out.size} elements differ")
                except Exception as e:  # noqa: BLE001 - report it, go on
                    ok, detail = False, f"{type(e).__name__}: {e}"
                failures += not ok
                lines.append(f"[{'PASS' if ok else 'FAIL'}] {name}_{data}: {detail}")
    lines.append(f"{len(lines) - 1 - failures}/{len(lines) - 1} cases match the interpreter")
    sys.path.insert(0, str(Path(__file__).parent))
    from gpu_check_common import report

    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else None
    return report(lines, out, "vk_gemm_check.txt", failures)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
