"""Soak test of the interpreter's determinism: false data races and run-to-run differences.

    python tools/race_soak.py [--kernel-runs 1000] [--example-runs 200]

Runs a five-line kernel (a Workgroup-scope load, a barrier, a Workgroup-scope store;
128 invocations = 4 subgroups) `--kernel-runs` times and every example kernel of examples/
`--example-runs` times (random small-integer inputs, fixed per example), and counts per kernel:
runs that raised (every one is a false race or another spurious error: these kernels are
race-free and their inputs valid) and runs whose output bytes differ from the first run's.
Prints one line per kernel and a total; exits 1 if any count is non-zero. `soak(...)` is the
same as a function (the test suite calls it with small counts).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType

from coopdialect.context import make_context
from coopdialect.diagnostics import LocatingParser
from coopdialect.interpreter import InterpreterError, run_kernel
from coopdialect.interpreter.common import numpy_dtype
from coopdialect.interpreter.sparse_mma import compress
from coopdialect.kernels.sparse_gemm import random_sparse_24

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")

FIVE_LINE = """!x = !coop.matrix<64x32xf16, Workgroup, MatrixA>
func.func @k(%X: memref<2048xf16>, %Y: memref<2048xf16>) attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %z = arith.constant 0 : index
  %s = arith.constant 32 : index
  %x = coop.load %X[%z], %s, RowMajor : memref<2048xf16> -> !x
  "gpu.barrier"() : () -> ()
  coop.store %x, %Y[%z], %s, RowMajor : !x, memref<2048xf16>
  func.return
}
"""

# (file, kernel or None for the file's only kernel, grid as stated in the example's header)
EXAMPLE_GRIDS = [
    ("block_decode_load.mlir", "dequant_q4", (8, 4, 1)),
    ("block_decode_load.mlir", "gemm_q4", (2, 4, 1)),
    ("conv_patch_clamped.mlir", None, (4, 4, 1)),
    ("gemm_coopmat2_f16.mlir", None, (2, 2, 1)),
    ("gemm_f16.mlir", None, (2, 2, 1)),
    ("gemm_f16_64_large.mlir", None, (1, 1, 1)),
    ("gemm_s8.mlir", None, (4, 2, 1)),
    ("softmax_rows.mlir", None, (1, 4, 1)),
    ("sparse_gemm_f16.mlir", None, (2, 4, 1)),
]


def _parse(text: str, name: str):
    module = LocatingParser(make_context(), text, name).parse_module()
    module.verify()
    return module


def _kernel(module, wanted: str | None) -> func.FuncOp:
    (k,) = [f for f in module.walk()
            if isinstance(f, func.FuncOp) and "coop.workgroup_size" in f.attributes
            and (wanted is None or f.sym_name.data == wanted)]
    return k


def small_integer_buffers(kernel: func.FuncOp, seed: int,
                          given: dict[str, object] | None = None) -> list[object]:
    """Small integers for every memref argument of `kernel` (float sums stay exact; the Q4_0
    example's f16 scales, kept in i16 words, stay finite patterns so no NaN arithmetic).
    `given` maps an argument's name to its value (a scalar argument) or to the shape of its
    random data (a memref of dynamic size)."""
    rng = np.random.default_rng(seed)
    given = given or {}
    out: list[object] = []
    for a, t in zip(kernel.args, kernel.function_type.inputs.data):
        if not isinstance(t, MemRefType):
            out.append(given[a.name_hint])
            continue
        dt = numpy_dtype(t.element_type)
        shape = given.get(a.name_hint, t.get_shape())
        if dt.kind == "f" or dt.name == "bfloat16":
            out.append(rng.integers(-3, 4, shape).astype(dt))
        elif dt == np.int16:
            out.append(rng.integers(0, 0x3BFF, shape, endpoint=True).astype(dt))
        else:
            info = np.iinfo(dt)
            out.append(rng.integers(info.min, info.max, shape, endpoint=True).astype(dt))
    return out


def cases() -> list[tuple[str, object, str, tuple[int, int, int], list[np.ndarray]]]:
    """(label, module, kernel name, grid, inputs) of the five-line kernel and every example."""
    x = np.random.default_rng(10).integers(-8, 8, 2048).astype(np.float16)
    out = [("issue-10 five-line kernel", _parse(FIVE_LINE, "five_line.mlir"), "k", (1, 1, 1),
            [x, np.zeros(2048, np.float16)])]
    for i, (name, wanted, grid) in enumerate(EXAMPLE_GRIDS):
        path = os.path.join(EXAMPLES, name)
        module = _parse(open(path).read(), path)
        k = _kernel(module, wanted)
        inputs = small_integer_buffers(k, 100 + i)
        if "sparse" in name:  # valid 2:4 values and metadata
            dense = random_sparse_24(np.random.default_rng(5), 256, 256)
            inputs[0], inputs[1] = compress(None, dense, 4)
        out.append((f"{name}:{k.sym_name.data}", module, k.sym_name.data, grid, inputs))
    return out


def soak(kernel_runs: int, example_runs: int, report=None) -> dict[str, tuple[int, int, int]]:
    """{label: (runs, runs that raised, runs whose outputs differ from the first)}; the first
    error message of each kernel goes to `report` (a callable) if given."""
    results = {}
    for label, module, kernel, grid, inputs in cases():
        runs = kernel_runs if label.startswith("issue-10") else example_runs
        raised = differ = 0
        first: list[bytes] | None = None
        t0 = time.perf_counter()
        for _ in range(runs):
            bufs = [b.copy() for b in inputs]
            try:
                run_kernel(module, kernel, bufs, grid)
            except InterpreterError as e:
                if raised == 0 and report is not None:
                    report(f"  {label}: {e}")
                raised += 1
                continue
            got = [b.tobytes() for b in bufs]
            if first is None:
                first = got
            elif got != first:
                differ += 1
        results[label] = (runs, raised, differ)
        if report is not None:
            report(f"{label:45s} {runs:5d} runs  {raised} raised  {differ} differ  "
                   f"({time.perf_counter() - t0:.1f} s)")
    return results


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernel-runs", type=int, default=1000)
    p.add_argument("--example-runs", type=int, default=200)
    ns = p.parse_args()
    res = soak(ns.kernel_runs, ns.example_runs, report=lambda s: print(s, flush=True))
    bad = sum(r + d for _, r, d in res.values())
    total = sum(n for n, _, _ in res.values())
    print(f"total: {total} runs, {sum(r for _, r, _ in res.values())} raised (false races or "
          f"other errors), {sum(d for _, _, d in res.values())} with differing outputs")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
