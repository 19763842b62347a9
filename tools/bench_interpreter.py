"""Time the interpreter on the example GEMMs: `python tools/bench_interpreter.py [repeats]`.

Prints, per example, the best wall time of `run_kernel` (seconds, parsing excluded) over
`repeats` runs (default 3), and checks each result against numpy (small integers, exact sums).
Used to measure the cost of the interpreter's race detection (docs/foundation.md, Interpreter).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from coopdialect.context import make_context
from coopdialect.diagnostics import LocatingParser
from coopdialect.interpreter import run_kernel

ROOT = Path(__file__).resolve().parent.parent


def _parse(name: str):
    path = ROOT / "examples" / name
    return LocatingParser(make_context(), path.read_text(), str(path)).parse_module()


def _sparse_inputs(rng):
    """(values, metadata, dense) of a random 2:4-sparse 256x256 f16 matrix of small integers."""
    dense = rng.integers(-3, 4, (256, 64, 4)).astype(np.float16)
    keep = np.sort(np.argsort(rng.random((256, 64, 4)), axis=2)[:, :, :2], axis=2)
    vals = np.take_along_axis(dense, keep, axis=2).reshape(256, 128)
    meta = (keep[:, :, 0] | (keep[:, :, 1] << 2)).astype(np.uint8)
    full = np.zeros_like(dense)
    np.put_along_axis(full, keep, np.take_along_axis(dense, keep, axis=2), axis=2)
    return vals, meta, full.reshape(256, 256)


def cases():
    """(file, kernel, buffers factory, grid, check(buffers)) of each example GEMM."""
    rng = np.random.default_rng(0)
    a16 = rng.integers(-3, 4, (128, 256)).astype(np.float16)
    b16 = rng.integers(-3, 4, (256, 128)).astype(np.float16)
    c32 = rng.integers(-3, 4, (128, 128)).astype(np.float32)
    a8 = rng.integers(-128, 128, (64, 128)).astype(np.int8)
    bt8 = rng.integers(-128, 128, (64, 128)).astype(np.int8)
    c8 = rng.integers(-9, 9, (64, 64)).astype(np.int32)
    at = rng.integers(-3, 4, (256, 128)).astype(np.float16)
    btt = rng.integers(-3, 4, (256, 128)).astype(np.float16)
    vals, meta, dense = _sparse_inputs(rng)
    bts = rng.integers(-3, 4, (256, 256)).astype(np.float16)
    cs = rng.integers(-3, 4, (256, 256)).astype(np.float32)
    f64 = np.float64
    return [
        ("gemm_f16.mlir", "gemm_f16", lambda: [a16, b16, c32.copy()], (2, 2, 1),
         lambda b: np.array_equal(b[2], c32 + a16.astype(f64) @ b16.astype(f64))),
        ("gemm_s8.mlir", "gemm_s8", lambda: [a8, bt8, c8.copy()], (4, 2, 1),
         lambda b: np.array_equal(b[2], c8 + a8.astype(np.int32) @ bt8.astype(np.int32).T)),
        ("gemm_coopmat2_f16.mlir", "gemm_coopmat2", lambda: [at, btt, np.zeros((256, 256),
         np.float32)], (2, 2, 1), lambda b: np.array_equal(b[2], at.astype(f64) @ btt.astype(f64).T)),
        ("sparse_gemm_f16.mlir", "sparse_gemm_f16", lambda: [vals, meta, bts, cs.copy()], (2, 4, 1),
         lambda b: np.array_equal(b[3], cs + dense.astype(f64) @ bts.T.astype(f64))),
    ]


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    for name, kernel, make, grid, check in cases():
        module = _parse(name)
        best = float("inf")
        for _ in range(repeats):
            bufs = make()
            t0 = time.perf_counter()
            run_kernel(module, kernel, bufs, grid)
            best = min(best, time.perf_counter() - t0)
            assert check(bufs), f"{name}: wrong result"
        print(f"{name:28s} {best:8.3f} s")


if __name__ == "__main__":
    main()
