"""TFLOP/s of the coopmat2 GEMM (tools/gpu/gen_coopmat2_gemm.py) on the H200 through Vulkan, and its
ratio to torch.matmul (cuBLAS) measured in the same process.

    python tools/gpu/coopmat2_perf.py build .tensorcheck/perf 4096 8192    # here: IR -> .spv
    python3 tools/gpu/coopmat2_perf.py run .tensorcheck/perf [--out D]     # on the GPU

For each size S (M = N = K = S, f16 × f16 → f32): the Vulkan dispatch is timed with the runner's
timestamp benchmark (device-local buffers, 3 warm-up + 10 timed dispatches, median); torch.matmul
of the same f16 matrices on CUDA with CUDA events (5 warm-up + 20 timed calls, median). FLOP =
2·S³. The Vulkan result is checked against torch's f32 product of the same data (relative
Frobenius error, f16 inputs, f32 accumulation both sides).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys


def build(folder: str, sizes: list[int]) -> None:
    sys.path.insert(0, os.getcwd())
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gen_coopmat2_gemm import coopmat2_gemm_ir, grid

    from coopdialect import api

    os.makedirs(folder, exist_ok=True)
    manifest = []
    for s in sizes:
        for clamp in ("Undefined", "ClampToEdge"):
            module = api.parse(coopmat2_gemm_ir(s, s, s, clamp=clamp), f"gen_coopmat2_gemm({s})")
            api.run_pipeline(module, "fold-tensor-views")
            spv = api.compile_to_spirv(module)
            path = os.path.join(folder, f"gemm_coopmat2_{s}_{clamp}.spv")
            with open(path, "wb") as f:
                f.write(spv)
            subprocess.run(["spirv-val", "--target-env", "vulkan1.3", path], check=True)
            manifest.append({"size": s, "clamp": clamp, "spv": os.path.basename(path), "grid": list(grid(s, s))})
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"built {len(manifest)} modules in {folder}")


def run(folder: str, out: str | None) -> None:
    import numpy as np
    import torch

    from coopdialect.runtime.vulkan_ctypes import VulkanContext

    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    lines, rows = [], []
    with VulkanContext() as ctx:
        lines.append(f"device: {ctx.device_info()['name']}; torch {torch.__version__}, "
                     f"{torch.cuda.get_device_name()}")
        for m in manifest:
            s = m["size"]
            rng = np.random.default_rng(s)
            a = rng.uniform(-1, 1, (s, s)).astype(np.float16)
            b = rng.uniform(-1, 1, (s, s)).astype(np.float16)
            c = np.zeros((s, s), np.float32)
            with open(os.path.join(folder, m["spv"]), "rb") as f:
                spv = f.read()
            outs, times = ctx.benchmark(spv, [a, b, c], tuple(m["grid"]), entry="gemm_coopmat2",
                                        repeat=10, warmup=3)
            vk_ns = float(np.median(times))
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            for _ in range(5):
                torch.matmul(ta, tb)
            torch.cuda.synchronize()
            ts = []
            for _ in range(20):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                torch.matmul(ta, tb)
                e1.record()
                torch.cuda.synchronize()
                ts.append(e0.elapsed_time(e1) * 1e6)
            torch_ns = float(np.median(ts))
            ref = (ta.float() @ tb.float())
            got = torch.from_numpy(outs[2]).cuda()
            rel = float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))
            flop = 2.0 * s ** 3
            vk_tf, th_tf = flop / vk_ns / 1e3, flop / torch_ns / 1e3
            rows.append({"size": s, "clamp": m["clamp"], "vulkan_tflops": vk_tf, "torch_tflops": th_tf,
                         "ratio": vk_tf / th_tf, "vk_ms": vk_ns / 1e6, "torch_ms": torch_ns / 1e6,
                         "rel_err": rel, "vk_times_ms": [t / 1e6 for t in times]})
            lines.append(f"{s}^3 f16->f32 ({m['clamp']} layouts): coopmat2 Vulkan {vk_tf:.1f} TFLOP/s ({vk_ns / 1e6:.3f} ms), "
                         f"torch.matmul {th_tf:.1f} TFLOP/s ({torch_ns / 1e6:.3f} ms), ratio {vk_tf / th_tf:.3f}; "
                         f"rel. error vs torch f32 product {rel:.2e}")
            del ta, tb, ref, got
            torch.cuda.empty_cache()
    text = "\n".join(lines)
    print(text)
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "coopmat2_perf.txt"), "w") as f:
            f.write(text + "\n")
        with open(os.path.join(out, "coopmat2_perf.json"), "w") as f:
            json.dump(rows, f, indent=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("folder")
    b.add_argument("sizes", type=int, nargs="+")
    r = sub.add_parser("run")
    r.add_argument("folder")
    r.add_argument("--out")
    args = ap.parse_args()
    if args.cmd == "build":
        build(args.folder, args.sizes)
    else:
        run(args.folder, args.out)


if __name__ == "__main__":
    main()
