"""PTX GEMM benchmark: the example IR compiled by coop-opt, checked, and timed against cuBLAS
(torch.matmul) and Triton in the same process on the GPU.

```sh
python benchmarks/bench_ptx.py build .ptxbench                  # here: compile + expected outputs
python3 benchmarks/bench_ptx.py run .ptxbench --out $OUT       # on the GPU (carry .ptxbench, .whl)
```

`build` writes, per case, the IR (`examples/gemm_f16_wg.mlir`'s kernel at that size, from
`benchmarks/gemm_ir.py`), the PTX and launch description of
`coop-opt K.mlir -p 'pipeline-coop-loads{stages=4},convert-coop-to-ptx' -t ptx`, and for the
512³ exactness cases small-integer inputs with the interpreter's outputs. `run` loads each
kernel through `coopdialect.runtime.cuda.CudaDevice` (the launch description's tensor maps and
dynamic shared memory), checks it (512³: bit-exact against the interpreter; large sizes:
bit-exact against torch on small-integer data, whose f32 sums are exact), times it with device
events (median of 30 launches after warm-up) and torch.matmul / Triton's matmul of the same
operands, and writes `ptx.json` rows (keys of benchmarks/results/ptx.json).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
PIPELINE = "pipeline-coop-loads{stages=4},convert-coop-to-ptx"
TILE_M, TILE_N = 128, 256


def _coop_opt(path: str, target: str) -> str:
    exe = os.path.join(os.path.dirname(sys.executable), "coop-opt")
    return subprocess.run([exe, path, "-p", PIPELINE, "-t", target], capture_output=True,
                          text=True, check=True).stdout


def build(out: str, sizes: list[int]) -> None:
    from gemm_ir import dense_gemm

    os.makedirs(out, exist_ok=True)
    cases = []
    for dt in ("f16", "bf16"):
        for n in [512, *sizes]:
            name = f"dense_{dt}_{n}"
            ir = dense_gemm(n, n, n, dt)
            src = os.path.join(out, f"{name}.mlir")
            with open(src, "w") as f:
                f.write(ir)
            ptx = _coop_opt(src, "ptx")
            launch = json.loads(_coop_opt(src, "ptx-launch"))
            for ext, text in (("ptx", ptx), ("json", json.dumps(launch))):
                with open(os.path.join(out, f"{name}.{ext}"), "w") as f:
                    f.write(text)
            case = {"name": name, "dtype": dt, "n": n, "kernel": launch["kernels"][0]["name"]}
            if n == 512:
                _expected(ir, dt, n, os.path.join(out, name))
                case["expected"] = True
            cases.append(case)
            print("built", name, flush=True)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


def _np_dtype(dt: str):
    import ml_dtypes
    return np.float16 if dt == "f16" else ml_dtypes.bfloat16


def _expected(ir: str, dt: str, n: int, stem: str) -> None:
    """Small-integer inputs and the interpreter's output (the oracle) for an exactness case."""
    from coopdialect import api
    from coopdialect.interpreter.kernel import run_kernel

    rng = np.random.default_rng(n)
    a = rng.integers(-4, 5, (n, n)).astype(_np_dtype(dt))
    bt = rng.integers(-4, 5, (n, n)).astype(_np_dtype(dt))
    d = np.zeros((n, n), _np_dtype(dt))
    run_kernel(api.parse(ir), "gemm", [a, bt, d], grid=(n // TILE_N, n // TILE_M, 1))
    np.save(stem + ".a.npy", a)
    np.save(stem + ".bt.npy", bt)
    np.save(stem + ".d.npy", d)


def _median_ms(fn, reps: int = 30) -> float:
    import torch
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def _triton_matmul():
    """Triton's tutorial-style matmul (grouped tile order, autotuned over Hopper-sized tiles)."""
    import triton
    import triton.language as tl

    configs = [triton.Config({"BM": bm, "BN": bn, "BK": 64, "G": 8}, num_stages=s, num_warps=w)
               for bm, bn, s, w in [(128, 256, 3, 8), (128, 256, 4, 8), (256, 128, 3, 8),
                                    (128, 128, 4, 4), (128, 128, 4, 8)]]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def mm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
           G: tl.constexpr):
        pid = tl.program_id(0)
        npm, npn = tl.cdiv(M, BM), tl.cdiv(N, BN)
        width = G * npn
        first = (pid // width) * G
        gs = min(npm - first, G)
        pm = first + ((pid % width) % gs)
        pn = (pid % width) // gs
        rm, rn, rk = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN), tl.arange(0, BK)
        ap = a + rm[:, None] * K + rk[None, :]
        bp = b + rn[None, :] * K + rk[:, None]
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for _ in range(0, K, BK):
            acc = tl.dot(tl.load(ap), tl.load(bp), acc)
            ap += BK
            bp += BK
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty))

    def run(a, bt, c):
        m, k = a.shape
        n = bt.shape[0]
        mm[lambda meta: (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)](a, bt, c, m, n, k)
    return run


def run(root: str, out: str) -> None:
    import torch

    from coopdialect.runtime.cuda import CudaDevice

    dev = CudaDevice()
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    try:
        tri = _triton_matmul()
    except Exception as e:  # noqa: BLE001 - report and go on without the Triton rows
        print("triton unavailable:", e)
        tri = None
    rows, lines = [], []
    for case in json.load(open(os.path.join(root, "cases.json"))):
        stem = os.path.join(root, case["name"])
        prog = dev.load(open(stem + ".ptx").read(), json.load(open(stem + ".json")))
        n, dt = case["n"], case["dtype"]
        tdt = torch.float16 if dt == "f16" else torch.bfloat16
        grid = (n // TILE_N, n // TILE_M, 1)
        if case.get("expected"):
            a = torch.from_numpy(np.load(stem + ".a.npy").view(np.int16)).view(tdt).cuda()
            bt = torch.from_numpy(np.load(stem + ".bt.npy").view(np.int16)).view(tdt).cuda()
            want = torch.from_numpy(np.load(stem + ".d.npy").view(np.int16)).cuda()
        else:
            g = torch.Generator(device="cuda").manual_seed(n)
            a = torch.randint(-4, 5, (n, n), device="cuda", generator=g).to(tdt)
            bt = torch.randint(-4, 5, (n, n), device="cuda", generator=g).to(tdt)
            want = torch.matmul(a, bt.T).view(torch.int16)
        d = torch.full((n, n), float("nan"), device="cuda", dtype=tdt)
        torch.cuda.synchronize()
        dev.launch(prog, case["kernel"], [a.data_ptr(), bt.data_ptr(), d.data_ptr()], grid)
        exact = bool(torch.equal(d.view(torch.int16), want))
        oracle = "interpreter" if case.get("expected") else "torch (integer data)"
        line = f"{case['name']}: exact vs {oracle}: {exact}"
        if n >= 4096:
            ar, br = torch.randn(n, n, device="cuda").to(tdt), torch.randn(n, n, device="cuda").to(tdt)
            ptrs = [ar.data_ptr(), br.data_ptr(), d.data_ptr()]
            ours = statistics.median(dev.time(prog, case["kernel"], ptrs, grid, 30)) * 1e3
            lib = _median_ms(lambda: torch.matmul(ar, br.T))
            flop = 2.0 * n ** 3
            cmd = (f"python benchmarks/bench_ptx.py build DIR && python3 benchmarks/bench_ptx.py "
                   f"run DIR  (coop-opt -p '{PIPELINE}' -t ptx)")
            base = dict(name=f"dense_{dt}", device=device, m=n, n=n, k=n, dtype=dt,
                        tflops=flop / ours / 1e9, exact=exact, command=cmd, date=date)
            rows.append(dict(base, baseline="torch.matmul (cuBLAS)",
                             baseline_tflops=flop / lib / 1e9, ratio=lib / ours))
            line += f"  coop {flop / ours / 1e9:7.1f} TFLOP/s  cuBLAS {flop / lib / 1e9:7.1f}  ratio {lib / ours:.3f}"
            if tri is not None:
                c = torch.empty(n, n, device="cuda", dtype=tdt)
                tt = _median_ms(lambda: tri(ar, br, c))
                rows.append(dict(base, baseline="triton", baseline_tflops=flop / tt / 1e9,
                                 ratio=tt / ours))
                line += f"  triton {flop / tt / 1e9:7.1f}  ratio {tt / ours:.3f}"
        lines.append(line)
        print(line, flush=True)
    with open(os.path.join(out, "ptx.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("\n".join(["", "summary:", *lines]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("dir")
    b.add_argument("--sizes", default="4096,8192")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--out", default=".")
    a = p.parse_args()
    if a.cmd == "build":
        build(a.dir, [int(s) for s in a.sizes.split(",")])
    else:
        run(a.dir, a.out)


if __name__ == "__main__":
    main()
