"""PTX GEMM benchmark: the example IR compiled by coop-opt, checked, and timed against cuBLAS
(torch.matmul) and Triton in the same process on the GPU.

```sh
python benchmarks/bench_ptx.py build .ptxbench                  # here: compile + expected outputs
python3 benchmarks/bench_ptx.py run .ptxbench --out $OUT       # on the GPU (docs/gpu.md), with .ptxbench
```

`build` writes, per case, the IR (`examples/gemm_f16_wg.mlir`, `gemm_bf16_wg.mlir` and
`sparse_gemm_f16_tiles_wg.mlir`'s kernels at that size (the 2:4 kernels take their metadata in
tile order, `gemm_tiles.meta_tile_order`), and their e4m3 / s8 2:4 analogues, from
`coopdialect.kernels.gemm_tiles`), the PTX and launch description of
`coop-opt K.mlir -p 'pipeline-coop-loads{stages=4},convert-coop-to-ptx{persistent=true}' -t ptx`
(dense and 2:4 alike), and for the 512³ exactness cases small-integer inputs with the interpreter's outputs. `run` loads each
kernel through `coopdialect.runtime.cuda.CudaDevice` (the launch description's tensor maps and
dynamic shared memory), checks it (512³: bit-exact against the interpreter; large sizes:
bit-exact against torch on small-integer data, whose f32 sums are exact), times it with device
events against torch.matmul / Triton's matmul / cuSPARSELt of the same operands in 5
alternating rounds of 10 launches (the median of the round medians;
`gpu_timing.interleaved_medians`), at 8192³ also each kernel back to back at the clock
it sustains under the power cap (2 turns of 2.5 s each, the first second of each dropped,
`gpu_timing.sustained_medians`, SM clock sampled by nvidia-smi), and
writes `ptx.json` rows (keys of benchmarks/results/ptx.json; the sustained figures as
`sustained_tflops`, `sustained_baseline_tflops`, `sustained_ratio`, `sustained_clock_mhz`,
`sustained_baseline_clock_mhz`). The cuBLAS baseline is
the faster of `torch.matmul(A, Bt.T)` and `torch.matmul(A, B)` with B copied row-major: on the
H200 the transposed-view call ran 15-25% slower in some sessions.
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
# Dense: a persistent CTA per SM (convert-coop-to-ptx's `persistent`): +2-4% over one CTA per
# tile in the same process on the H200 (f16 8192^3 678 vs 637/670; docs/performance.md)
PIPELINE = os.environ.get("COOP_BENCH_PIPELINE",
                          "pipeline-coop-loads{stages=4},convert-coop-to-ptx{persistent=true}")
# 2:4: the same. With one wgmma.sp batch in flight (convert-coop-to-ptx's default sparse_batch=1,
# sparse_in_flight=1) the consumers hold two stages, and four keep the copies ahead (H200, 8192^3
# f16: 4 stages 1075-1107 TFLOP/s, 5 stages 1030-1075, 3 stages 782; docs/performance.md)
SPARSE_PIPELINE = os.environ.get("COOP_BENCH_SPARSE_PIPELINE", PIPELINE)
TILE_M, TILE_N = 128, 256
# Sizes timed a second way too: each kernel run back to back at the clock it sustains under the
# 700 W cap (`sustained_*` keys; gpu_timing.sustained_medians)
SUSTAINED_N = 8192


def _coop_opt(path: str, target: str, pipeline: str = PIPELINE) -> str:
    exe = os.path.join(os.path.dirname(sys.executable), "coop-opt")
    return subprocess.run([exe, path, "-p", pipeline, "-t", target], capture_output=True,
                          text=True, check=True).stdout


def build(out: str, sizes: list[int]) -> None:
    from coopdialect.kernels.gemm_tiles import gemm_wg_ir, sparse_gemm_wg_ir

    os.makedirs(out, exist_ok=True)
    cases = []
    for dt in ("f16", "bf16"):
        for n in [512, *sizes]:
            name = f"dense_{dt}_{n}"
            ir = gemm_wg_ir(n, n, n, dt)
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
                _expected(ir, dt, n, os.path.join(out, name), case["kernel"])
                case["expected"] = True
            cases.append(case)
            print("built", name, flush=True)
    for dt, sizes_dt in (("f16", [512, *sizes]), ("f8E4M3FN", [512, sizes[-1]]),
                         ("si8", [512, sizes[-1]])):
        for n in sizes_dt:
            name = f"sparse24_{_short(dt)}_{n}"
            ir = sparse_gemm_wg_ir(n, n, n, _short(dt), meta_tiles=True)
            src = os.path.join(out, f"{name}.mlir")
            with open(src, "w") as f:
                f.write(ir)
            for ext, target in (("ptx", "ptx"), ("json", "ptx-launch")):
                with open(os.path.join(out, f"{name}.{ext}"), "w") as f:
                    f.write(_coop_opt(src, target, SPARSE_PIPELINE))
            kernel = json.load(open(os.path.join(out, f"{name}.json")))["kernels"][0]["name"]
            case = {"name": name, "dtype": dt, "n": n, "kernel": kernel, "sparse": True}
            if n == 512:
                _expected_sparse(ir, dt, n, os.path.join(out, name), kernel)
                case["expected"] = True
            cases.append(case)
            print("built", name, flush=True)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


def _short(dt: str) -> str:
    return {"f8E4M3FN": "e4m3", "si8": "s8"}.get(dt, dt)


def _sparse_np(dt: str):
    import ml_dtypes
    return {"f16": np.float16, "f8E4M3FN": ml_dtypes.float8_e4m3fn, "si8": np.int8}[dt]


def _sparse_out(dt: str):
    """numpy dtype of D: f16 for f16 (converted), f32 for e4m3, s32 for s8."""
    return {"f16": np.float16, "f8E4M3FN": np.float32, "si8": np.int32}[dt]


def _expected_sparse(ir: str, dt: str, n: int, stem: str, kernel: str) -> None:
    """2:4 inputs (values, metadata bytes, Bt) and the interpreter's D for an exactness case."""
    from coopdialect import api
    from coopdialect.interpreter.kernel import run_kernel
    from coopdialect.interpreter.sparse_mma import compress
    from coopdialect.kernels.gemm_tiles import SPARSE_TYPES, meta_tile_order

    rng = np.random.default_rng(n)
    dense = rng.integers(-3, 4, (n, n)).astype(np.float64)
    keep = np.zeros((n, n // 4, 4), bool)
    pairs = np.array([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)])
    pick = pairs[rng.integers(0, 6, (n, n // 4))]
    np.put_along_axis(keep, pick, True, axis=2)
    dense = np.where(keep.reshape(n, n), dense, 0).astype(_sparse_np(dt))
    vals, meta = compress(None, dense, 4)
    meta = meta_tile_order(meta.astype(np.uint8), TILE_M, SPARSE_TYPES[_short(dt)][1])
    bt = rng.integers(-3, 4, (n, n)).astype(_sparse_np(dt))
    d = np.zeros((n, n), _sparse_out(dt))
    run_kernel(api.parse(ir), kernel, [vals.astype(_sparse_np(dt)), meta, bt, d],
               grid=(n // TILE_N, n // TILE_M, 1))
    want = dense.astype(np.float64) @ bt.astype(np.float64).T  # integer data: exact sums
    if not np.array_equal(d.astype(np.float64), want.astype(np.float32).astype(d.dtype)):
        raise SystemExit(f"{stem}: the interpreter disagrees with numpy")
    for tag, arr in (("a", vals.astype(_sparse_np(dt))), ("e", meta.astype(np.uint8)), ("bt", bt),
                     ("d", d)):
        np.save(f"{stem}.{tag}.npy", arr.view(np.uint8) if arr.dtype.itemsize == 1 else arr)


def _np_dtype(dt: str):
    import ml_dtypes
    return np.float16 if dt == "f16" else ml_dtypes.bfloat16


def _expected(ir: str, dt: str, n: int, stem: str, kernel: str) -> None:
    """Small-integer inputs and the interpreter's output (the oracle) for an exactness case."""
    from coopdialect import api
    from coopdialect.interpreter.kernel import run_kernel

    rng = np.random.default_rng(n)
    a = rng.integers(-4, 5, (n, n)).astype(_np_dtype(dt))
    bt = rng.integers(-4, 5, (n, n)).astype(_np_dtype(dt))
    d = np.zeros((n, n), _np_dtype(dt))
    run_kernel(api.parse(ir), kernel, [a, bt, d], grid=(n // TILE_N, n // TILE_M, 1))
    np.save(stem + ".a.npy", a)
    np.save(stem + ".bt.npy", bt)
    np.save(stem + ".d.npy", d)


def _median_ms(fn, reps: int = 30) -> float:
    from gpu_timing import median_seconds
    return median_seconds(fn, reps=reps, warm=3) * 1e3


def _interleaved_ms(timers: dict) -> dict:
    from gpu_timing import interleaved_medians
    return interleaved_medians(timers)


def _sustained_ms(timers: dict) -> dict:
    """timer -> (median ms with each kernel run back to back at the clock it sustains, median
    SM clock in MHz or None); `gpu_timing.sustained_medians`."""
    from gpu_timing import SmClock, sustained_medians
    with SmClock() as clock:
        got = sustained_medians(timers)
    return {k: (ms, clock.median(w)) for k, (ms, w) in got.items()}


def _fastest(got: dict, *keys: str):
    """The fastest of the timers `keys` that ran (a baseline timed in both B layouts): its
    entry of `got`, whose values are ms or (ms, clock)."""
    return min((got[k] for k in keys if k in got),
               key=lambda v: v[0] if isinstance(v, tuple) else v)


def _sustained_keys(flop: float, ours: tuple, lib: tuple) -> dict:
    """The sustained figures of a row (keys beside the interleaved `tflops`/`ratio`)."""
    return dict(sustained_tflops=flop / ours[0] / 1e9, sustained_baseline_tflops=flop / lib[0] / 1e9,
                sustained_ratio=lib[0] / ours[0], sustained_clock_mhz=ours[1],
                sustained_baseline_clock_mhz=lib[1])


def _sustained_text(keys: dict) -> str:
    clk = lambda m: f"{m:.0f} MHz" if m else "clock ?"  # noqa: E731
    return (f"  [sustained: {keys['sustained_tflops']:7.1f} at {clk(keys['sustained_clock_mhz'])}"
            f" vs dense library {keys['sustained_baseline_tflops']:7.1f} at {clk(keys['sustained_baseline_clock_mhz'])}"
            f", ratio {keys['sustained_ratio']:.3f}]")


def _torch_timer(fn):
    return lambda reps: _median_ms(fn, reps)


def _coop_timer(dev, prog, kernel, ptrs, grid):
    return lambda reps: statistics.median(dev.time(prog, kernel, ptrs, grid, reps)) * 1e3


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
        if case.get("sparse"):
            line = _run_sparse(dev, prog, case, stem, rows, device, date)
            lines.append(line)
            print(line, flush=True)
            continue
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
        exact = bool(torch.equal(d.view(torch.int16), want.view(torch.int16)))
        oracle = "interpreter" if case.get("expected") else "torch (integer data)"
        line = f"{case['name']}: exact vs {oracle}: {exact}"
        if n >= 4096:
            ar, br = torch.randn(n, n, device="cuda").to(tdt), torch.randn(n, n, device="cuda").to(tdt)
            ptrs = [ar.data_ptr(), br.data_ptr(), d.data_ptr()]
            # cuBLAS at its best for this product: B as given (Bt, a transposed view) or copied
            # row-major once (the faster of the two layouts is the baseline)
            b_rm = br.T.contiguous()
            c = torch.empty(n, n, device="cuda", dtype=tdt)
            timers = {"ours": _coop_timer(dev, prog, case["kernel"], ptrs, grid),
                      "cublas_t": _torch_timer(lambda: torch.matmul(ar, br.T)),
                      "cublas": _torch_timer(lambda: torch.matmul(ar, b_rm))}
            if tri is not None:
                timers["triton"] = _torch_timer(lambda: tri(ar, br, c))
            ms = _interleaved_ms(timers)
            ours, lib = ms["ours"], _fastest(ms, "cublas_t", "cublas")
            flop = 2.0 * n ** 3
            sus = {}
            if n >= SUSTAINED_N:
                st = _sustained_ms(timers)
                sus = _sustained_keys(flop, st["ours"], _fastest(st, "cublas_t", "cublas"))
            cmd = (f"python benchmarks/bench_ptx.py build DIR && python3 benchmarks/bench_ptx.py "
                   f"run DIR  (coop-opt -p '{PIPELINE}' -t ptx)")
            base = dict(name=f"dense_{dt}", device=device, m=n, n=n, k=n, dtype=dt,
                        tflops=flop / ours / 1e9, exact=exact, command=cmd, date=date)
            rows.append(dict(base, baseline="torch.matmul (cuBLAS)",
                             baseline_tflops=flop / lib / 1e9, ratio=lib / ours, **sus))
            line += f"  coop {flop / ours / 1e9:7.1f} TFLOP/s  cuBLAS {flop / lib / 1e9:7.1f}  ratio {lib / ours:.3f}"
            if sus:
                line += _sustained_text(sus)
            if tri is not None:
                tt = ms["triton"]
                tsus = _sustained_keys(flop, st["ours"], st["triton"]) if sus else {}
                rows.append(dict(base, baseline="triton", baseline_tflops=flop / tt / 1e9,
                                 ratio=tt / ours, **tsus))
                line += f"  triton {flop / tt / 1e9:7.1f}  ratio {tt / ours:.3f}"
        lines.append(line)
        print(line, flush=True)
    with open(os.path.join(out, "ptx.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("\n".join(["", "summary:", *lines]))


def _sparse_inputs(n: int, dt: str, seed: int):
    """(dense A, values, metadata bytes, Bt) on the GPU: small integers, a random 2:4 pattern."""
    import torch
    tdt = {"f16": torch.float16, "f8E4M3FN": torch.float8_e4m3fn, "si8": torch.int8}[dt]
    g = torch.Generator(device="cuda").manual_seed(seed)
    pairs = torch.tensor([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)], device="cuda")
    pick = pairs[torch.randint(0, 6, (n, n // 4), device="cuda", generator=g)]  # (n, n/4, 2)
    vals = torch.randint(-3, 4, (n, n // 4, 2), device="cuda", generator=g)
    dense = torch.zeros(n, n // 4, 4, device="cuda", dtype=torch.int64)
    dense.scatter_(2, pick, vals)
    meta = (pick[..., 0] | (pick[..., 1] << 2)).to(torch.uint8)
    bt = torch.randint(-3, 4, (n, n), device="cuda", generator=g)
    conv = (lambda t: t.to(torch.float32).to(tdt)) if dt == "f8E4M3FN" else (lambda t: t.to(tdt))
    return conv(dense.reshape(n, n)), conv(vals.reshape(n, n // 2)), meta.reshape(n, n // 4), conv(bt)


def _run_sparse(dev, prog, case: dict, stem: str, rows: list, device: str, date: str) -> str:
    import torch
    n, dt = case["n"], case["dtype"]
    grid = (n // TILE_N, n // TILE_M, 1)
    out_dt = {"f16": torch.float16, "f8E4M3FN": torch.float32, "si8": torch.int32}[dt]
    if case.get("expected"):
        ld = lambda tag: torch.from_numpy(np.load(f"{stem}.{tag}.npy")).cuda()  # noqa: E731
        a, e, bt, want = ld("a"), ld("e"), ld("bt"), ld("d")
        oracle = "interpreter"
    else:
        from coopdialect.kernels.gemm_tiles import SPARSE_TYPES, meta_tile_order
        dense, a, e, bt = _sparse_inputs(n, dt, n)
        e = meta_tile_order(e, TILE_M, SPARSE_TYPES[_short(dt)][1]).contiguous()
        want = (dense.double() @ bt.double().T).to(out_dt)  # exact sums, one rounding (f16)
        oracle = "torch (integer data)"
    d = torch.full((n, n), -7, device="cuda", dtype=out_dt)
    ptrs = [a.data_ptr(), e.data_ptr(), bt.data_ptr(), d.data_ptr()]
    torch.cuda.synchronize()
    dev.launch(prog, case["kernel"], ptrs, grid)
    iview = torch.int16 if out_dt == torch.float16 else torch.int32
    exact = bool(torch.equal(d.view(iview), want.view(iview)))
    line = f"{case['name']}: exact vs {oracle}: {exact}"
    if n < 4096:
        return line
    flop = 2.0 * n ** 3
    timers = {"ours": _coop_timer(dev, prog, case["kernel"], ptrs, grid)}
    sp_backend = sp_ok = None
    if dt == "f16":
        dense16, b16 = dense, bt.T.contiguous()
        timers["dense"] = _torch_timer(lambda: torch.matmul(dense16, b16))
        timers["dense_t"] = _torch_timer(lambda: torch.matmul(dense16, bt.T))
        try:
            from torch.sparse import SparseSemiStructuredTensor, to_sparse_semi_structured
            SparseSemiStructuredTensor._FORCE_CUTLASS = False
            a_sp = to_sparse_semi_structured(dense16)
            sp_backend = type(a_sp).__name__
            sp_ok = bool(torch.equal((a_sp @ b16).float(), (dense16 @ b16).float()))
            timers["cusparselt"] = _torch_timer(lambda: a_sp @ b16)
        except Exception as ex:  # noqa: BLE001
            sp_backend = f"unavailable: {type(ex).__name__}: {ex}"
    elif dt == "si8":
        # cuBLASLt's fast int8 path wants B column-major (the Bt.T view); take the faster layout
        a8, b8 = dense, bt.T.contiguous()
        timers["dense"] = _torch_timer(lambda: torch._int_mm(a8, b8))
        timers["dense_t"] = _torch_timer(lambda: torch._int_mm(a8, bt.T))
    else:
        one = torch.ones((), device="cuda")
        b8 = bt.T.contiguous().T  # column-major second operand, as _scaled_mm wants
        timers["dense"] = _torch_timer(
            lambda: torch._scaled_mm(dense, b8, one, one, out_dtype=torch.float32))
    ms = _interleaved_ms(timers)
    ours = ms["ours"]
    lib = _fastest(ms, "dense", "dense_t")
    sus = csus = {}
    if n >= SUSTAINED_N:
        st = _sustained_ms(timers)
        sus = _sustained_keys(flop, st["ours"], _fastest(st, "dense", "dense_t"))
        if "cusparselt" in st:
            csus = _sustained_keys(flop, st["ours"], st["cusparselt"])
    short = _short(dt)
    cmd = (f"python benchmarks/bench_ptx.py build DIR && python3 benchmarks/bench_ptx.py run DIR"
           f"  (coop-opt -p '{SPARSE_PIPELINE}' -t ptx)")
    base = dict(device=device, m=n, n=n, k=n, dtype=short, tflops=flop / ours / 1e9, exact=exact,
                command=cmd, date=date)
    line += f"  coop {flop / ours / 1e9:7.1f} dense-equivalent TFLOP/s"
    if dt == "f16":
        rows.append(dict(base, name="sparse24_f16_vs_dense", baseline="torch.matmul (cuBLAS, dense)",
                         baseline_tflops=flop / lib / 1e9, ratio=lib / ours, **sus))
        line += f"  dense cuBLAS {flop / lib / 1e9:7.1f} ratio {lib / ours:.3f}"
        if "cusparselt" in ms:
            cs = ms["cusparselt"]
            rows.append(dict(base, name="sparse24_f16", baseline=f"cuSPARSELt ({sp_backend})",
                             baseline_tflops=flop / cs / 1e9, ratio=cs / ours, **csus))
            line += f"  cuSPARSELt[{sp_backend}, exact {sp_ok}] {flop / cs / 1e9:7.1f} ratio {cs / ours:.3f}"
        else:
            line += f"  cuSPARSELt {sp_backend}"
    elif dt == "si8":
        rows.append(dict(base, name="sparse24_s8", baseline="torch._int_mm (dense s8)",
                         baseline_tflops=flop / lib / 1e9, ratio=lib / ours, **sus))
        line += f"  dense _int_mm {flop / lib / 1e9:7.1f} ratio {lib / ours:.3f}"
    else:
        rows.append(dict(base, name="sparse24_e4m3", baseline="torch._scaled_mm (dense e4m3)",
                         baseline_tflops=flop / lib / 1e9, ratio=lib / ours, **sus))
        line += f"  dense _scaled_mm {flop / lib / 1e9:7.1f} ratio {lib / ours:.3f}"
    if sus:
        line += _sustained_text(sus)
    return line


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
