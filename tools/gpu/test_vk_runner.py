#!/usr/bin/env python3
"""GPU check of the Vulkan runner, coopdialect/runtime/vulkan_ctypes.py (a script for the GPU machine,
not part of pytest), on shaders that glslang compiled: the runner apart from coopdialect's compiler.

  (a) prints device_info() and the KHR cooperative-matrix table,
  (b) runs testdata/trivial.spv (out[i] = a[i]*b[i] + i) and compares with numpy,
  (c) runs testdata/coopmat_khr_f16_f32.spv (16x16x16 f16*f16+f32 coopMatMulAdd tiles,
      D = A*B + C) on a single tile and on a 64x48x96 GEMM, exact on small-integer data,
      in both memory modes, plus a timing run.

Shaders were compiled with glslangValidator --target-env vulkan1.3 from the .comp
sources beside them.  Exit status 0 when every comparison matches.

Usage (GPU machine):  cd tools/gpu && python3 test_vk_runner.py [--validation]
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
from coopdialect.runtime import vulkan_ctypes as vk_runner  # noqa: E402
from coopdialect.runtime.vulkan_ctypes import VulkanContext, VulkanError, format_coopmat_table  # noqa: E402


def load(name):
    with open(os.path.join(HERE, "testdata", name), "rb") as f:
        return f.read()


def report(label, got, want):
    ok = got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64)).max() if got.size else 0.0
    print(f"[{'PASS' if ok else 'FAIL'}] {label}: shape={got.shape} dtype={got.dtype} "
          f"max|diff|={diff}")
    return ok


def main():
    validation = "--validation" in sys.argv
    ok = True
    with VulkanContext(validation=validation) as ctx:
        info = ctx.device_info()
        table = info.pop("cooperative_matrix_khr")
        nv = info.pop("cooperative_matrix_nv")
        flex = info.pop("cooperative_matrix_flexible_nv")
        feats = info.pop("features")
        print("== device_info ==")
        print(json.dumps(info, indent=1))
        for k, v in feats.items():
            print(f"enabled features [{k}] ({len(v)}): {' '.join(v)}")
        print("== VK_KHR_cooperative_matrix properties ==")
        print(format_coopmat_table(table))
        print(f"== VK_NV_cooperative_matrix properties: {len(nv)} rows ==")
        for r in nv:
            print("  ", r)
        print(f"== VK_NV_cooperative_matrix2 flexible dimensions: {len(flex)} rows ==")
        for r in flex:
            print("  ", r)

        # (b) trivial shader
        print("== trivial.spv ==")
        spv = load("trivial.spv")
        n = 1000
        rng = np.random.default_rng(0)
        a = rng.integers(-8, 8, n).astype(np.float32)
        b = rng.integers(-8, 8, n).astype(np.float32)
        o = np.full(n + 24, -1.0, np.float32)   # tail beyond n must stay untouched
        want = o.copy()
        want[:n] = a * b + np.arange(n, dtype=np.float32)
        pc = np.array([n], np.uint32).tobytes()
        for mem in ("host", "device"):
            ra, rb, ro = ctx.run_compute(spv, [a, b, o], ((n + 63) // 64, 1, 1),
                                         push_constants=pc, memory=mem)
            ok &= report(f"trivial memory={mem}", ro, want)
            ok &= report(f"trivial memory={mem} inputs unchanged", ra, a)
        # module-level one-shot API
        outs = vk_runner.run_compute(spv, [a, b, o], ((n + 63) // 64, 1, 1), push_constants=pc)
        ok &= report("trivial via run_compute()", outs[2], want)

        # (c) KHR cooperative matrix 16x16x16 f16*f16 + f32
        if not table:
            print("[FAIL] no VK_KHR_cooperative_matrix properties")
            ok = False
        else:
            print("== coopmat_khr_f16_f32.spv ==")
            spv = load("coopmat_khr_f16_f32.spv")
            for (M, N, K) in [(16, 16, 16), (64, 48, 96)]:
                A = rng.integers(-3, 4, (M, K)).astype(np.float16)
                B = rng.integers(-3, 4, (K, N)).astype(np.float16)
                C = rng.integers(-8, 9, (M, N)).astype(np.float32)
                D = np.zeros((M, N), np.float32)
                want = (A.astype(np.float32) @ B.astype(np.float32) + C).astype(np.float32)
                pc = np.array([M, N, K], np.uint32).tobytes()
                for mem in ("host", "device"):
                    outs, ns = ctx.run_compute(spv, [A, B, C, D], (N // 16, M // 16, 1),
                                               push_constants=pc, memory=mem, timing=True)
                    ok &= report(f"coopmat {M}x{N}x{K} memory={mem} (gpu {ns:.0f} ns)",
                                 outs[3], want)
            # timing mode on a larger problem (same naive one-tile-per-subgroup kernel)
            M = N = K = 1024
            A = rng.integers(-2, 3, (M, K)).astype(np.float16)
            B = rng.integers(-2, 3, (K, N)).astype(np.float16)
            C = rng.integers(-8, 9, (M, N)).astype(np.float32)
            D = np.zeros((M, N), np.float32)
            want = (A.astype(np.float32) @ B.astype(np.float32) + C).astype(np.float32)
            outs, times = ctx.benchmark(spv, [A, B, C, D], (N // 16, M // 16, 1), repeat=10,
                                        warmup=2,
                                        push_constants=np.array([M, N, K], np.uint32).tobytes())
            ok &= report(f"coopmat {M}x{N}x{K} benchmark result", outs[3], want)
            med = float(np.median(times))
            print(f"benchmark {M}^3 naive coopmat: median {med / 1e3:.1f} us over {len(times)} "
                  f"dispatches ({2 * M * N * K / med / 1e3:.2f} TFLOP/s); "
                  f"all: {[round(t / 1e3, 1) for t in times]}")

        # error path: malformed SPIR-V is rejected before it reaches the driver
        try:
            ctx.run_compute(b"\x00" * 20, [a], (1, 1, 1))
            print("[FAIL] garbage SPIR-V was accepted")
            ok = False
        except ValueError as e:
            print(f"[PASS] garbage SPIR-V rejected: {e}")

    print("ALL PASS" if ok else "SOME FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
