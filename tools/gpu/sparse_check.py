"""Sparse MMA on the H200 through coopdialect.runtime's CUDA device, against the interpreter; plus the benchmark.

    python3 tools/gpu/sparse_check.py [--count 120] [--perf 4096,8192] [--out D]    # on the GPU

Runs where coopdialect is installed (tools/gpu_wheelhouse.sh). `--count` random one-warpgroup
variants (tools/gpu/sparse_cases.py: every type family f16/bf16/tf32/e4m3/e5m2/s8/u8 and their
mixes, both selectors, SS and RS, negation, transposes, scale-d 0/1, satfinite, 1-3 chained
instructions, several N and memory layouts) and the sparse GEMM example
(examples/sparse_gemm_f16.mlir, whose interpreter result must also equal numpy's dense product).
Expected outputs come from the interpreter; a case passes when every byte of D equals it. With
`--perf`, tools/gpu/gen_sparse_gemm.py at each size is timed (runtime device events) against
torch.matmul (dense f16, cuBLAS) and torch's to_sparse_semi_structured (2:4, cuSPARSELt) in the
same process: dense-equivalent TFLOP/s (2*M*N*K / time).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_check_common import bytes_differ, options, report, run_cases, timed  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _cases(count: int):
    """(name, IR text, kernel, grid, buffers, family/selector group) of every case."""
    from sparse_cases import inputs, kernel_ir, random_variants

    rng = np.random.default_rng(2026)
    for v in random_variants(count, seed=7):
        yield v.name, kernel_ir(v), "sp", (1, 1, 1), inputs(v, rng)[0], f"{v.at} sel{v.sel}"
    # the example (256^3, 8 warpgroups, K loop of 4 steps) on random 2:4 data
    m = n = k = 256
    dense = _sparse_a(np.random.default_rng(5), m, k)
    vals, emeta = compress_24(dense)
    bt = np.random.default_rng(6).integers(-3, 4, (n, k)).astype(np.float16)
    c = np.random.default_rng(8).integers(-4, 5, (m, n)).astype(np.float32)
    dense_ref = c + dense.astype(np.float64) @ bt.T.astype(np.float64)
    yield ("example_sparse_gemm_f16_256", (ROOT / "examples" / "sparse_gemm_f16.mlir").read_text(),
           "sparse_gemm_f16", (n // 128, m // 64, 1), [vals, emeta, bt, c], "f16 sel0", dense_ref)


def _sparse_a(rng, m: int, k: int) -> np.ndarray:
    """Random 2:4 f16 matrix of small integers (exact in f32 sums)."""
    a = rng.integers(-3, 4, (m, k)).astype(np.float16).reshape(m, k // 4, 4)
    keep = np.argsort(rng.random((m, k // 4, 4)), axis=2)[:, :, :2]
    mask = np.zeros_like(a, dtype=bool)
    np.put_along_axis(mask, keep, True, axis=2)
    return np.where(mask, a, np.float16(0)).reshape(m, k)


def compress_24(dense: np.ndarray):
    """(values M x K/2, metadata M x K/4 uint8) of a 2:4 matrix — numpy only (runs on the GPU box)."""
    m, k = dense.shape
    ch = dense.reshape(m, k // 4, 4)
    order = np.sort(np.argsort(ch == 0, axis=2, kind="stable")[:, :, :2], axis=2)
    vals = np.take_along_axis(ch, order, axis=2).reshape(m, k // 2)
    return vals.copy(), (order[:, :, 0] | (order[:, :, 1] << 2)).astype(np.uint8)


def run(count: int, perf: list[int], out: Path | None) -> int:
    from coopdialect.kernels.sparse_gemm import sparse_gemm_ir

    from coopdialect import api
    from coopdialect.runtime import open_device, run_kernel

    class Case:
        def __init__(self, name, ir, kernel, grid, bufs, group, ref=None):
            self.name, self.ir, self.kernel, self.grid = name, ir, kernel, grid
            self.bufs, self.group, self.ref = bufs, group, ref

    def run_one(c: Case) -> str:
        want = [b.copy() for b in c.bufs]
        api.run_kernel(api.parse(c.ir, c.name), c.kernel, want, c.grid)
        if c.ref is not None and not np.array_equal(want[3], c.ref):
            return "ERROR interpreter differs from numpy's dense product"
        got = [b.copy() for b in c.bufs]
        run_kernel(api.parse(c.ir, c.name), c.kernel, got, c.grid, dev)
        bad, size = bytes_differ(got, {3: want[3]})
        return "PASS" if bad == 0 else f"FAIL ({bad} of {size} bytes differ)"

    with open_device("cuda") as dev:
        lines, passed, failed, fam_count = run_cases(
            [Case(*c) for c in _cases(count)], run_one, lambda c: c.group)
        lines.append("per family/selector: " + ", ".join(f"{k} {v[0]}/{v[1]}"
                                                          for k, v in sorted(fam_count.items())))
        lines.append(f"correctness: {passed}/{passed + failed} cases bit-exact vs the interpreter")
        for s in perf:
            try:
                prog = dev.compile(api.parse(sparse_gemm_ir(s, s, s, 128, 64), "gen"))
                lines.append(_perf(dev, s, prog))
            except Exception as e:  # noqa: BLE001
                lines.append(f"perf n={s}: ERROR {type(e).__name__}: {e}")
    return report(lines, out, "sparse_check.txt", failed)


def _perf(dev, n: int, prog) -> str:
    import torch
    from torch.sparse import SparseSemiStructuredTensor, to_sparse_semi_structured

    dense = _sparse_a(np.random.default_rng(1), n, n)
    vals, emeta = compress_24(dense)
    a = torch.from_numpy(dense).cuda()
    bt = torch.randint(-3, 4, (n, n), device="cuda").half()  # B^T, N x K
    b = bt.t().contiguous()
    tv, te = torch.from_numpy(vals).cuda(), torch.from_numpy(emeta).cuda()
    c = torch.zeros((n, n), device="cuda", dtype=torch.float32)
    bufs, grid = [t.data_ptr() for t in (tv, te, bt, c)], (n // 128, n // 64, 1)
    torch.cuda.synchronize()
    dev.launch(prog, "sparse_gemm_f16", bufs, grid)
    exact = bool(torch.equal(c, a.float() @ b.float()))
    flop = 2.0 * n ** 3
    reps = 10 if n <= 4096 else 4
    t_sp = float(np.median(dev.time(prog, "sparse_gemm_f16", bufs, grid, reps)))
    t_dense = timed(lambda: torch.matmul(a, b), reps)
    SparseSemiStructuredTensor._FORCE_CUTLASS = False
    a_sp = to_sparse_semi_structured(a)
    backend = type(a_sp).__name__
    sp_ok = bool(torch.equal((a_sp @ b).float(), (a @ b).float()))
    t_cslt = timed(lambda: a_sp @ b, reps)
    tf = [flop / t / 1e12 for t in (t_sp, t_dense, t_cslt)]
    return (f"perf n={n}: coop sparse PTX {tf[0]:.1f} TFLOP/s ({t_sp * 1e3:.3f} ms); "
            f"torch.matmul dense f16 {tf[1]:.1f} TFLOP/s ({t_dense * 1e3:.3f} ms); "
            f"to_sparse_semi_structured [{backend}] {tf[2]:.1f} TFLOP/s ({t_cslt * 1e3:.3f} ms, "
            f"matches dense: {sp_ok}); ratio vs dense {tf[0] / tf[1]:.3f}, vs 2:4 library "
            f"{tf[0] / tf[2]:.3f}; coop result exact: {exact}")


if __name__ == "__main__":
    sys.exit(run(*options(sys.argv[1:], count=120)))
