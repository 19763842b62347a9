"""README command (1), after installation: the main job on the bundled f16 GEMM.

Compiles examples/gemm_f16.mlir to SPIR-V with coop-opt, validates it with spirv-val, interprets
the kernel on random inputs and checks the result against numpy. Exit status 0 when all agree.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from coopdialect import api

EXAMPLE = "examples/gemm_f16.mlir"
SPV = "out/gemm_f16.spv"


def main() -> int:
    os.makedirs("out", exist_ok=True)
    coop_opt = [sys.executable, "-m", "coopdialect.tools.coop_opt"]
    subprocess.run([*coop_opt, EXAMPLE, "-p", "convert-coop-to-spirv", "-t", "spirv", "-o", SPV], check=True)
    print(f"compiled  {EXAMPLE} -> {SPV} ({os.path.getsize(SPV)} bytes)")
    val = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", SPV], capture_output=True, text=True)
    if val.returncode != 0:
        print(val.stdout + val.stderr)
        return 1
    version = subprocess.run(["spirv-val", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    print(f"validated {SPV} with spirv-val --target-env vulkan1.3 ({version})")

    rng = np.random.default_rng(0)
    # Small integers: every f16 product and every f32 partial sum is exact, so the kernel must
    # reproduce numpy bit for bit whatever order the K loop accumulates in.
    a = rng.integers(-8, 9, (128, 256)).astype(np.float16)
    b = rng.integers(-8, 9, (256, 128)).astype(np.float16)
    c = rng.integers(-100, 101, (128, 128)).astype(np.float32)
    out = c.copy()
    api.run_kernel(api.parse_file(EXAMPLE), "gemm_f16", [a, b, out], grid=(2, 2, 1))
    reference = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
    mismatches = int(np.count_nonzero(out != reference))
    print(f"interpreted gemm_f16 on a 2x2 grid of 128-invocation workgroups: C = A·B + C, "
          f"M=N=128, K=256")
    print(f"check vs numpy (float64 matmul of the f16 inputs, rounded to f32): "
          f"{out.size - mismatches}/{out.size} elements bit-exact -> {'OK' if not mismatches else 'MISMATCH'}")
    return 0 if not mismatches else 1


if __name__ == "__main__":
    sys.exit(main())
