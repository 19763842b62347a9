"""Compile -> run -> compare the PTX backend on the H200 through coopdialect.runtime's CUDA device.

    python3 tools/gpu/ptx_check.py [--count 60] [--perf 4096,8192] [--out D]    # on the GPU

Runs where coopdialect is installed (tools/gpu_wheelhouse.sh). Cases: the two example GEMMs,
randomized one-warp fragment cases (tools/gpu/ptx_cases.py: load layouts, offsets and strides,
every mma.sync type, element-wise ops, conversions, both accumulate types), every element-wise op
x element type once, and one-warpgroup wgmma GEMMs (f16/bf16, several N, every A/B layout). Each
case's expected outputs come from the coop interpreter (run on the same IR text that is
compiled) and must also equal the independent numpy model of ptx_cases.py bit for bit (else the
case is an ERROR: ModelMismatch); on the GPU a case passes when every output byte equals the
interpreter's. With `--perf`, the gemm_f16 example shape is also timed at each size (runtime
device events) against torch.matmul (cuBLAS) in the same process: TFLOP/s and the ratio.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_check_common import bytes_differ, options, report, run_cases, timed  # noqa: E402


def run(count: int, perf: list[int], out: Path | None, extra: list = ()) -> int:
    from coopdialect.kernels.gemm_subgroup import gemm_f16_ir
    from ptx_cases import (check_model, elementwise_cases, example_cases, fragment_cases,
                           interpreter_outputs, wgmma_cases)

    from coopdialect import api
    from coopdialect.runtime import open_device, run_kernel

    def run_one(c) -> str:
        expected = interpreter_outputs(c)  # the reference; the numpy model must agree
        check_model(c, expected)
        bufs = [b.copy() for b in c.buffers]
        run_kernel(api.parse(c.mlir, c.name), c.kernel, bufs, c.grid, dev)
        bad, _ = bytes_differ(bufs, expected)
        return "PASS" if bad == 0 else f"FAIL ({bad} bytes differ)"

    cases = (example_cases() + fragment_cases(count) + elementwise_cases() + wgmma_cases()
             + list(extra))
    with open_device("cuda") as dev:
        lines, passed, failed, kinds = run_cases(
            cases, run_one, lambda c: c.name.split("_")[0].rstrip("0123456789"))
        lines.append("by kind: " + ", ".join(f"{k} {a}/{b}" for k, (a, b) in kinds.items()))
        lines.append(f"correctness: {passed}/{passed + failed} cases bit-exact vs "
                     "interpreter (= numpy model)")
        for n in perf:
            lines.append(_perf(dev, n, dev.compile(api.parse(gemm_f16_ir(n, n, n), "gen"))))
    return report(lines, out, "ptx_check.txt", failed)


def _perf(dev, n: int, prog) -> str:
    import torch

    a = torch.randint(-2, 3, (n, n), device="cuda").half()
    b = torch.randint(-2, 3, (n, n), device="cuda").half()
    c = torch.zeros((n, n), device="cuda", dtype=torch.float32)
    bufs, grid = [t.data_ptr() for t in (a, b, c)], (n // 64, n // 64, 1)
    torch.cuda.synchronize()
    dev.launch(prog, "gemm_f16", bufs, grid)
    exact = bool(torch.equal(c, a.float() @ b.float()))
    flop = 2.0 * n ** 3
    reps = 10 if n <= 4096 else 4
    t_ptx = float(np.median(dev.time(prog, "gemm_f16", bufs, grid, reps)))
    t_blas = timed(lambda: torch.matmul(a, b), reps)
    tf_ptx, tf_blas = flop / t_ptx / 1e12, flop / t_blas / 1e12
    return (f"perf n={n}: coop PTX {tf_ptx:.1f} TFLOP/s ({t_ptx * 1e3:.3f} ms), torch.matmul f16 "
            f"{tf_blas:.1f} TFLOP/s ({t_blas * 1e3:.3f} ms), ratio {tf_ptx / tf_blas:.3f}; "
            f"first-run result exact: {exact}")


if __name__ == "__main__":
    sys.exit(run(*options(sys.argv[1:], count=60)))
