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

import argparse
import json
import os
import subprocess
import sys

import numpy as np

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


def build(out: str, seed: int) -> None:
    sys.path.insert(0, os.getcwd())
    from coopdialect import api

    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(seed)
    manifest = []
    for name, path, kernel, grid, flavor in CASES:
        spv = api.compile_to_spirv(api.parse_file(path), flavor=flavor)
        spv_path = os.path.join(out, f"{name}.spv")
        with open(spv_path, "wb") as f:
            f.write(spv)
        subprocess.run(["spirv-val", "--target-env", "vulkan1.3", spv_path], check=True)
        for data in (("int", "float") if kernel == "gemm_f16" else ("int",)):
            bufs = _inputs(kernel, rng, data)
            expected = [b.copy() for b in bufs]
            api.run_kernel(api.parse_file(path), kernel, expected, grid)
            case = f"{name}_{data}"
            np.savez(os.path.join(out, f"{case}.npz"), *bufs, *expected)
            manifest.append({"case": case, "spv": f"{name}.spv", "entry": kernel, "grid": grid,
                             "buffers": len(bufs), "exact": data == "int",
                             "k": bufs[0].shape[1]})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"built {len(manifest)} cases in {out}")


def run(folder: str, out: str | None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from vk_runner import VulkanContext

    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    lines, failures = [], 0
    with VulkanContext() as ctx:
        info = ctx.device_info()
        lines.append(f"device: {info['name']}, driver {info['driver_version']}, Vulkan {info['api_version']}")
        for m in manifest:
            arrays = np.load(os.path.join(folder, m["case"] + ".npz"))
            n = m["buffers"]
            inputs = [arrays[f"arr_{i}"] for i in range(n)]
            expected = [arrays[f"arr_{i + n}"] for i in range(n)]
            with open(os.path.join(folder, m["spv"]), "rb") as f:
                spv = f.read()
            got = ctx.run_compute(spv, inputs, tuple(m["grid"]), entry=m["entry"])
            out_got, out_exp = got[-1], expected[-1]
            if m["exact"]:
                ok = np.array_equal(out_got, out_exp)
                detail = f"mismatches={int(np.count_nonzero(out_got != out_exp))}/{out_exp.size}"
            else:
                bound = 1e-5 * m["k"]
                diff = np.abs(out_got.astype(np.float64) - out_exp.astype(np.float64))
                ok = bool(diff.max() <= bound)
                detail = f"max|diff|={diff.max():.3g} (bound {bound:.3g}), exact elements={np.mean(diff == 0):.3f}"
            failures += not ok
            lines.append(f"[{'PASS' if ok else 'FAIL'}] {m['case']}: {out_exp.shape} {out_exp.dtype} {detail}")
    lines.append(f"{len(manifest) - failures}/{len(manifest)} cases match the interpreter")
    text = "\n".join(lines)
    print(text)
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "vk_gemm_check.txt"), "w") as f:
            f.write(text + "\n")
    return 1 if failures else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("folder")
    b.add_argument("--seed", type=int, default=2026)
    r = sub.add_parser("run")
    r.add_argument("folder")
    r.add_argument("--out")
    args = ap.parse_args()
    if args.cmd == "build":
        build(args.folder, args.seed)
    else:
        sys.exit(run(args.folder, args.out))


if __name__ == "__main__":
    main()
