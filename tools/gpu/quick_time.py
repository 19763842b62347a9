"""Quick timing of the shape-generic GEMM kernels against torch.matmul (alternating rounds)."""
import json, math, os, sys, statistics
import torch
sys.path.insert(0, os.path.dirname(__file__))
from gpu_check_common import interleaved_medians, median_seconds
from coopdialect.runtime.cuda import CudaDevice
root = sys.argv[1]
shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[2].split(",")]
stems = sys.argv[3].split(",")
dev = CudaDevice()
idx = {k["stem"]: k for k in json.load(open(os.path.join(root, "kernels.json")))}
progs = {}
for s in stems:
    k = idx[s]
    progs[s] = (dev.load(open(os.path.join(root, s + ".ptx")).read(), json.load(open(os.path.join(root, s + ".json")))), k)
for (m, n, kk) in shapes:
    a = torch.randn(m, kk, device="cuda").half(); bt = torch.randn(n, kk, device="cuda").half()
    b = bt.T.contiguous(); d = torch.empty(m, n, device="cuda", dtype=torch.half)
    timers = {"cublas_nk": lambda r: median_seconds(lambda: torch.matmul(a, bt.T), r, 2) * 1e3,
              "cublas_kn": lambda r: median_seconds(lambda: torch.matmul(a, b), r, 2) * 1e3}
    for s, (p, k) in progs.items():
        cfg = k["config"]
        grid = (math.ceil(n / cfg["bn"]), math.ceil(m / cfg["bm"]), 1)
        args = [a.data_ptr(), bt.data_ptr(), d.data_ptr(), m, n, kk]
        timers[s] = (lambda p=p, k=k, args=args, grid=grid: (lambda r: statistics.median(dev.time(p, k["kernel"], args, grid, r)) * 1e3))()
    ms = interleaved_medians(timers)
    f = 2.0 * m * n * kk / 1e9
    cub = min(ms["cublas_nk"], ms["cublas_kn"])
    print(f"{m}x{n}x{kk}: cuBLAS {f / cub:7.1f} TFLOP/s | " + " | ".join(f"{s} {f / ms[s]:7.1f} ({cub / ms[s]:.3f})" for s in progs), flush=True)
