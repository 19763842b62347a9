"""Run the example GEMMs' SPIR-V on the H200 through Vulkan and compare with the interpreter.

Two steps, because the GPU machine has no xDSL:

    python tools/gpu/vk_gemm_check.py build .vkcheck          # here: compile + interpret
    python3 tools/gpu/vk_gemm_check.py run .vkcheck [--out D]  # on the GPU: dispatch + compare

`build` compiles examples/gemm_f16.mlir and examples/gemm_s8.mlir with
`convert-coop-to-spirv{flavor=khr}` and `{flavor=nv}`, runs spirv-val on each module, draws random
inputs (small integers, exactly representable, and uniform floats for f16), runs the interpreter
on them and saves everything in one .npz per case. `run` dispatches each module with
tools/gpu/vk_runner.py and compares: integers and small-integer floats must match exactly; for
uniform f16 data the f32 results must agree within the rounding of f16 products summed in f32
(|gpu − interpreter| ≤ 1e-5·K·max|A||B|, far above one f32 ulp of the result but far below any
error that a wrong element or a wrong layout would give).
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vk_check_common import Case, cli, report, run_cases, save_case, write_manifest, write_spv  # noqa: E402

CASES = [
    # (name, example, kernel, grid, flavor)
    ("gemm_f16_khr", "examples/gemm_f16.mlir", "gemm_f16", (2, 2, 1), "khr"),
    ("gemm_f16_nv", "examples/gemm_f16.mlir", "gemm_f16", (2, 2, 1), "nv"),
    ("gemm_s8_khr", "examples/gemm_s8.mlir", "gemm_s8", (4, 2, 1), "khr"),
    ("gemm_s8_nv", "examples/gemm_s8.mlir", "gemm_s8", (4, 2, 1), "nv"),
]


def _inputs(kernel: str, rng: np.random.Generator, data: str) -> list[np.ndarray]:
    if kernel == "gemm_f16":
        if data == "int":
            a = rng.integers(-4, 5, (128, 256)).astype(np.float16)
            b = rng.integers(-4, 5, (256, 128)).astype(np.float16)
            c = rng.integers(-64, 65, (128, 128)).astype(np.float32)
        else:
            a = rng.uniform(-1, 1, (128, 256)).astype(np.float16)
            b = rng.uniform(-1, 1, (256, 128)).astype(np.float16)
            c = rng.uniform(-1, 1, (128, 128)).astype(np.float32)
        return [a, b, c]
    a = rng.integers(-128, 128, (64, 128)).astype(np.int8)
    bt = rng.integers(-128, 128, (64, 128)).astype(np.int8)
    # accumulators near the int32 limits, so that the sum wraps (KHR: low-order 32 bits)
    c = rng.integers(-(2**31), 2**31, (64, 64), dtype=np.int64).astype(np.int32)
    return [a, bt, c]


def build(args) -> None:
    from coopdialect import api

    out, rng, manifest = args.folder, np.random.default_rng(args.seed), []
    os.makedirs(out, exist_ok=True)
    for name, path, kernel, grid, flavor in CASES:
        spv = write_spv(out, name, api.compile_to_spirv(api.parse_file(path), flavor=flavor))
        for data in (("int", "float") if kernel == "gemm_f16" else ("int",)):
            bufs = _inputs(kernel, rng, data)
            expected = [b.copy() for b in bufs]
            api.run_kernel(api.parse_file(path), kernel, expected, grid)
            save_case(out, manifest, f"{name}_{data}", spv, kernel, grid, bufs, expected,
                      exact=data == "int", k=bufs[0].shape[1])
    write_manifest(out, manifest)


def _check(case: Case, got: list[np.ndarray]) -> tuple[str, str]:
    out_got, out_exp = got[-1], case.expected[-1]
    if case.meta["exact"]:
        ok = np.array_equal(out_got, out_exp)
        detail = f"mismatches={int(np.count_nonzero(out_got != out_exp))}/{out_exp.size}"
    else:
        bound = 1e-5 * case.meta["k"]
        diff = np.abs(out_got.astype(np.float64) - out_exp.astype(np.float64))
        ok = bool(diff.max() <= bound)
        detail = f"max|diff|={diff.max():.3g} (bound {bound:.3g}), exact elements={np.mean(diff == 0):.3f}"
    return ("PASS" if ok else "FAIL"), f": {out_exp.shape} {out_exp.dtype} {detail}"


def run(args) -> int:
    lines, failures = run_cases(args.folder, _check)
    lines.append(f"{len(lines) - 1 - failures}/{len(lines) - 1} cases match the interpreter")
    return report(lines, args.out, "vk_gemm_check.txt", failures)


if __name__ == "__main__":
    cli(__doc__, build, run)
