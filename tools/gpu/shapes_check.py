"""The shape-generic GEMM kernels on the GPU: every tile config and dtype at shapes with partial
tiles on every edge, bit for bit against torch on small-integer data (sums exact in f32).

    python benchmarks/bench_shapes.py build .shapes          # here: the kernels
    python3 tools/gpu/shapes_check.py .shapes [--out DIR]    # on the GPU

Prints one line per (kernel, shape) and a summary; exit status 1 when any differs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

SHAPES = [(1, 8, 8), (77, 130, 72), (128, 256, 64), (129, 257, 65), (255, 511, 200),
          (1000, 1000, 1000), (64, 4096, 4096), (300, 1, 9), (4095, 333, 4095), (3, 5, 7)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--out")
    a = ap.parse_args()
    import torch

    from coopdialect.kernels.gemm import GemmConfig, gemm_launches
    from coopdialect.runtime.cuda import CudaDevice
    from coopdialect.tools.coop_tune import Workspaces

    torch.backends.cuda.matmul.allow_tf32 = False
    dev = CudaDevice()
    ws = Workspaces()
    lines, failed = [], 0
    for k in json.load(open(os.path.join(a.dir, "kernels.json"))):
        stem = os.path.join(a.dir, k["stem"])
        prog = dev.load(open(stem + ".ptx").read(), json.load(open(stem + ".json")))
        tdt = torch.float16 if k["dtype"] == "f16" else torch.bfloat16
        cfg = GemmConfig(**k["config"])
        for (m, n, kk) in SHAPES:
            g = torch.Generator(device="cuda").manual_seed(m + 3 * n + 7 * kk)
            a_ = torch.randint(-2, 3, (m, kk), device="cuda", generator=g).to(tdt)
            bt = torch.randint(-2, 3, (n, kk), device="cuda", generator=g).to(tdt)
            d = torch.full((m, n), float("nan"), device="cuda", dtype=tdt)
            ref = a_.float() @ bt.float().T
            bias = None
            if k["epilogue"] != "none":
                bias = torch.randint(-2, 3, (n,), device="cuda", generator=g).to(tdt)
                ref = ref + bias.float()
                if k["epilogue"] == "bias_gelu":
                    ref = torch.nn.functional.gelu(ref.double()).float()
            try:
                for name, args, grid in gemm_launches(
                        k["kernels"], cfg, a_.data_ptr(), bt.data_ptr(), d.data_ptr(), m, n, kk,
                        bias=None if bias is None else bias.data_ptr(), workspace=ws):
                    dev.launch(prog, name, args, grid)
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - one line per failing case
                failed += 1
                lines.append(f"FAIL {k['stem']} {m}x{n}x{kk}: {str(e).splitlines()[0]}")
                print(lines[-1], flush=True)
                continue
            want = ref.to(tdt)
            if k["epilogue"] == "bias_gelu":
                err = float(((d.double() - ref.double()).abs() / (ref.double().abs() + 1)).max())
                ok = err <= 2.0 ** (-10 if k["dtype"] == "f16" else -7)
                what = f"max rel err {err:.2e}"
            else:
                ok = bool(torch.equal(d.view(torch.int16), want.view(torch.int16)))
                bad = int((d.view(torch.int16) != want.view(torch.int16)).sum())
                what = "bit-exact" if ok else f"{bad} of {m * n} elements differ"
            failed += not ok
            lines.append(f"{'ok  ' if ok else 'FAIL'} {k['stem']} {m}x{n}x{kk}: {what}")
            print(lines[-1], flush=True)
    lines.append(f"{'all passed' if not failed else f'{failed} failed'}")
    print(lines[-1])
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "shapes_check.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
