"""The coopdialect.kernels GEMMs timed on the GPU against torch in the same process.

    python3 benchmarks/bench_kernels.py [--gemm 4096,8192] [--sparse 4096,8192]
        [--coopmat2-ptx 8192] [--coopmat2-vulkan 4096,8192] [--out DIR]     # on the GPU

Runs where coopdialect is installed (docs/runtime.md, "On a GPU"); M = N = K = each size:

* `--gemm`: the subgroup-scope f16 GEMM (`gemm_subgroup`, examples/gemm_f16.mlir's kernel) through
  PTX, against torch.matmul f16 (cuBLAS).
* `--sparse`: the one-warpgroup 2:4 GEMM (`sparse_gemm`, examples/sparse_gemm_f16.mlir's kernel,
  TN 128, K step 64) through PTX, against torch.matmul on the dense f16 matrix (cuBLAS) and
  torch's to_sparse_semi_structured (cuSPARSELt); dense-equivalent TFLOP/s (2·M·N·K / time).
* `--coopmat2-ptx`: the coopmat2 GEMM (`coopmat2_gemm`) through PTX against torch.matmul f16 in,
  f32 out; prints a `coopmat2_f16` row in the keys of benchmarks/results/ptx.json.
* `--coopmat2-vulkan`: the same GEMM through fold-tensor-views and Vulkan, with Undefined and
  ClampToEdge layouts, against torch.matmul; checked against torch's f32 product (relative
  Frobenius error).

The coop kernels are timed with the runtime's device events (median of the launches), the torch
baselines with CUDA events (gpu_timing.py). Every PTX kernel's first result on small-integer data
is compared with torch's exact product (`exact`). Correctness is the GPU tests' job
(tests/gpu/); this measures. Output lines are printed and, with `--out`, written to
DIR/bench_kernels.txt (+ bench_kernels.json).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import numpy as np

from gpu_timing import median_seconds, timed


def _tflops(n: int, seconds: float) -> float:
    return 2.0 * n ** 3 / seconds / 1e12


def gemm(dev, n: int) -> tuple[str, dict]:
    import torch

    from coopdialect import api
    from coopdialect.kernels.gemm_subgroup import gemm_f16_ir, grid

    prog = dev.compile(api.parse(gemm_f16_ir(n, n, n), f"gemm_subgroup({n})"))
    a = torch.randint(-2, 3, (n, n), device="cuda").half()
    b = torch.randint(-2, 3, (n, n), device="cuda").half()
    c = torch.zeros((n, n), device="cuda", dtype=torch.float32)
    bufs = [t.data_ptr() for t in (a, b, c)]
    torch.cuda.synchronize()
    dev.launch(prog, "gemm_f16", bufs, grid(n, n))
    exact = bool(torch.equal(c, a.float() @ b.float()))
    reps = 10 if n <= 4096 else 4
    t_coop = float(np.median(dev.time(prog, "gemm_f16", bufs, grid(n, n), reps)))
    t_blas = timed(lambda: torch.matmul(a, b), reps)
    row = {"kernel": "gemm_subgroup", "n": n, "tflops": _tflops(n, t_coop), "exact": exact,
           "baseline": "torch.matmul f16", "baseline_tflops": _tflops(n, t_blas)}
    return (f"gemm_subgroup n={n}: coop PTX {row['tflops']:.1f} TFLOP/s ({t_coop * 1e3:.3f} ms), "
            f"torch.matmul f16 {row['baseline_tflops']:.1f} TFLOP/s ({t_blas * 1e3:.3f} ms), "
            f"ratio {t_blas / t_coop:.3f}; first result exact: {exact}"), row


def sparse(dev, n: int) -> tuple[str, dict]:
    import torch
    from torch.sparse import SparseSemiStructuredTensor, to_sparse_semi_structured

    from coopdialect import api
    from coopdialect.interpreter.sparse_mma import compress
    from coopdialect.kernels.sparse_gemm import grid, random_sparse_24, sparse_gemm_ir

    prog = dev.compile(api.parse(sparse_gemm_ir(n, n, n, 128, 64), f"sparse_gemm({n})"))
    dense = random_sparse_24(np.random.default_rng(1), n, n)
    vals, meta = compress(None, dense, 4)
    a = torch.from_numpy(dense).cuda()
    bt = torch.randint(-3, 4, (n, n), device="cuda").half()  # B^T, N x K
    b = bt.t().contiguous()
    tv, te = torch.from_numpy(vals).cuda(), torch.from_numpy(meta).cuda()
    c = torch.zeros((n, n), device="cuda", dtype=torch.float32)
    bufs = [t.data_ptr() for t in (tv, te, bt, c)]
    torch.cuda.synchronize()
    dev.launch(prog, "sparse_gemm_f16", bufs, grid(n, n))
    exact = bool(torch.equal(c, a.float() @ b.float()))
    reps = 10 if n <= 4096 else 4
    t_sp = float(np.median(dev.time(prog, "sparse_gemm_f16", bufs, grid(n, n), reps)))
    t_dense = timed(lambda: torch.matmul(a, b), reps)
    SparseSemiStructuredTensor._FORCE_CUTLASS = False
    a_sp = to_sparse_semi_structured(a)
    backend = type(a_sp).__name__
    sp_ok = bool(torch.equal((a_sp @ b).float(), (a @ b).float()))
    t_lib = timed(lambda: a_sp @ b, reps)
    tf = [_tflops(n, t) for t in (t_sp, t_dense, t_lib)]
    row = {"kernel": "sparse_gemm", "n": n, "tflops": tf[0], "exact": exact,
           "dense_tflops": tf[1], "library": backend, "library_tflops": tf[2]}
    return (f"sparse_gemm n={n}: coop 2:4 PTX {tf[0]:.1f} TFLOP/s ({t_sp * 1e3:.3f} ms); "
            f"torch.matmul dense f16 {tf[1]:.1f} TFLOP/s ({t_dense * 1e3:.3f} ms); "
            f"to_sparse_semi_structured [{backend}] {tf[2]:.1f} TFLOP/s ({t_lib * 1e3:.3f} ms, "
            f"matches dense: {sp_ok}); ratio vs dense {tf[0] / tf[1]:.3f}, vs 2:4 library "
            f"{tf[0] / tf[2]:.3f}; coop result exact: {exact}"), row


def coopmat2_ptx(dev, n: int) -> tuple[str, dict]:
    import torch

    from coopdialect import api
    from coopdialect.kernels.coopmat2_gemm import coopmat2_gemm_ir, grid

    prog = dev.compile(api.parse(coopmat2_gemm_ir(n, n, n), f"coopmat2_gemm({n})"))
    a = torch.randint(-2, 3, (n, n), device="cuda").half()
    b = torch.randint(-2, 3, (n, n), device="cuda").half()
    c = torch.zeros((n, n), device="cuda", dtype=torch.float32)
    bufs = [t.data_ptr() for t in (a, b, c)]
    torch.cuda.synchronize()
    dev.launch(prog, "gemm_coopmat2", bufs, grid(n, n))
    exact = bool(torch.equal(c, a.float() @ b.float()))
    t_ptx = float(np.median(dev.time(prog, "gemm_coopmat2", bufs, grid(n, n), 4)))
    t_blas = timed(lambda: torch.matmul(a, b), 4)
    row = {"name": "coopmat2_f16", "device": torch.cuda.get_device_name(), "m": n, "n": n,
           "k": n, "dtype": "f16", "tflops": _tflops(n, t_ptx), "exact": exact,
           "command": f"python3 benchmarks/bench_kernels.py --coopmat2-ptx {n}  "
                      "(coopdialect.kernels.coopmat2_gemm IR, convert-coop-to-ptx)",
           "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
           "baseline": "torch.matmul (cuBLAS)", "baseline_tflops": _tflops(n, t_blas),
           "ratio": t_blas / t_ptx}
    return (f"coopmat2 PTX n={n}: {row['tflops']:.1f} TFLOP/s ({t_ptx * 1e3:.3f} ms), "
            f"torch.matmul f16 {row['baseline_tflops']:.1f} TFLOP/s ({t_blas * 1e3:.3f} ms), "
            f"ratio {row['ratio']:.3f}; first result exact: {exact}\n"
            f"result row for benchmarks/results/ptx.json: {json.dumps(row)}"), row


def coopmat2_vulkan(dev, n: int) -> list[tuple[str, dict]]:
    import torch

    from coopdialect import api
    from coopdialect.kernels.coopmat2_gemm import coopmat2_gemm_ir, grid

    out = []
    for clamp in ("Undefined", "ClampToEdge"):
        prog = dev.compile(api.parse(coopmat2_gemm_ir(n, n, n, clamp=clamp), f"coopmat2({n})"),
                           "fold-tensor-views")
        rng = np.random.default_rng(n)
        a = rng.uniform(-1, 1, (n, n)).astype(np.float16)
        b = rng.uniform(-1, 1, (n, n)).astype(np.float16)
        c = np.zeros((n, n), np.float32)
        bufs = [dev.upload(x) for x in (a, b, c)]
        vk_s = float(np.median(dev.time(prog, "gemm_coopmat2", bufs, grid(n, n), 10)))
        dev.launch(prog, "gemm_coopmat2", bufs, grid(n, n))
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        torch_s = median_seconds(lambda ta=ta, tb=tb: torch.matmul(ta, tb))
        ref = ta.float() @ tb.float()
        got = torch.from_numpy(dev.download(bufs[2], c)).cuda()
        rel = float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))
        row = {"kernel": "coopmat2_vulkan", "n": n, "clamp": clamp, "tflops": _tflops(n, vk_s),
               "torch_tflops": _tflops(n, torch_s), "ratio": torch_s / vk_s, "rel_err": rel}
        out.append((f"coopmat2 Vulkan n={n} ({clamp} layouts): {row['tflops']:.1f} TFLOP/s "
                    f"({vk_s * 1e3:.3f} ms), torch.matmul {row['torch_tflops']:.1f} TFLOP/s "
                    f"({torch_s * 1e3:.3f} ms), ratio {row['ratio']:.3f}; rel. error vs torch f32 "
                    f"product {rel:.2e}", row))
        del ta, tb, ref, got
        torch.cuda.empty_cache()
    return out


def main(argv: list[str] | None = None) -> int:
    from coopdialect.runtime import open_device

    def sizes(s: str) -> list[int]:
        return [int(x) for x in s.split(",") if x]

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--gemm", "--sparse", "--coopmat2-ptx", "--coopmat2-vulkan"):
        ap.add_argument(flag, type=sizes, default=[], metavar="N[,N...]")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    lines, rows = [], []
    if a.gemm or a.sparse or a.coopmat2_ptx:
        with open_device("cuda") as dev:
            for fn, ns in ((gemm, a.gemm), (sparse, a.sparse), (coopmat2_ptx, a.coopmat2_ptx)):
                for n in ns:
                    line, row = fn(dev, n)
                    print(line, flush=True)
                    lines.append(line)
                    rows.append(row)
    if a.coopmat2_vulkan:
        with open_device("vulkan") as dev:
            for n in a.coopmat2_vulkan:
                for line, row in coopmat2_vulkan(dev, n):
                    print(line, flush=True)
                    lines.append(line)
                    rows.append(row)
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "bench_kernels.txt").write_text("\n".join(lines) + "\n")
        (a.out / "bench_kernels.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
