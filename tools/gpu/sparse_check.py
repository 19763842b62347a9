"""Sparse MMA on the H200: compile here, run there, compare with the interpreter; plus the benchmark.

    python tools/gpu/sparse_check.py build .sparsecheck [--count 120] [--perf 4096,8192]
    python3 tools/gpu/sparse_check.py run .sparsecheck --out $OUT      # on the GPU machine

`build` (needs xdsl) compiles `--count` random one-warpgroup variants (tools/gpu/sparse_cases.py:
every type family f16/bf16/tf32/e4m3/e5m2/s8/u8 and their mixes, both selectors, SS and RS,
negation, transposes, scale-d 0/1, satfinite, 1-3 chained instructions, several N and memory
layouts) and the sparse GEMM example (examples/sparse_gemm_f16.mlir), and computes every expected
output with `coopdialect.interpreter` (run_kernel). A case passes when every byte of D equals the
interpreter's. With `--perf`, it also compiles tools/gpu/gen_sparse_gemm.py at each size; `run`
times it against torch.matmul (dense f16, cuBLAS) and torch's to_sparse_semi_structured (2:4,
cuSPARSELt) in the same process and reports dense-equivalent TFLOP/s (2*M*N*K / time).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

# tools/gpu/ is sys.path[0] when this runs as a script (here and on the GPU machine)
from gpu_check_common import load, load_cases, main, report, run_case, run_cases, timed

ROOT = Path(__file__).resolve().parents[2]


def _raw(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8).reshape(-1)


def build(folder: Path, count: int, perf: list[int]) -> None:
    sys.path.insert(0, str(ROOT / "tools" / "gpu"))
    from gen_sparse_gemm import sparse_gemm_ir
    from sparse_cases import inputs, kernel_ir, random_variants

    from coopdialect import api

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2026)
    meta, arrays = [], {}
    for v in random_variants(count, seed=7):
        ir = kernel_ir(v)
        ptx = api.compile_to_ptx(api.parse(ir, v.name))
        bufs, _ = inputs(v, rng)
        arrays.update({f"{v.name}/in{i}": _raw(b) for i, b in enumerate(bufs)})
        out = [b.copy() for b in bufs]
        api.run_kernel(api.parse(ir, v.name), "sp", out, grid=(1, 1, 1))
        arrays[f"{v.name}/exp3"] = _raw(out[3])
        meta.append({"name": v.name, "kernel": "sp", "grid": [1, 1, 1], "ptx": ptx, "nbuf": 4,
                     "family": v.at, "sel": v.sel})
    # the example (256^3, 8 warpgroups, K loop of 4 steps) on random 2:4 data
    src = (ROOT / "examples" / "sparse_gemm_f16.mlir").read_text()
    m = n = k = 256
    dense = _sparse_a(np.random.default_rng(5), m, k)
    vals, emeta = compress_24(dense)
    bt = np.random.default_rng(6).integers(-3, 4, (n, k)).astype(np.float16)
    c = np.random.default_rng(8).integers(-4, 5, (m, n)).astype(np.float32)
    bufs = [vals, emeta, bt, c]
    out = [b.copy() for b in bufs]
    api.run_kernel(api.parse(src, "sparse_gemm_f16.mlir"), "sparse_gemm_f16", out,
                   grid=(n // 128, m // 64, 1))
    assert np.array_equal(out[3], c + dense.astype(np.float64) @ bt.T.astype(np.float64))
    arrays.update({f"example/in{i}": _raw(b) for i, b in enumerate(bufs)})
    arrays["example/exp3"] = _raw(out[3])
    meta.append({"name": "example_sparse_gemm_f16_256", "kernel": "sparse_gemm_f16",
                 "grid": [n // 128, m // 64, 1], "ptx": api.compile_to_ptx(
                     api.parse(src, "sparse_gemm_f16.mlir")), "nbuf": 4, "family": "f16",
                 "sel": 0, "key": "example"})
    perf_meta = [{"n": s, "grid": [s // 128, s // 64, 1], "ptx": api.compile_to_ptx(
        api.parse(sparse_gemm_ir(s, s, s, 128, 64), "gen"))} for s in perf]
    (folder / "cases.json").write_text(json.dumps({"cases": meta, "perf": perf_meta}))
    np.savez_compressed(folder / "data.npz", **arrays)
    print(f"built {len(meta)} cases and {len(perf_meta)} perf kernels into {folder}")


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


def run(folder: Path, out: Path | None) -> int:
    from coopdialect.runtime import open_device

    meta, data = load_cases(folder)
    with open_device("cuda") as dev:
        lines, passed, failed, fam_count = run_cases(
            meta["cases"],
            lambda c: run_case(dev, data, c, c.get("key", c["name"]), (128, 1, 1), [3],
                               "FAIL ({bad} of {size} bytes differ)"),
            lambda c: f"{c['family']} sel{c['sel']}")
        lines.append("per family/selector: " + ", ".join(f"{k} {v[0]}/{v[1]}"
                                                          for k, v in sorted(fam_count.items())))
        lines.append(f"correctness: {passed}/{passed + failed} cases bit-exact vs the interpreter")
        for p in meta["perf"]:
            try:
                lines.append(_perf(dev, p))
            except Exception as e:  # noqa: BLE001
                lines.append(f"perf n={p['n']}: ERROR {type(e).__name__}: {e}")
    return report(lines, out, "sparse_check.txt", failed)


def _perf(dev, p: dict) -> str:
    import torch
    from torch.sparse import SparseSemiStructuredTensor, to_sparse_semi_structured

    n = p["n"]
    prog = load(dev, p["ptx"], "sparse_gemm_f16", (128, 1, 1))
    dense = _sparse_a(np.random.default_rng(1), n, n)
    vals, emeta = compress_24(dense)
    a = torch.from_numpy(dense).cuda()
    bt = torch.randint(-3, 4, (n, n), device="cuda").half()  # B^T, N x K
    b = bt.t().contiguous()
    tv, te = torch.from_numpy(vals).cuda(), torch.from_numpy(emeta).cuda()
    c = torch.zeros((n, n), device="cuda", dtype=torch.float32)
    bufs, grid = [t.data_ptr() for t in (tv, te, bt, c)], tuple(p["grid"])
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
    sys.exit(main(sys.argv[1:], __doc__, build, run, default_count=120))
