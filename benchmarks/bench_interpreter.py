"""Interpreter benchmark: `run_kernel` on the example GEMMs against hand-written numpy.

* f16 GEMM (`coopdialect.kernels.gemm_subgroup`, examples/gemm_f16.mlir at size N) at each size:
  `run_kernel` time divided by the time of a hand-written numpy loop over the same tiles in the
  same process (same workgroups, subgroups and K steps; each 16x16x16 multiply-add in float64
  rounded once to f32, which is the interpreter's documented mul_add). Goal <= 1.5, limit 3.
  The two results must be equal bit for bit (else the script exits 1).
* The sparse (`coopdialect.kernels.sparse_gemm`) and coopmat2 (`coopdialect.kernels.coopmat2_gemm`)
  GEMMs: `run_kernel` time alone (best of `--repeat`), at the sizes of `--other`.

    python benchmarks/bench_interpreter.py [--sizes 512,1024] [--other 256,1024] [--repeat 3]

Each figure is the best of `--repeat` runs. Run with PYTHONPATH pointing at another checkout to
time another interpreter (the numbers in docs/performance.md: before and after the lock-step
runner).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from coopdialect.context import make_context
from coopdialect.diagnostics import LocatingParser
from coopdialect.interpreter import run_kernel
from coopdialect.interpreter.sparse_mma import compress
from coopdialect.kernels.coopmat2_gemm import coopmat2_gemm_ir
from coopdialect.kernels.gemm_subgroup import gemm_f16_ir
from coopdialect.kernels.sparse_gemm import random_sparse_24, sparse_gemm_ir


def parse(text: str, name: str):
    module = LocatingParser(make_context(), text, name).parse_module()
    module.verify()
    return module


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def numpy_gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    """The example kernel by hand: per workgroup (64x64 of C), per subgroup (a 32x32 quadrant
    as 2x2 16x16 accumulators), per K step of 16: four tile multiply-adds, C updated in place."""
    m, k = a.shape
    n = b.shape[1]
    for wy in range(m // 64):
        for wx in range(n // 64):
            for sg in range(4):
                r0 = wy * 64 + (sg // 2) * 32
                c0 = wx * 64 + (sg % 2) * 32
                acc = [[c[r0 + 16 * i:r0 + 16 * i + 16, c0 + 16 * j:c0 + 16 * j + 16]
                        for j in range(2)] for i in range(2)]
                for kk in range(0, k, 16):
                    ta = [a[r0 + 16 * i:r0 + 16 * i + 16, kk:kk + 16].astype(np.float64)
                          for i in range(2)]
                    tb = [b[kk:kk + 16, c0 + 16 * j:c0 + 16 * j + 16].astype(np.float64)
                          for j in range(2)]
                    for i in range(2):
                        for j in range(2):
                            acc[i][j] = (ta[i] @ tb[j] + acc[i][j]).astype(np.float32)
                for i in range(2):
                    for j in range(2):
                        c[r0 + 16 * i:r0 + 16 * i + 16, c0 + 16 * j:c0 + 16 * j + 16] = acc[i][j]


def bench_gemm(size: int, repeat: int) -> tuple[float, float, bool]:
    rng = np.random.default_rng(size)
    a = rng.standard_normal((size, size)).astype(np.float16)
    b = rng.standard_normal((size, size)).astype(np.float16)
    c0 = rng.standard_normal((size, size)).astype(np.float32)
    module = parse(gemm_f16_ir(size, size, size), f"gemm_{size}.mlir")
    grid = (size // 64, size // 64, 1)
    c_int, c_np = c0.copy(), c0.copy()
    t_int = best(lambda: (c_int.__setitem__(..., c0), run_kernel(module, "gemm_f16",
                                                                  [a, b, c_int], grid)), repeat)
    t_np = best(lambda: (c_np.__setitem__(..., c0), numpy_gemm(a, b, c_np)), repeat)
    return t_int, t_np, bool(np.array_equal(c_int.view(np.uint32), c_np.view(np.uint32)))


def bench_sparse(size: int, repeat: int) -> float:
    dense = random_sparse_24(np.random.default_rng(5), size, size)
    a, e = compress(None, dense, 4)
    bt = np.random.default_rng(6).integers(-3, 4, (size, size)).astype(np.float16)
    c = np.zeros((size, size), np.float32)
    module = parse(sparse_gemm_ir(size, size, size), f"sparse_{size}.mlir")
    return best(lambda: run_kernel(module, "sparse_gemm_f16", [a, e, bt, c],
                                   (size // 128, size // 64, 1)), repeat)


def bench_coopmat2(size: int, repeat: int) -> float:
    rng = np.random.default_rng(size)
    a = rng.integers(-2, 3, (size, size)).astype(np.float16)
    b = rng.integers(-2, 3, (size, size)).astype(np.float16)
    c = np.zeros((size, size), np.float32)
    module = parse(coopmat2_gemm_ir(size, size, size), f"coopmat2_{size}.mlir")
    return best(lambda: run_kernel(module, "gemm_coopmat2", [a, b, c],
                                   (size // 256, size // 128, 1)), repeat)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="512,1024", help="f16 GEMM sizes (multiples of 64)")
    p.add_argument("--other", default="256,1024",
                   help="sparse/coopmat2 sizes (multiples of 256); empty to skip")
    p.add_argument("--repeat", type=int, default=3)
    ns = p.parse_args()
    ok = True
    for s in (int(x) for x in ns.sizes.split(",") if x):
        t_int, t_np, same = bench_gemm(s, ns.repeat)
        ok &= same
        print(f"gemm_f16 {s}^3: run_kernel {t_int:.3f} s, numpy loop {t_np:.3f} s, "
              f"ratio {t_int / t_np:.2f}x, results {'identical' if same else 'DIFFER'}",
              flush=True)
    for s in (int(x) for x in ns.other.split(",") if x):
        print(f"sparse_gemm_f16 {s}^3: run_kernel {bench_sparse(s, ns.repeat):.3f} s", flush=True)
        print(f"gemm_coopmat2 {s}^3: run_kernel {bench_coopmat2(s, ns.repeat):.3f} s", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
