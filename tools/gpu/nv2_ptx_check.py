"""Cooperative-matrix-2 and tensor addressing through PTX on the H200, against the interpreter.

The PTX twin of tensor_check.py and decode_check.py (which run the same IR through Vulkan):

    # here (needs xdsl): compile every case, take its expected buffers from the interpreter
    python tools/gpu/nv2_ptx_check.py build .nv2ptxcheck [--count 60] [--perf 8192]
    # on the GPU machine (coopdialect.runtime's CUDA device [+ torch for --perf])
    python3 tools/gpu/nv2_ptx_check.py run .nv2ptxcheck [--out DIR]

Cases (68 + 12, as the Vulkan checks):
* the three tensor-addressing examples and the size-parametrized coopmat2 GEMM
  (gen_coopmat2_gemm.py at 256x512x128), each as written and after fold-tensor-views
  (inputs of tensor_check.py); every buffer is compared;
* `--count` random tensor-addressed loads and stores (tests/tensor_ir.py: every clamp mode in
  turn, layouts of Dim 1-5 with block sizes, slices and strides, views with permutations and
  clips; 16/32-row and -column subgroup matrices; the same draw as tensor_check.py), kept only
  where the interpreter agrees with the independent reference tests/tensor_reference.py;
* examples/block_decode_load.mlir (DecodeFunc, Q4_0), both kernels, unfolded and folded, 3
  random data sets (tests/test_decode_func.make_q4_0).

A case passes when every compared output byte equals the interpreter's (softmax's division is
IEEE `div.rn.f32` in PTX, so it is bit-exact too; the Vulkan driver deviations do not apply).
With `--perf N`, `run` also times the coopmat2 GEMM (gen_coopmat2_gemm.py, M = N = K = N)
against torch.matmul (f16 in, f32 out through cuBLAS) and prints a `coopmat2_f16` result row.
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_check_common import load, load_cases, main, report, run_case, run_cases, timed  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [  # (name, path, kernel, grid, invocations)
    ("gemm_coopmat2_f16", "examples/gemm_coopmat2_f16.mlir", "gemm_coopmat2", (2, 2, 1), 256),
    ("conv_patch_clamped", "examples/conv_patch_clamped.mlir", "conv_patch", (4, 4, 1), 32),
    ("softmax_rows", "examples/softmax_rows.mlir", "softmax_rows", (1, 4, 1), 32),
]
MODES = ["Undefined", "Constant", "ClampToEdge", "Repeat", "RepeatMirrored"]
DECODE = "examples/block_decode_load.mlir"


def _raw(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def compile_ptx(text: str, source: str, fold: bool = False) -> str:
    """PTX text of IR text (optionally after fold-tensor-views)."""
    from coopdialect import api
    from coopdialect.context import make_context
    from coopdialect.passes.convert_coop_to_ptx import ConvertCoopToPtxPass
    from coopdialect.passes.fold_tensor_views import FoldTensorViewsPass
    from coopdialect.ptx import emit_ptx

    module = api.parse(text, source)
    if fold:
        FoldTensorViewsPass().apply(make_context(), module)
    ConvertCoopToPtxPass().apply(make_context(), module)
    module.verify()
    return emit_ptx(module)


def example_sources() -> list[tuple[str, str, str, str, tuple, int]]:
    from gen_coopmat2_gemm import coopmat2_gemm_ir, grid as gemm_grid
    out = [(n, (ROOT / p).read_text(), p, k, g, t) for n, p, k, g, t in EXAMPLES]
    out.append(("gemm_coopmat2_gen", coopmat2_gemm_ir(256, 512, 128),
                "gen_coopmat2_gemm(256,512,128)", "gemm_coopmat2", gemm_grid(256, 512), 256))
    return out


def random_cases(count: int, seed: int, rng: np.random.Generator):
    """(name, IR text, [buf, mat], interpreter output buffers, description) of `count` cases."""
    import tensor_ir

    from coopdialect import api
    prng = random.Random(seed)
    out = []
    tried = 0
    while len(out) < count:
        tried += 1
        if tried > 50 * count:
            raise SystemExit(f"only {len(out)} valid random cases in {tried} draws")
        case = tensor_ir.random_case(prng)
        case["mode"] = MODES[len(out) % len(MODES)]
        case["rows"], case["cols"] = prng.choice([16, 32]), prng.choice([16, 32])
        case["dynamic"] = set()  # kernel arguments are memrefs only
        text, _ = tensor_ir.case_ir(case)
        buf, mat = tensor_ir.case_inputs(case, rng)
        want = tensor_ir.expected(case, buf, mat)
        if want is None:
            continue
        got = [buf.copy(), mat.copy()]
        api.run_kernel(api.parse(text, "random"), "k", got, (1, 1, 1))
        if not all(np.array_equal(_raw(a), _raw(b)) for a, b in zip(got, want)):
            raise SystemExit("interpreter and reference disagree on a random case")
        desc = (f"{case['kind']} {case['etype']} {case['rows']}x{case['cols']} Dim{case['ldim']} "
                f"{case['mode']} {'+'.join(o for o, _ in case['lops']) or '-'}"
                + (f" view{case['view']['vdim']}{case['view']['perm']}"
                   f"{'+'.join(o for o, _ in case['view']['vops'])}" if case["view"] else ""))
        out.append((f"random_{len(out):03d}", text, [buf, mat], got, desc))
    return out


def build(folder: Path, count: int, perf: list[int], seed: int = 2026) -> None:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))
    from tensor_check import _example_inputs
    from test_decode_func import make_q4_0

    from coopdialect import api
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    meta, arrays = [], {}

    def add(name, kernel, grid, block, ptx, inputs, expected, info=""):
        meta.append({"name": name, "kernel": kernel, "grid": list(grid), "block": [block, 1, 1],
                     "ptx": ptx, "nbuf": len(inputs), "outputs": list(range(len(inputs))),
                     "info": info})
        for i, b in enumerate(inputs):
            arrays[f"{name}/in{i}"] = _raw(b)
        for i, e in enumerate(expected):
            arrays[f"{name}/exp{i}"] = _raw(e)

    for name, text, path, kernel, grid, threads in example_sources():
        inputs = _example_inputs(name, rng)
        expected = [b.copy() for b in inputs]
        api.run_kernel(api.parse(text, path), kernel, expected, grid)
        for fold in (False, True):
            add(f"{name}_{'folded' if fold else 'chain'}", kernel, grid, threads,
                compile_ptx(text, path, fold), inputs, expected, "example")
    for name, text, inputs, expected, desc in random_cases(count, seed, rng):
        add(name, "k", (1, 1, 1), 32, compile_ptx(text, name), inputs, expected, desc)
    M, K, N = 64, 128, 32
    dtext = (ROOT / DECODE).read_text()
    for fold in (False, True):
        ptx = compile_ptx(dtext, DECODE, fold)
        for s in range(3):
            q, _ = make_q4_0(rng)
            b = rng.integers(-4, 5, (K, N)).astype(np.float16)
            for kernel, bufs, grid in (
                    ("dequant_q4", [q, np.zeros((M, K), np.float16)], (K // 16, M // 16, 1)),
                    ("gemm_q4", [q, b, np.zeros((M, N), np.float32)], (N // 16, M // 16, 1))):
                expected = [x.copy() for x in bufs]
                api.run_kernel(api.parse(dtext, DECODE), kernel, expected, grid)
                add(f"{kernel}_{'folded' if fold else 'unfolded'}_{s}", kernel, grid, 32, ptx,
                    bufs, expected, "decode")
    perf_meta = []
    from gen_coopmat2_gemm import coopmat2_gemm_ir, grid as gemm_grid
    for n in perf:
        perf_meta.append({"n": n, "kernel": "gemm_coopmat2", "grid": list(gemm_grid(n, n)),
                          "block": [256, 1, 1],
                          "ptx": compile_ptx(coopmat2_gemm_ir(n, n, n), f"gen_{n}")})
    (folder / "cases.json").write_text(json.dumps({"cases": meta, "perf": perf_meta}))
    np.savez_compressed(folder / "data.npz", **arrays)
    print(f"built {len(meta)} cases and {len(perf_meta)} perf kernels into {folder}; expected "
          f"buffers from the interpreter (random cases: = tests/tensor_reference.py)")


def run(folder: Path, out: Path | None) -> int:
    sys.path.insert(0, str(ROOT))
    from coopdialect.runtime import open_device

    meta, data = load_cases(folder)
    with open_device("cuda") as dev:
        lines, passed, failed, kinds = run_cases(
            meta["cases"],
            lambda c: run_case(dev, data, c, c["name"], tuple(c["block"]), c["outputs"],
                               "FAIL ({bad} of {size} elements differ)"),
            lambda c: "random" if c["name"].startswith("random") else c["info"])
        lines = [f"{ln}  ({c['info']})" if c["info"] not in ("example", "decode") else ln
                 for ln, c in zip(lines, meta["cases"])]
        lines.append("by kind: " + ", ".join(f"{k} {a}/{b}" for k, (a, b) in kinds.items()))
        lines.append(f"correctness: {passed}/{passed + failed} cases bit-exact vs the "
                     "interpreter")
        for p in meta["perf"]:
            lines.append(_perf(dev, p))
    return report(lines, out, "nv2_ptx_check.txt", failed)


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
    reps = 4
    t_ptx = float(np.median(dev.time(prog, p["kernel"], bufs, grid, reps)))
    t_blas = timed(lambda: torch.matmul(a, b), reps)
    tf_ptx, tf_blas = flop / t_ptx / 1e12, flop / t_blas / 1e12
    row = {"name": "coopmat2_f16", "device": "NVIDIA H200", "m": n, "n": n, "k": n,
           "dtype": "f16", "tflops": tf_ptx, "exact": exact,
           "command": f"python tools/gpu/nv2_ptx_check.py build DIR --perf {n} && python3 "
                      "tools/gpu/nv2_ptx_check.py run DIR  (gen_coopmat2_gemm.py IR, "
                      "convert-coop-to-ptx)",
           "baseline": "torch.matmul (cuBLAS)", "baseline_tflops": tf_blas,
           "ratio": tf_ptx / tf_blas}
    return (f"perf n={n}: coopmat2 GEMM through PTX {tf_ptx:.1f} TFLOP/s ({t_ptx * 1e3:.3f} ms), "
            f"torch.matmul f16 {tf_blas:.1f} TFLOP/s ({t_blas * 1e3:.3f} ms), ratio "
            f"{tf_ptx / tf_blas:.3f}; first-run result exact: {exact}\nresult row for "
            "benchmarks/results/ptx.json: " + json.dumps(row))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], __doc__, build, run, default_count=60))
