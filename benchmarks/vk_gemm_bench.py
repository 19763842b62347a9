"""Vulkan GEMM benchmark: the example IR compiled by coop-opt, run through Vulkan on
the GPU, checked, and timed against torch in the same process.

```sh
python benchmarks/vk_gemm_bench.py build build/vkbench              # here: coop-opt + interpreter
python3 benchmarks/vk_gemm_bench.py run build/vkbench --out $OUT   # on the GPU (docs/gpu.md), with build/vkbench
```

`build` takes each dtype's example forms (EXAMPLES: the coopmat2 workgroup form
`examples/gemm_{f16,s8}_coopmat2_vk.mlir`, the fastest structure benchmarks/vk_gemm_sweep.py
measured, for the `vk_f16` / `vk_s8` rows; the KHR subgroup form `examples/gemm_{f16,s8}_vk.mlir`
through PIPELINE and VARIANTS as variant rows), written at 8192³ (the size S variants replace
8192 by S, nothing else), compiles each with `coop-opt FILE -p PIPELINE -t spirv`, validates with
spirv-val, and for S = 512 runs the ORIGINAL example IR through the interpreter on small-integer
data (f16 in [-4, 4], s8 full range) and stores its output. `run` (numpy + torch +
coopdialect.runtime.vulkan_ctypes; no xDSL needed there) dispatches every
module: S = 512 must equal the interpreter's output bit for bit; S = 4096 / 8192 must equal torch
bit for bit (f16: small-integer data, whose f32 sums are exact, against the f32 product; s8
against torch._int_mm). Timing: the runner's timestamp benchmark (device-local buffers, 3 warm-up
+ 10 timed dispatches, median); torch.matmul (f16, cuBLAS) and torch._int_mm (s8; the faster of
B row-major and B column-major, which cuBLASLt's int8 kernels want) with CUDA events (5 warm-up
+ 10, median) in the same process, in 5 alternating rounds (`gpu_timing.interleaved_medians`).
FLOP = 2·S³. Writes `vulkan.json` (keys of benchmarks/results/ptx.json: name, device, m, n, k, dtype, tflops, baseline, baseline_tflops,
ratio, exact, command, date) and a text table into --out.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPELINE = ("pipeline-coop-loads{stages=2},distribute-coop-workgroup,"
            "legalize-coop-sizes{target=h200-vulkan flexible=false},convert-coop-to-spirv")
# Other pipelines over the same example IR, timed at the largest size only (docs/performance.md
# records them): what each piece of the default buys.
_LEGAL = "legalize-coop-sizes{target=h200-vulkan flexible=false}"
VARIANTS = {
    "copies_direct": ("pipeline-coop-loads{stages=2},distribute-coop-workgroup," + _LEGAL
                      + ",convert-coop-to-spirv{workgroup_copies=direct}"),
    "no_padding": ("pipeline-coop-loads{stages=2},distribute-coop-workgroup," + _LEGAL
                   + ",convert-coop-to-spirv{workgroup_pad=0}"),
    "workgroup_scope_staged": "pipeline-coop-loads{stages=2},convert-coop-to-spirv",
    "subgroup_unstaged": "distribute-coop-workgroup," + _LEGAL + ",convert-coop-to-spirv",
    "workgroup_scope_unstaged": "convert-coop-to-spirv",
}
# Each dtype's example forms: (variant, file, kernel, tile rows x cols, pipeline). The first is
# the benchmark's row (`vk_f16` / `vk_s8`): the fastest structure benchmarks/vk_gemm_sweep.py
# measured, the coopmat2 workgroup form; the KHR subgroup form staged through workgroup memory
# follows as a variant (with VARIANTS' pipelines over it) at the largest size.
CM2_PIPELINE = "fold-tensor-views,convert-coop-to-spirv"
EXAMPLES = {
    "f16": [("default", "examples/gemm_f16_coopmat2_vk.mlir", "gemm_f16_coopmat2_vk", (128, 256),
             CM2_PIPELINE),
            ("khr_staged", "examples/gemm_f16_vk.mlir", "gemm_f16_vk", (128, 128), PIPELINE)],
    "s8": [("default", "examples/gemm_s8_coopmat2_vk.mlir", "gemm_s8_coopmat2_vk", (256, 128),
            CM2_PIPELINE),
           ("khr_staged", "examples/gemm_s8_vk.mlir", "gemm_s8_vk", (128, 128), PIPELINE)],
}
EXACT_SIZE = 512
COMMAND = ("python benchmarks/vk_gemm_bench.py build build/vkbench; "
           "python3 benchmarks/vk_gemm_bench.py run build/vkbench --out $OUT")


def _inputs(dtype: str, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(s)
    if dtype == "f16":
        a = rng.integers(-4, 5, (s, s)).astype(np.float16)
        b = rng.integers(-4, 5, (s, s)).astype(np.float16)
        return a, b, np.zeros((s, s), np.float32)
    a = rng.integers(-128, 128, (s, s), dtype=np.int8)
    b = rng.integers(-128, 128, (s, s), dtype=np.int8)
    return a, b, np.zeros((s, s), np.int32)


def build(out: str, sizes: list[int]) -> None:
    sys.path.insert(0, ROOT)
    from coopdialect import api

    os.makedirs(out, exist_ok=True)
    exe = os.path.join(os.path.dirname(sys.executable), "coop-opt")
    cases = []
    for dtype, forms in EXAMPLES.items():
        for form, path, kernel, (tm, tn), form_pipeline in forms:
            with open(os.path.join(ROOT, path)) as f:
                text = f.read()
            if form == "default":
                runs = [(s, "default", form_pipeline) for s in [EXACT_SIZE, *sizes]]
            else:  # the other forms at the exactness size and the largest
                runs = [(s, form, form_pipeline) for s in [EXACT_SIZE, *sizes[-1:]]]
                runs += [(max(sizes), f"{form}_{v}", p) for v, p in VARIANTS.items()] if sizes else []
            for s, variant, pipeline in runs:
                name = f"vk_{dtype}_{s}" + ("" if variant == "default" else f"_{variant}")
                src = os.path.join(out, name + ".mlir")
                with open(src, "w") as f:
                    f.write(text.replace("8192", str(s)))
                spv = os.path.join(out, name + ".spv")
                subprocess.run([exe, src, "-p", pipeline, "-t", "spirv", "-o", spv], check=True)
                subprocess.run(["spirv-val", "--target-env", "vulkan1.3", spv], check=True)
                case = {"name": f"vk_{dtype}", "dtype": dtype, "size": s, "spv": name + ".spv",
                        "entry": kernel, "grid": [s // tn, s // tm, 1], "variant": variant,
                        "pipeline": pipeline, "example": path}
                if s == EXACT_SIZE:
                    a, b, c = _inputs(dtype, s)
                    module = api.parse(text.replace("8192", str(s)), src)
                    api.run_kernel(module, kernel, [a, b, c], tuple(case["grid"]))
                    np.save(os.path.join(out, name + "_interp.npy"), c)
                    case["interpreter"] = name + "_interp.npy"
                cases.append(case)
                print(f"built {name}", flush=True)
    cases += _build_checks(out, exe, api)
    shutil.copy(os.path.abspath(__file__), out)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"pipeline": CM2_PIPELINE, "cases": cases}, f, indent=1)


# Small staged kernels through the same pipeline, compared bit for bit with the interpreter on
# the GPU (no timing): pieces that do not divide the invocations (guarded copies and landings),
# a ColumnMajor B, s8, 2 subgroups. (dtype, M, N, K, BM, BN, BK, invocations, B ColumnMajor)
CHECKS = [("f16", 64, 64, 64, 32, 32, 16, 128, False),
          ("f16", 128, 128, 96, 64, 64, 32, 128, True),
          ("i8", 128, 64, 192, 64, 32, 64, 64, False),
          ("i8", 64, 128, 128, 32, 64, 64, 128, True)]


def _check_inputs(m: int, n: int, k: int, dtype: str, b_col: bool, seed: int):
    """Small-integer A (M x K), B (K x N, or Bt N x K with `b_col`) and a zero C."""
    rng = np.random.default_rng(seed)
    if dtype == "f16":
        a = rng.integers(-4, 5, (m, k)).astype(np.float16)
        b = rng.integers(-4, 5, (k, n)).astype(np.float16)
        c = np.zeros((m, n), np.float32)
    else:
        a = rng.integers(-128, 128, (m, k), dtype=np.int8)
        b = rng.integers(-128, 128, (k, n), dtype=np.int8)
        c = np.zeros((m, n), np.int32)
    return a, (np.ascontiguousarray(b.T) if b_col else b), c


def _build_checks(out: str, exe: str, api) -> list[dict]:
    from coopdialect.kernels.gemm_tiles import workgroup_gemm_ir as gemm_ir

    cases = []
    for i, (dtype, m, n, k, bm, bn, bk, inv, b_col) in enumerate(CHECKS):
        name = f"check{i}_{dtype}_{m}x{n}x{k}_{bm}x{bn}x{bk}_inv{inv}" + ("_bcol" if b_col else "")
        text = gemm_ir(m, n, k, bm, bn, bk, inv, dtype, b_col)
        src = os.path.join(out, name + ".mlir")
        with open(src, "w") as f:
            f.write(text)
        spv = os.path.join(out, name + ".spv")
        subprocess.run([exe, src, "-p", PIPELINE, "-t", "spirv", "-o", spv], check=True)
        subprocess.run(["spirv-val", "--target-env", "vulkan1.3", spv], check=True)
        a, b, c = _check_inputs(m, n, k, dtype, b_col, i)
        grid = (n // bn, m // bm, 1)
        module = api.parse(text, src)
        api.run_kernel(module, "g", [a, b, c], grid)
        np.savez(os.path.join(out, name + ".npz"), a=a, b=b, expected=c)
        cases.append({"name": name, "dtype": dtype, "size": m, "spv": name + ".spv", "entry": "g",
                      "grid": list(grid), "variant": "check", "data": name + ".npz"})
        print(f"built {name}", flush=True)
    return cases


def _torch_ns(fn, reps: int = 20) -> float:
    from gpu_timing import median_seconds  # benchmarks/, on the path in run()
    return median_seconds(fn, reps) * 1e9


def run(folder: str, out: str) -> None:
    import torch

    sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(os.getcwd(), "benchmarks")]
    from coopdialect.runtime.vulkan_ctypes import VulkanContext, VulkanError
    from gpu_timing import interleaved_medians

    with open(os.path.join(folder, "cases.json")) as f:
        meta = json.load(f)
    os.makedirs(out, exist_ok=True)
    rows, variants, lines, checks = [], [], [], []
    cache: dict = {}
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    with VulkanContext() as ctx:
        device = ctx.device_info()["name"]
        lines.append(f"device: {device}; torch {torch.__version__}; pipeline {meta['pipeline']}")
        for c in meta["cases"]:
            if c["variant"] == "check":
                d = np.load(os.path.join(folder, c["data"]))
                with open(os.path.join(folder, c["spv"]), "rb") as f:
                    spv = f.read()
                try:
                    got = ctx.run_compute(spv, [d["a"], d["b"], np.zeros_like(d["expected"])],
                                          tuple(c["grid"]), entry="g", memory="device")[2]
                    ok = bool(np.array_equal(got, d["expected"]))
                    lines.append(f"{c['name']}: {'bit-exact' if ok else 'DIFFERS'} vs interpreter"
                                 + ("" if ok else f" ({int((got != d['expected']).sum())} elements)"))
                except VulkanError as e:
                    lines.append(f"{c['name']}: {e}")
                print(lines[-1], flush=True)
                checks.append(lines[-1])
                continue
            s, dtype = c["size"], c["dtype"]
            if (dtype, s) not in cache:
                cache.clear()
                cache[(dtype, s)] = _inputs(dtype, s)
            a, b, zero = cache[(dtype, s)]
            with open(os.path.join(folder, c["spv"]), "rb") as f:
                spv = f.read()
            grid = tuple(c["grid"])
            try:
                got = ctx.run_compute(spv, [a, b, zero], grid, entry=c["entry"], memory="device")[2]
            except VulkanError as e:  # a variant the driver refuses is a finding, not the end
                lines.append(f"{c['spv']}: {e}")
                print(lines[-1], flush=True)
                continue
            if "interpreter" in c:
                ref = np.load(os.path.join(folder, c["interpreter"]))
                exact = bool(np.array_equal(got, ref))
                what = "interpreter"
            else:
                ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
                ref_t = ta.float() @ tb.float() if dtype == "f16" else torch._int_mm(ta, tb)
                exact = bool(torch.equal(torch.from_numpy(got).cuda(), ref_t))
                what = "torch"
                del ref_t
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            timers = {"vulkan": lambda reps: float(np.median(ctx.benchmark(
                spv, [a, b, zero], grid, entry=c["entry"], repeat=reps, warmup=3)[1]))}
            if dtype == "f16":
                base_name = "torch.matmul"
                timers["torch"] = lambda reps: _torch_ns(lambda: torch.matmul(ta, tb), reps)
            else:
                # cuBLASLt's int8 kernels want B column-major: time both layouts of the same B and
                # compare with the faster (the row-major call is several times slower)
                tb_cm = tb.t().contiguous().t()
                base_name = "torch._int_mm"
                timers["torch"] = lambda reps: _torch_ns(lambda: torch._int_mm(ta, tb), reps)
                timers["torch_bcol"] = lambda reps: _torch_ns(lambda: torch._int_mm(ta, tb_cm), reps)
            # alternating rounds (as benchmarks/bench_ptx.py): the GPU slows as it heats
            ms = interleaved_medians(timers)
            ns = ms.pop("vulkan")
            base_ns = min(ms.values())
            timers.clear()
            torch.cuda.empty_cache()
            flop = 2.0 * s ** 3
            tf, btf = flop / ns / 1e3, flop / base_ns / 1e3
            row = {"name": c["name"], "device": device, "m": s, "n": s, "k": s,
                   "dtype": "f16" if dtype == "f16" else "s8",
                   "tflops": round(tf, 1), "baseline": base_name, "baseline_tflops": round(btf, 1),
                   "ratio": round(tf / btf, 3), "exact": exact, "command": COMMAND, "date": date}
            if c.get("variant", "default") == "default":
                rows.append(row)
            else:
                variants.append({**row, "variant": c["variant"], "pipeline": c["pipeline"],
                                 "example": c.get("example")})
            lines.append(f"{c['name']}{'' if c.get('variant', 'default') == 'default' else ' [' + c['variant'] + ']'} {s}^3: {tf:.1f} TFLOP/s ({ns / 1e6:.3f} ms), {base_name} "
                         f"{btf:.1f} ({base_ns / 1e6:.3f} ms), ratio {tf / btf:.3f}, "
                         f"{'bit-exact' if exact else 'DIFFERS'} vs {what}")
            print(lines[-1], flush=True)
    with open(os.path.join(out, "vulkan.json"), "w") as f:
        json.dump(rows, f, indent=1)
    with open(os.path.join(out, "vulkan_variants.json"), "w") as f:
        json.dump(variants, f, indent=1)
    with open(os.path.join(out, "vulkan.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("folder")
    b.add_argument("--sizes", default="4096,8192")
    r = sub.add_parser("run")
    r.add_argument("folder")
    r.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.cmd == "build":
        build(args.folder, [int(x) for x in args.sizes.split(",") if x])
    else:
        run(args.folder, args.out or args.folder)


if __name__ == "__main__":
    main()
