"""Run the DecodeFunc example (examples/block_decode_load.mlir: Q4_0 4-bit blocks with an f16 scale,
decoded by a function through a PhysicalStorageBuffer pointer) on the H200 through Vulkan and
compare with the interpreter.

    python tools/gpu/decode_check.py build .decodecheck          # here: compile + interpret
    python3 tools/gpu/decode_check.py run .decodecheck --out D   # on the GPU: dispatch + compare

`build` compiles the example unfolded and folded (fold-tensor-views), runs spirv-val, draws random
Q4_0 data (tests/test_decode_func.make_q4_0: nibbles 0..15, scales ±2^k, so every product and sum
is exact), runs the interpreter and also stores the numpy dequantization; `run` dispatches both
entry points (dequant_q4: W = decode(Q); gemm_q4: C = decode(Q)·B) and requires bit-exact
agreement with the interpreter (and reports the interpreter against numpy).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np

EXAMPLE = "examples/block_decode_load.mlir"
M, K, N = 64, 128, 32


def build(out: str, seed: int, sets: int) -> None:
    sys.path.insert(0, os.getcwd())
    sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
    from coopdialect import api
    from coopdialect.context import make_context
    from coopdialect.passes.fold_tensor_views import FoldTensorViewsPass
    from test_decode_func import make_q4_0

    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(seed)
    manifest = []
    for fold in (False, True):
        module = api.parse_file(EXAMPLE)
        if fold:
            FoldTensorViewsPass().apply(make_context(), module)
        spv = api.compile_to_spirv(module)
        name = "folded" if fold else "unfolded"
        spv_path = os.path.join(out, f"{name}.spv")
        with open(spv_path, "wb") as f:
            f.write(spv)
        subprocess.run(["spirv-val", "--target-env", "vulkan1.3", spv_path], check=True)
        for s in range(sets):
            q, w = make_q4_0(rng)
            b = rng.integers(-4, 5, (K, N)).astype(np.float16)
            for kernel, bufs, grid, ref in (
                    ("dequant_q4", [q, np.zeros((M, K), np.float16)], (K // 16, M // 16, 1), w),
                    ("gemm_q4", [q, b, np.zeros((M, N), np.float32)], (N // 16, M // 16, 1),
                     w.astype(np.float32) @ b.astype(np.float32))):
                expected = [x.copy() for x in bufs]
                api.run_kernel(api.parse_file(EXAMPLE), kernel, expected, grid)
                case = f"{kernel}_{name}_{s}"
                np.savez(os.path.join(out, f"{case}.npz"), *bufs, *expected, ref)
                manifest.append({"case": case, "spv": f"{name}.spv", "entry": kernel,
                                 "grid": grid, "buffers": len(bufs)})
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
            expected = arrays[f"arr_{2 * n - 1}"]
            ref = arrays[f"arr_{2 * n}"]
            with open(os.path.join(folder, m["spv"]), "rb") as f:
                spv = f.read()
            got = ctx.run_compute(spv, inputs, tuple(m["grid"]), entry=m["entry"])[-1]
            bits = lambda a: a.view(np.dtype(f"u{a.dtype.itemsize}"))  # noqa: E731
            ok = np.array_equal(bits(got), bits(expected))
            interp_ok = np.array_equal(bits(expected), bits(ref.astype(expected.dtype)))
            failures += not ok
            lines.append(f"[{'PASS' if ok else 'FAIL'}] {m['case']}: {expected.shape} {expected.dtype} "
                         f"bit mismatches={int(np.count_nonzero(bits(got) != bits(expected)))}/{expected.size}"
                         f"; interpreter == numpy: {interp_ok}")
    lines.append(f"{len(manifest) - failures}/{len(manifest)} cases match the interpreter bit-exactly")
    text = "\n".join(lines)
    print(text)
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "decode_check.txt"), "w") as f:
            f.write(text + "\n")
    return 1 if failures else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("folder")
    b.add_argument("--seed", type=int, default=2026)
    b.add_argument("--sets", type=int, default=3)
    r = sub.add_parser("run")
    r.add_argument("folder")
    r.add_argument("--out")
    args = ap.parse_args()
    if args.cmd == "build":
        build(args.folder, args.seed, args.sets)
    else:
        sys.exit(run(args.folder, args.out))


if __name__ == "__main__":
    main()
