"""Compile -> run -> compare the PTX backend on a GPU, in two steps.

    # here (needs xdsl): compile every case and its exact expected output into a folder
    python tools/gpu/ptx_check.py build .ptxcheck [--count 60] [--perf 4096,8192]
    # on the GPU machine (numpy + CuPy [+ torch for --perf]; no xdsl): load, run, compare
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
import time
from pathlib import Path

import numpy as np


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


def _load(cp, ptx: str, kernel: str, tmp: Path):
    path = tmp / f"{kernel}_{abs(hash(ptx))}.ptx"
    path.write_text(ptx)
    return cp.RawModule(path=str(path)).get_function(kernel)


def run(folder: Path, out: Path | None) -> int:
    import cupy as cp

    meta = json.loads((folder / "cases.json").read_text())
    data = np.load(folder / "data.npz")
    tmp = Path("/tmp/ptxcheck")
    tmp.mkdir(exist_ok=True)
    lines, passed, failed, kinds = [], 0, 0, {}
    for c in meta["cases"]:
        try:
            fn = _load(cp, c["ptx"], c["kernel"], tmp)
            bufs = [cp.asarray(data[f"{c['name']}/in{i}"]) for i in range(c["nbuf"])]
            fn(tuple(c["grid"]), tuple(c["block"]), tuple(bufs))
            cp.cuda.Device().synchronize()
            bad = 0
            for i in c["outputs"]:
                got, want = cp.asnumpy(bufs[i]), data[f"{c['name']}/exp{i}"]
                bad += int(np.count_nonzero(got != want))
            status = "PASS" if bad == 0 else f"FAIL ({bad} bytes differ)"
        except Exception as e:  # noqa: BLE001 - report and go on
            status = f"ERROR {type(e).__name__}: {e}"
        ok = status == "PASS"
        passed += ok
        failed += not ok
        lines.append(f"{status:8s} {c['name']}")
        kind = c["name"].split("_")[0].rstrip("0123456789")  # gemm, mma, cv, ew, wgmma
        k_ok, k_all = kinds.get(kind, (0, 0))
        kinds[kind] = (k_ok + ok, k_all + 1)
    lines.append("by kind: " + ", ".join(f"{k} {a}/{b}" for k, (a, b) in kinds.items()))
    refs = sorted({c.get("reference", "numpy model") for c in meta["cases"]})
    lines.append(f"correctness: {passed}/{passed + failed} cases bit-exact vs "
                 f"{' / '.join(refs)}")
    for p in meta["perf"]:
        lines.append(_perf(cp, p, tmp))
    text = "\n".join(lines)
    print(text)
    if out is not None:
        (out / "ptx_check.txt").write_text(text + "\n")
    return 0 if failed == 0 else 1


def _perf(cp, p: dict, tmp: Path) -> str:
    import torch

    n = p["n"]
    fn = _load(cp, p["ptx"], p["kernel"], tmp)
    a = torch.randint(-2, 3, (n, n), device="cuda").half()
    b = torch.randint(-2, 3, (n, n), device="cuda").half()
    c = torch.zeros((n, n), device="cuda", dtype=torch.float32)
    ca, cb, cc = (cp.asarray(t) for t in (a, b, c))
    grid, block = tuple(p["grid"]), tuple(p["block"])
    fn(grid, block, (ca, cb, cc))
    torch.cuda.synchronize()
    ref = (a.float() @ b.float())
    exact = bool(torch.equal(c, ref))
    flop = 2.0 * n ** 3

    def timed(f, reps):
        f()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            f()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3 / reps

    reps = 10 if n <= 4096 else 4
    t_ptx = timed(lambda: fn(grid, block, (ca, cb, cc)), reps)
    t_blas = timed(lambda: torch.matmul(a, b), reps)
    tf_ptx, tf_blas = flop / t_ptx / 1e12, flop / t_blas / 1e12
    return (f"perf n={n}: coop PTX {tf_ptx:.1f} TFLOP/s ({t_ptx * 1e3:.3f} ms), torch.matmul f16 "
            f"{tf_blas:.1f} TFLOP/s ({t_blas * 1e3:.3f} ms), ratio {tf_ptx / tf_blas:.3f}; "
            f"first-run result exact: {exact}")


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "build":
        count = int(argv[argv.index("--count") + 1]) if "--count" in argv else 60
        perf = ([int(x) for x in argv[argv.index("--perf") + 1].split(",")]
                if "--perf" in argv else [])
        t = time.time()
        build(Path(argv[1]), count, perf)
        print(f"({time.time() - t:.1f} s)")
        return 0
    if len(argv) >= 2 and argv[0] == "run":
        out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else None
        return run(Path(argv[1]), out)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
