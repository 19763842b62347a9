"""TFLOP/s of the coopmat2 GEMM (tools/gpu/gen_coopmat2_gemm.py) on the H200 through coopdialect.runtime's
Vulkan device, and its ratio to torch.matmul (cuBLAS) measured in the same process.

    python3 tools/gpu/coopmat2_perf.py 4096 8192 [--out D]     # on the GPU (coopdialect installed)

For each size S (M = N = K = S, f16 × f16 → f32) and layout clamp mode (Undefined, ClampToEdge),
the IR goes through fold-tensor-views and convert-coop-to-spirv; the dispatch is timed with the
runtime (device-local buffers, timestamp queries, 1 warm-up + 10 timed dispatches, median);
torch.matmul of the same f16 matrices on CUDA with CUDA events (5 warm-up + 20 timed calls,
median). FLOP = 2·S³. The Vulkan result is checked against torch's f32 product of the same data
(relative Frobenius error, f16 inputs, f32 accumulation both sides).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def main(argv: list[str]) -> None:
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from coopdialect.kernels.coopmat2_gemm import coopmat2_gemm_ir, grid
    from gpu_check_common import median_seconds

    from coopdialect import api
    from coopdialect.runtime import open_device

    out = Path(argv.pop(argv.index("--out") + 1)) if "--out" in argv else None
    sizes = [int(a) for a in argv if a != "--out"]
    lines, rows = [], []
    with open_device("vulkan") as dev:
        lines.append(f"device: {dev.ctx.device_info()['name']}; torch {torch.__version__}, "
                     f"{torch.cuda.get_device_name()}")
        for s in sizes:
            for clamp in ("Undefined", "ClampToEdge"):
                module = api.parse(coopmat2_gemm_ir(s, s, s, clamp=clamp), f"coopmat2_gemm({s})")
                prog = dev.compile(module, "fold-tensor-views")
                rng = np.random.default_rng(s)
                a = rng.uniform(-1, 1, (s, s)).astype(np.float16)
                b = rng.uniform(-1, 1, (s, s)).astype(np.float16)
                c = np.zeros((s, s), np.float32)
                bufs = [dev.upload(x) for x in (a, b, c)]
                vk_ns = float(np.median(dev.time(prog, "gemm_coopmat2", bufs, grid(s, s), 10))) * 1e9
                dev.launch(prog, "gemm_coopmat2", bufs, grid(s, s))
                ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
                torch_ns = median_seconds(lambda: torch.matmul(ta, tb)) * 1e9
                ref = ta.float() @ tb.float()
                got = torch.from_numpy(dev.download(bufs[2], c)).cuda()
                rel = float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))
                flop = 2.0 * s ** 3
                vk_tf, th_tf = flop / vk_ns / 1e3, flop / torch_ns / 1e3
                rows.append({"size": s, "clamp": clamp, "vulkan_tflops": vk_tf, "torch_tflops": th_tf,
                             "ratio": vk_tf / th_tf, "vk_ms": vk_ns / 1e6, "torch_ms": torch_ns / 1e6,
                             "rel_err": rel})
                lines.append(f"{s}^3 f16->f32 ({clamp} layouts): coopmat2 Vulkan {vk_tf:.1f} TFLOP/s "
                             f"({vk_ns / 1e6:.3f} ms), torch.matmul {th_tf:.1f} TFLOP/s "
                             f"({torch_ns / 1e6:.3f} ms), ratio {vk_tf / th_tf:.3f}; rel. error vs "
                             f"torch f32 product {rel:.2e}")
                del ta, tb, ref, got
                torch.cuda.empty_cache()
    print("\n".join(lines))
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "coopmat2_perf.txt").write_text("\n".join(lines) + "\n")
        (out / "coopmat2_perf.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
