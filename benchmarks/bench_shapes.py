"""Any-shape GEMM benchmark: one compiled kernel per dtype and tile config, sizes as kernel
arguments, checked and timed against cuBLAS and Triton at their best on the GPU.

```sh
python benchmarks/bench_shapes.py build .shapes                     # here: IR -> PTX + launch
coop-tune run .shapes --out tuned.json                              # on the GPU (optional)
python3 benchmarks/bench_shapes.py run .shapes --out $OUT [--only SET] [--tuned tuned.json]
python benchmarks/bench_shapes.py merge OUT1/shapes.json ... > benchmarks/results/shapes.json
```

`build` writes, for f16 and bf16 and each config of `coopdialect.tools.coop_tune.CONFIGS`, the
kernels of `coopdialect.kernels.gemm` (`gemm_ir`: D = A @ B, A M x K, B given as Bt N x K, all
row-major; `memref<?x?xT>` operands and `%M, %N, %K: i32` arguments; tiles as slices of tensor
layouts, so partial tiles are exact; `splitk_ir` for split-K configs) lowered by that config's
pipeline (`pipeline-coop-loads{stages=S},convert-coop-to-ptx[{persistent=true}]`), and the bias +
GELU kernel of the epilogue rows. Each compiled kernel serves every shape: the shape is only its
arguments.

`run` takes each shape of `SHAPES` (or the set named by `--only`), picks the config with
`coopdialect.kernels.gemm.pick_config` (from the `gemm_tuned` table of `--tuned`, a target
description coop-tune wrote on this GPU, else the default rule), checks our D bit for bit against
torch on small-integer data (exact f32 sums rounded once: torch computes them in f32 with
TF32 off), then times, in 5 alternating rounds of 10 launches in one process
(`gpu_timing.interleaved_medians`), our kernel against:

* cuBLAS: `torch.matmul(A, Bt.T)` and `torch.matmul(A, B)` with a row-major B — the faster one;
* Triton at its best: the tiled matmul autotuned over 8 configs with Bt and with row-major B,
  and the persistent TMA matmul with both (where its descriptors are legal) — the fastest one
  (benchmarks/triton_baselines.py);
* epilogue rows (bias + GELU): the faster of eager `gelu(A @ Bt.T + bias)` and
  `torch.compile` of it; checked against a float64 reference within half an ulp of the output
  type plus the GELU's share of the documented PTX bound of its erf (`_gelu_bound`);
* at 8192³, the Workgroup-tile kernel with static sizes (`coopdialect.kernels.gemm_tiles`,
  the `examples/gemm_{f16,bf16}_wg.mlir` form, through `benchmarks/bench_ptx.py`'s pipeline):
  what writing the sizes as arguments and the tiles as tensor-layout slices costs.

Rows: the keys of benchmarks/results/ptx.json, `m`, `n`, `k` the shape, `config` the tile.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

LLAMA = [(4096, 4096), (14336, 4096), (4096, 14336), (128256, 4096)]  # N x K
SHAPES = {
    "square": [(8192, 8192, 8192), (4096, 4096, 4096), (4095, 4095, 4095), (1000, 1000, 1000)],
    "odd": [(2047, 3073, 8192), (8193, 2501, 5008), (4095, 511, 10000), (127, 4097, 12288)],
    "decode": [(m, n, k) for m in (1, 16, 128) for n, k in LLAMA],
    "prefill": [(m, n, k) for m in (1024, 8192) for n, k in LLAMA],
}
STATIC_N = 8192  # the size of the static Workgroup-tile kernel compared at the same shape
EPILOGUE_SHAPES = [(8192, 8192, 8192), (4096, 14336, 4096), (2047, 3073, 8192), (128, 14336, 4096)]
DTYPES = ("f16", "bf16")


def build(out: str) -> None:
    """Every config of coop-tune (f16, bf16) and the bias + GELU kernel of the largest tile."""
    from coopdialect.tools.coop_tune import CONFIGS, build as build_configs

    build_configs(out)
    index = json.load(open(os.path.join(out, "kernels.json")))
    index += build_configs(os.path.join(out, "epilogue"), epilogues=("bias_gelu",),
                           configs=CONFIGS[:1])
    for k in index[-2:]:
        k["stem"] = os.path.join("epilogue", k["stem"])
    with open(os.path.join(out, "kernels.json"), "w") as f:
        json.dump(index, f, indent=1)
    _build_static(os.path.join(out, "static"))


def _build_static(out: str) -> None:
    """The Workgroup-tile GEMM with static sizes STATIC_N³ (f16, bf16), as bench_ptx builds it."""
    from bench_ptx import PIPELINE, _coop_opt

    from coopdialect.kernels.gemm_tiles import gemm_wg_ir

    os.makedirs(out, exist_ok=True)
    for dt in DTYPES:
        src = os.path.join(out, f"{dt}.mlir")
        with open(src, "w") as f:
            f.write(gemm_wg_ir(STATIC_N, STATIC_N, STATIC_N, dt))
        for ext, target in (("ptx", "ptx"), ("json", "ptx-launch")):
            with open(os.path.join(out, f"{dt}.{ext}"), "w") as f:
                f.write(_coop_opt(src, target, PIPELINE))


def _load_static(dev, root: str, dt: str):
    """(program, kernel name) of the static kernel built by _build_static, or None."""
    stem = os.path.join(root, "static", dt)
    if not os.path.exists(stem + ".ptx"):
        return None
    launch = json.load(open(stem + ".json"))
    return dev.load(open(stem + ".ptx").read(), launch), launch["kernels"][0]["name"]


def _median_ms(fn, reps: int) -> float:
    from gpu_timing import median_seconds
    return median_seconds(fn, reps=reps, warm=2) * 1e3


def _torch_timer(fn):
    return lambda reps: _median_ms(fn, reps)


def run(root: str, out: str, only: list[str], tuned_path: str | None = None) -> None:
    import torch
    import triton_baselines as tb
    from gpu_timing import interleaved_medians

    from coopdialect.kernels import gemm_tiles
    from coopdialect.kernels.gemm import GemmConfig, gemm_launches, pick_config
    from coopdialect.runtime.cuda import CudaDevice
    from coopdialect.tools.coop_tune import Workspaces, load, timer

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    dev = CudaDevice()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    index = json.load(open(os.path.join(root, "kernels.json")))
    progs = load(dev, root)
    workspace = Workspaces()
    cfgs = [GemmConfig(**k["config"]) for k in index if k["epilogue"] == "none"]
    cfgs = list(dict.fromkeys(cfgs))
    tuned = json.load(open(tuned_path))["gemm_tuned"] if tuned_path else None
    tri = {}
    for lay in ("nk", "kn"):
        try:
            tri[f"triton_{lay}"] = tb.tiled(lay)
            p = tb.persistent_tma(lay, sms)
            if p is not None:
                tri[f"triton_tma_{lay}"] = p
        except Exception as e:  # noqa: BLE001 - report and go on without that baseline
            print(f"triton {lay} unavailable: {e}", flush=True)
    rows, lines = [], []
    shapes = [s for name in only if name in SHAPES for s in SHAPES[name]]
    for dt in DTYPES:
        tdt = torch.float16 if dt == "f16" else torch.bfloat16
        for (m, n, k) in shapes:
            cfg = pick_config(m, n, k, cfgs, sms, tuned)
            prog, names = progs[(dt, "none", cfg)]
            # exactness: small integers, sums exact in f32, rounded once to f16/bf16
            g = torch.Generator(device="cuda").manual_seed(m * 7 + n * 3 + k)
            a = torch.randint(-2, 3, (m, k), device="cuda", generator=g).to(tdt)
            bt = torch.randint(-2, 3, (n, k), device="cuda", generator=g).to(tdt)
            want = torch.matmul(a.float(), bt.float().T).to(tdt)
            d = torch.full((m, n), float("nan"), device="cuda", dtype=tdt)
            for launch in gemm_launches(names, cfg, a.data_ptr(), bt.data_ptr(), d.data_ptr(),
                                        m, n, k, workspace=workspace):
                dev.launch(prog, *launch)
            torch.cuda.synchronize()
            exact = bool(torch.equal(d.view(torch.int16), want.view(torch.int16)))
            static = _load_static(dev, root, dt) if m == n == k == STATIC_N else None
            if static is not None:
                sd = torch.full((m, n), float("nan"), device="cuda", dtype=tdt)
                sgrid = gemm_tiles.grid(m, n)  # its 128x256 tiles
                dev.launch(static[0], static[1], [a.data_ptr(), bt.data_ptr(), sd.data_ptr()], sgrid)
                exact = exact and bool(torch.equal(sd.view(torch.int16), want.view(torch.int16)))
            # timing: random data
            a = torch.randn(m, k, device="cuda").to(tdt)
            bt = torch.randn(n, k, device="cuda").to(tdt)
            b = bt.T.contiguous()
            launches = gemm_launches(names, cfg, a.data_ptr(), bt.data_ptr(), d.data_ptr(),
                                     m, n, k, workspace=workspace)
            c = torch.empty(m, n, device="cuda", dtype=tdt)
            timers = {"ours": timer(dev, prog, launches),
                      "cublas_nk": _torch_timer(lambda: torch.matmul(a, bt.T)),
                      "cublas_kn": _torch_timer(lambda: torch.matmul(a, b))}
            if static is not None:  # the same operands, its dispatch of 128x256 tiles
                sargs = [a.data_ptr(), bt.data_ptr(), sd.data_ptr()]
                timers["static"] = timer(dev, static[0], [(static[1], sargs, sgrid)])
            for key, fn in tri.items():
                lay = key.rsplit("_", 1)[1]
                if key.startswith("triton_tma") and not tb.persistent_tma_runs(m, n, k, 2, lay):
                    continue
                operand = bt if lay == "nk" else b
                try:
                    fn(a, operand, c)  # autotune outside the timed rounds
                    torch.cuda.synchronize()
                    timers[key] = _torch_timer(lambda fn=fn, operand=operand: fn(a, operand, c))
                except Exception as e:  # noqa: BLE001
                    print(f"  {key} failed at {m}x{n}x{k}: {str(e).splitlines()[0][:120]}")
            ms = interleaved_medians(timers)
            flop = 2.0 * m * n * k
            ours = ms["ours"]
            cub = min(ms["cublas_nk"], ms["cublas_kn"])
            tkeys = [x for x in ms if x.startswith("triton")]
            cmd = ("python benchmarks/bench_shapes.py build DIR && python3 benchmarks/bench_shapes.py "
                   f"run DIR --tuned T.json  (coop-opt -p '{cfg.pipeline()}' -t ptx)")
            base = dict(name=f"gemm_{dt}", device=device, m=m, n=n, k=k, dtype=dt,
                        config=cfg.name, tflops=flop / ours / 1e9, exact=exact, command=cmd,
                        date=date, ours_ms=ours)
            rows.append(dict(base, baseline="torch.matmul (cuBLAS, faster B layout)",
                             baseline_tflops=flop / cub / 1e9, ratio=cub / ours))
            line = (f"{dt} {m}x{n}x{k} [{cfg.name}] exact={exact} coop {flop / ours / 1e9:7.1f} "
                    f"cuBLAS {flop / cub / 1e9:7.1f} ({cub / ours:.3f})")
            if tkeys:
                best = min(tkeys, key=lambda x: ms[x])
                tt = ms[best]
                rows.append(dict(base, baseline=f"triton ({best})", baseline_tflops=flop / tt / 1e9,
                                 ratio=tt / ours))
                line += f" triton {flop / tt / 1e9:7.1f} ({tt / ours:.3f}, {best})"
            if "static" in ms:
                st = ms["static"]
                rows.append(dict(base, baseline="Workgroup-tile kernel, static sizes "
                                                "(coopdialect.kernels.gemm_tiles)",
                                 baseline_tflops=flop / st / 1e9, ratio=st / ours))
                line += f" static {flop / st / 1e9:7.1f} ({st / ours:.3f})"
            lines.append(line)
            print(line, flush=True)
    if "epilogue" in only:
        _epilogue_rows(dev, progs, rows, lines, device, date)
    with open(os.path.join(out, "shapes.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("\n".join(["", "summary:", *lines]))


def _gelu_bound(dt: str, pre, ref) -> float:
    """The bound of max |D - gelu(pre)| / (|gelu(pre)| + 1) (pre = A @ B + bias in float64, ref
    its GELU; torch tensors): half an ulp of the output type over that denominator is below
    2^-11 (f16) or 2^-8 (bf16) and covers the f32 sum's rounding, which dominates; on top, the
    GELU's share of its erf's documented PTX bound (the kernel's `math.erf fastmath<afn> : f32`,
    coopdialect.math_bounds): gelu(x) = x (1 + erf(x / sqrt 2)) / 2 moves by |x| / 2 times the
    erf's error at x / sqrt 2, evaluated at the largest tolerance over the range of x / sqrt 2."""
    import math

    from coopdialect.math_bounds import ptx_bound

    s = float(pre.abs().max()) / math.sqrt(2)
    grid = np.linspace(-s, s, 4097)
    exact = np.array([math.erf(v) for v in grid])
    erf_tol = float(np.max(ptx_bound("math.erf", "f32", afn=True).tolerance([grid], exact, "f32")))
    share = float((pre.abs() * (0.5 * erf_tol) / (ref.abs() + 1)).max())
    return 2.0 ** (-11 if dt == "f16" else -8) + share


def _epilogue_rows(dev, progs, rows, lines, device, date) -> None:
    import torch
    from gpu_timing import interleaved_medians

    from coopdialect.kernels.gemm import gemm_launches
    from coopdialect.tools.coop_tune import timer

    for dt in DTYPES:
        tdt = torch.float16 if dt == "f16" else torch.bfloat16
        (prog, names), = [v for (d, e, c), v in progs.items() if d == dt and e == "bias_gelu"]
        cfg = [c for (d, e, c) in progs if d == dt and e == "bias_gelu"][0]
        for (m, n, k) in EPILOGUE_SHAPES:
            a = (torch.randn(m, k, device="cuda") / 8).to(tdt)
            bt = (torch.randn(n, k, device="cuda") / 8).to(tdt)
            bias = torch.randn(n, device="cuda").to(tdt)
            d = torch.full((m, n), float("nan"), device="cuda", dtype=tdt)
            launches = gemm_launches(names, cfg, a.data_ptr(), bt.data_ptr(), d.data_ptr(),
                                     m, n, k, bias=bias.data_ptr())
            for launch in launches:
                dev.launch(prog, *launch)
            torch.cuda.synchronize()
            pre = a.double() @ bt.double().T + bias.double()
            ref = torch.nn.functional.gelu(pre)
            err = float(((d.double() - ref).abs() / (ref.abs() + 1)).max())
            bound = _gelu_bound(dt, pre, ref)
            exact = bool(err <= bound)
            eager = lambda: torch.nn.functional.gelu(torch.matmul(a, bt.T) + bias)  # noqa: E731
            compiled = torch.compile(eager)
            compiled()
            timers = {"ours": timer(dev, prog, launches),
                      "eager": _torch_timer(eager), "compiled": _torch_timer(compiled)}
            ms = interleaved_medians(timers)
            flop = 2.0 * m * n * k
            lib = min(ms["eager"], ms["compiled"])
            which = "eager" if ms["eager"] <= ms["compiled"] else "torch.compile"
            rows.append(dict(name=f"gemm_bias_gelu_{dt}", device=device, m=m, n=n, k=k, dtype=dt,
                             config=cfg.name, tflops=flop / ms["ours"] / 1e9, exact=exact,
                             max_rel_error=err, error_bound=bound,
                             baseline=f"gelu(A @ B + bias), {which}",
                             baseline_tflops=flop / lib / 1e9, ratio=lib / ms["ours"],
                             command="python3 benchmarks/bench_shapes.py run DIR --only epilogue",
                             date=date, ours_ms=ms["ours"]))
            line = (f"{dt} bias+gelu {m}x{n}x{k} err {err:.2e} (bound {bound:.1e}) coop "
                    f"{flop / ms['ours'] / 1e9:7.1f} vs {which} {flop / lib / 1e9:7.1f} "
                    f"({lib / ms['ours']:.3f})")
            lines.append(line)
            print(line, flush=True)


def merge(paths: list[str]) -> None:
    rows = []
    for p in paths:
        rows += json.load(open(p))
    print(json.dumps(rows, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("dir")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--out", default=".")
    r.add_argument("--only", default=",".join([*SHAPES, "epilogue"]),
                   help=f"comma-separated shape sets: {', '.join(SHAPES)}, epilogue")
    r.add_argument("--tuned", help="a target description with a gemm_tuned table (coop-tune)")
    m = sub.add_parser("merge")
    m.add_argument("paths", nargs="+")
    a = ap.parse_args()
    if a.cmd == "build":
        build(a.dir)
    elif a.cmd == "run":
        os.makedirs(a.out, exist_ok=True)
        only = [x for x in a.only.split(",") if x]
        run(a.dir, a.out, [x for x in only if x in SHAPES] + (["epilogue"] if "epilogue" in only else []),
            a.tuned)
    else:
        merge(a.paths)


if __name__ == "__main__":
    main()
