"""Compile -> run -> compare the PTX backend on a GPU, in two steps.

    # here (needs xdsl): compile every case and its exact expected output into a folder
    python tools/gpu/ptx_check.py build .ptxcheck [--count 60] [--perf 4096,8192]
    # on the GPU machine (coopdialect[cuda] [+ torch for --perf]): load, run, compare
    python tools/gpu/ptx_check.py run .ptxcheck

Cases: the two example GEMMs, randomized one-warp fragment cases (tools/gpu/ptx_cases.py:
load layouts, offsets and strides, every mma.sync type, element-wise ops, conversions, both
accumulate types), every element-wise op x element type once, and one-warpgroup wgmma GEMMs
(f16/bf16, several N, every A/B layout). `build` takes every case's expected outputs from the
coop interpreter (coopdialect.interpreter, run on the same IR text that is compiled) and
fails, naming the case, unless they also equal the independent numpy model of ptx_cases.py
bit for bit. On the GPU a case passes when every output byte equals the interpreter's. With
`--perf`, `run` also times the gemm_f16 example shape at each size against torch.matmul
(cuBLAS) in the same process and prints TFLOP/s and the ratio.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

# tools/gpu/ is sys.path[0] when this runs as a script (here and on the GPU machine)
from gpu_check_common import load, load_cases, main, report, run_case, run_cases, timed


def _raw(a: np.ndarray) -> np.ndarray:
    """The bytes of an array (bf16 and friends travel as raw bytes: numpy there lacks them)."""
    return np.ascontiguousarray(a).view(np.uint8)


def build(folder: Path, count: int, perf: list[int], extra: list = ()) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from coopdialect.tools.gpu.gen_gemm import gemm_f16_ir
    from coopdialect.tools.gpu.ptx_cases import (Case, check_model, compile_case,
                                                 elementwise_cases, example_cases,
                                                 fragment_cases, interpreter_outputs,
                                                 wgmma_cases)

    folder.mkdir(parents=True, exist_ok=True)
    cases = (example_cases() + fragment_cases(count) + elementwise_cases() + wgmma_cases()
             + list(extra))
    meta, arrays = [], {}
    for c in cases:
        ptx = compile_case(c)
        # The reference is the interpreter; the numpy model must agree (else a build error
        # naming the case: ModelMismatch, or the interpreter's own error).
        expected = interpreter_outputs(c)
        check_model(c, expected)
        meta.append({"name": c.name, "kernel": c.kernel, "grid": c.grid, "block": c.block,
                     "ptx": ptx, "nbuf": len(c.buffers), "outputs": sorted(expected),
                     "reference": "interpreter (= numpy model)"})
        for i, b in enumerate(c.buffers):
            arrays[f"{c.name}/in{i}"] = _raw(b)
        for i, e in expected.items():
            arrays[f"{c.name}/exp{i}"] = _raw(e)
    perf_meta = []
    for n in perf:
        case = Case(f"gemm_f16_{n}", gemm_f16_ir(n, n, n), "gemm_f16", (n // 64, n // 64, 1),
                    (128, 1, 1), [])
        perf_meta.append({"n": n, "kernel": "gemm_f16", "grid": case.grid, "block": case.block,
                          "ptx": compile_case(case)})
    (folder / "cases.json").write_text(json.dumps({"cases": meta, "perf": perf_meta}))
    np.savez_compressed(folder / "data.npz", **arrays)
    print(f"built {len(meta)} cases and {len(perf_meta)} perf kernels into {folder}; expected "
          f"outputs of all {len(meta)} from the interpreter, each equal to the numpy model")


def run(folder: Path, out: Path | None) -> int:
    from coopdialect.runtime import open_device

    meta, data = load_cases(folder)
    with open_device("cuda") as dev:
        lines, passed, failed, kinds = run_cases(
            meta["cases"],
            lambda c: run_case(dev, data, c, c["name"], tuple(c["block"]), c["outputs"],
                               "FAIL ({bad} bytes differ)"),
            lambda c: c["name"].split("_")[0].rstrip("0123456789"))  # gemm, mma, cv, ew, wgmma
        lines.append("by kind: " + ", ".join(f"{k} {a}/{b}" for k, (a, b) in kinds.items()))
        refs = sorted({c.get("reference", "numpy model") for c in meta["cases"]})
        lines.append(f"correctness: {passed}/{passed + failed} cases bit-exact vs "
                     f"{' / '.join(refs)}")
        for p in meta["perf"]:
            lines.append(_perf(dev, p))
    return report(lines, out, "ptx_check.txt", failed)


def _perf(dev, p: dict) -> str:
    import torch

    n = p["n"]
    prog = load(dev, p["ptx"], p["kernel"], p["block"])
    a = torch.randint(-2, 3, (n, n), device="cuda").half()
    b = torch.randint(-2, 3, (n, n), device="cuda").half()
    c = torch.zeros((n, n), device="cuda", dtype=torch.float32)
    bufs, grid = [t.data_ptr() for t in (a, b, c)], tuple(p["grid"])
    torch.cuda.synchronize()
    dev.launch(prog, p["kernel"], bufs, grid)
    exact = bool(torch.equal(c, a.float() @ b.float()))
    flop = 2.0 * n ** 3
    reps = 10 if n <= 4096 else 4
    t_ptx = float(np.median(dev.time(prog, p["kernel"], bufs, grid, reps)))
    t_blas = timed(lambda: torch.matmul(a, b), reps)
    tf_ptx, tf_blas = flop / t_ptx / 1e12, flop / t_blas / 1e12
    return (f"perf n={n}: coop PTX {tf_ptx:.1f} TFLOP/s ({t_ptx * 1e3:.3f} ms), torch.matmul f16 "
            f"{tf_blas:.1f} TFLOP/s ({t_blas * 1e3:.3f} ms), ratio {tf_ptx / tf_blas:.3f}; "
            f"first-run result exact: {exact}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], __doc__, build, run, default_count=60))
