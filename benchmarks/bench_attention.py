"""Attention forward benchmark: the kernels of coopdialect.kernels.attention (PTX, and Vulkan for
f16) against torch's scaled_dot_product_attention with each backend torch offers, checked against
float64 and timed in alternating rounds in one process on the GPU.

```sh
python benchmarks/bench_attention.py build .attn                      # here: IR -> PTX + launch
python3 benchmarks/bench_attention.py run .attn --out $OUT [--quick]  # on the GPU (docs/gpu.md)
python benchmarks/bench_attention.py merge OUT1/attention.json ... > benchmarks/results/attention.json
```

`build` writes, for f16 and bf16 at head dims 64 and 128, the kernel `attention_d{D}[_bf16]` of
`coopdialect.kernels.attention`: for PTX with the tiles and stages of `PTX_TUNED` (the PTX and
launch description of `coop-opt K.mlir -p pipeline-coop-loads{stages=S},convert-coop-to-ptx
-t ptx`), for Vulkan with the tiles of examples/attention.mlir (its IR). `run` loads them
with `coopdialect.runtime.cuda.CudaDevice` (the f16 IR compiled there for
`coopdialect.runtime.vulkan.VulkanDevice` too, unless `--no-vulkan`) and, per shape (batch x
heads x sequence), head dim, causal or not and dtype:

* checks O and LSE of a sample of query rows (the first and last 128 of the first and last
  head) against the float64 model within the backend's bound
  (`coopdialect.kernels.attention_bound`, computed here with torch in float64 on the GPU); each
  torch backend's O is checked against the same model (its error is recorded, not bounded);
* times ours and `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=...,
  scale=...)` under `torch.nn.attention.sdpa_kernel(SDPBackend.X)` for X in CUDNN_ATTENTION,
  FLASH_ATTENTION, EFFICIENT_ATTENTION (each tried; one that refuses the shape is left out) in
  5 alternating rounds (`gpu_timing.interleaved_medians`), each turn about 0.3 s of launches;
  the fastest torch backend is the baseline.

FLOP = 4·B·H·S²·D, halved when causal. Rows (`attention.json`): the keys of
benchmarks/results/ptx.json with `m` = S, `n` = `k` = D, plus `batch`, `heads`, `causal`,
`backend` ("ptx" or "vulkan"), `max_error` (of O), `error_bound_ratio` (max |error| / bound over
O and LSE; `exact` is ratio <= 1) and `baselines` (TFLOP/s per torch backend).
Shapes: 16 x 16 heads at S = 1024 ... 16384 and 4 x 32 at 8192, D 64 and 128; `--quick`: f16,
16 x 16 x 1024 and 4 x 32 x 8192; `--dtype`, `--head-dim` and `--seq` run a part (several runs'
files join with `merge`).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SHAPES = [(16, 16, s) for s in (1024, 2048, 4096, 8192, 16384)] + [(4, 32, 8192)]
QUICK = [(16, 16, 1024), (4, 32, 8192)]
DTYPES = ("f16", "bf16")
HEAD_DIMS = (64, 128)
BACKENDS = ("CUDNN_ATTENTION", "FLASH_ATTENTION", "EFFICIENT_ATTENTION")
SAMPLE = 128  # query rows checked at each end of a head
COMMAND = ("python benchmarks/bench_attention.py build DIR && python3 benchmarks/bench_attention.py "
           "run DIR  (coop-opt -p pipeline-coop-loads{stages=S},convert-coop-to-ptx -t ptx)")


def _configs():
    """(PTX config, its stages, Vulkan config) per dtype and head dim."""
    from dataclasses import replace

    from coopdialect.kernels.attention import EXAMPLE, PTX_TUNED

    out = []
    for dt in DTYPES:
        for c in EXAMPLE:
            p, stages = PTX_TUNED[c.head_dim]
            out.append((replace(p, dtype=dt), stages, replace(c, dtype=dt)))
    return out


def _config(d: dict):
    from coopdialect.kernels.attention import AttentionConfig

    return AttentionConfig(d["head_dim"], d["dtype"], d["block_m"], d["block_n"], d["threads"],
                           d.get("min_ctas", 0))


def build(out: str) -> None:
    import warnings

    from coopdialect import api
    from coopdialect.errors import CoopWarning
    from coopdialect.kernels.attention import attention_module, ptx_pipeline
    from coopdialect.ptx.launch import describe
    from coopdialect.ptx.printer import emit_ptx

    os.makedirs(out, exist_ok=True)
    index = []
    warnings.simplefilter("ignore", CoopWarning)  # the staged loops lower op by op, as intended
    for cfg, stages, vcfg in _configs():
        with open(os.path.join(out, f"{cfg.name}.mlir"), "w") as f:
            f.write(attention_module([vcfg]))  # the Vulkan kernel (48 KB of shared memory)
        module = api.parse(attention_module([cfg]), f"{cfg.name}.mlir")
        api.run_pipeline(module, ptx_pipeline(stages))
        with open(os.path.join(out, f"{cfg.name}.ptx"), "w") as f:
            f.write(emit_ptx(module))
        with open(os.path.join(out, f"{cfg.name}.json"), "w") as f:
            json.dump(describe(module), f)
        index.append(dict(name=cfg.name, ptx=dict(cfg.__dict__, stages=stages),
                          vulkan=vcfg.__dict__))
        print(f"built {cfg.name}", flush=True)
    with open(os.path.join(out, "kernels.json"), "w") as f:
        json.dump(index, f, indent=1)


def _stats(q, k, v, scale: float, causal: bool, rows):
    """RowStats of query rows `rows` of one head ([S, D] torch tensors), float64 on the GPU."""
    import torch

    from coopdialect.kernels.attention_bound import LOG2E, RowStats

    seq, d = k.shape
    qd, kd, vd = q[rows].double(), k.double(), v.double()
    sc = float(np.float32(scale))
    s = qd @ kd.T * sc
    sa = qd.abs() @ kd.abs().T * sc
    keep = torch.ones_like(s, dtype=torch.bool)
    if causal:
        keep = torch.arange(seq, device=s.device)[None, :] <= rows[:, None]
    s_m = s.masked_fill(~keep, float("-inf"))
    mx = s_m.max(dim=-1, keepdim=True).values
    e = torch.exp(s_m - mx)
    tot = e.sum(dim=-1, keepdim=True)
    w = e / tot
    zero = torch.zeros((), dtype=s.dtype, device=s.device)
    cpu = lambda x: x.cpu().numpy()  # noqa: E731
    return RowStats(o=cpu(w @ vd), lse=cpu((mx + torch.log(tot))[:, 0]),
                    w_abs_v=cpu(w @ vd.abs()), abs_v=cpu(keep.double() @ vd.abs()),
                    max_t=cpu(torch.where(keep, s.abs(), zero).max(dim=-1).values) * LOG2E,
                    max_abs_t=cpu(torch.where(keep, sa, zero).max(dim=-1).values) * LOG2E,
                    keys=cpu(keep.sum(dim=-1).double()), rows=cpu(rows), head_dim=d, seq=seq)


def _check(cfg, q, k, v, o, lse, scale, causal, device):
    """(max |O error| over the sample, max error/bound over O and LSE); lse None: O only."""
    import torch

    from coopdialect.kernels.attention_bound import error_bound

    b, h, seq, _ = q.shape
    rows = torch.unique(torch.cat([torch.arange(min(SAMPLE, seq)),
                                   torch.arange(max(0, seq - SAMPLE), seq)])).cuda()
    err, ratio = 0.0, 0.0
    for bi, hi in {(0, 0), (b - 1, h - 1)}:
        st = _stats(q[bi, hi], k[bi, hi], v[bi, hi], scale, causal, rows)
        bo, bl = error_bound(st, cfg, causal, device)
        eo = np.abs(o[bi, hi][rows].double().cpu().numpy() - st.o)
        err, ratio = max(err, float(eo.max())), max(ratio, float((eo / bo).max()))
        if lse is not None:
            el = np.abs(lse[bi, hi][rows].double().cpu().numpy() - st.lse)
            ratio = max(ratio, float((el / bl).max()))
    return err, ratio


def _reps(first_ms: float) -> int:
    """Launches per turn: about 0.3 s of them, 1 to 10."""
    return int(min(10, max(1, 300 / max(first_ms, 1e-3))))


def _timer(launch, first_ms: float):
    """A timer for interleaved_medians of a torch launch: median ms of `_reps` launches."""
    from gpu_timing import median_seconds

    reps = _reps(first_ms)
    return lambda _reps: median_seconds(launch, reps=reps, warm=1) * 1e3


def _ms_once(fn) -> float:
    import torch

    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def run(root: str, out: str, quick: bool, vulkan: bool, dtypes=DTYPES, head_dims=HEAD_DIMS,
        seqs=None) -> None:
    import torch

    from coopdialect import api
    from coopdialect.runtime.cuda import CudaDevice

    dev = CudaDevice()
    vk = None
    if vulkan:
        try:
            from coopdialect.runtime.vulkan import VulkanDevice
            vk = VulkanDevice()
        except Exception as e:  # noqa: BLE001 - report and go on without Vulkan
            print(f"Vulkan unavailable: {str(e).splitlines()[0]}", flush=True)
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    kernels = {}
    for k in json.load(open(os.path.join(root, "kernels.json"))):
        cfg, vcfg = _config(k["ptx"]), _config(k["vulkan"])
        stem = os.path.join(root, cfg.name)
        prog = dev.load(open(stem + ".ptx").read(), json.load(open(stem + ".json")))
        vprog = None
        if vk is not None and cfg.dtype == "f16":
            vprog = vk.compile(api.parse(open(stem + ".mlir").read(), stem + ".mlir"))
        kernels[(cfg.dtype, cfg.head_dim)] = ((cfg, k["ptx"]["stages"]), prog, (vcfg, vprog))
    rows, lines = [], []
    shapes = [x for x in (QUICK if quick else SHAPES) if seqs is None or x[2] in seqs]
    for dt in (("f16",) if quick else dtypes):
        tdt = torch.float16 if dt == "f16" else torch.bfloat16
        for d in head_dims:
            cfg, prog, vprog = kernels[(dt, d)]
            for (b, h, s) in shapes:
                g = torch.Generator(device="cuda").manual_seed(s + d)
                q, k, v = (torch.randn(b, h, s, d, device="cuda", generator=g, dtype=tdt)
                           for _ in range(3))
                for causal in (False, True):
                    rows_, line = _case(dev, vk, cfg, prog, vprog, q, k, v, causal, device, date)
                    rows += rows_
                    lines.append(line)
                    print(line, flush=True)
                    with open(os.path.join(out, "attention.json"), "w") as f:
                        json.dump(rows, f, indent=1)  # after each case: a cut run keeps its rows
                del q, k, v
                torch.cuda.empty_cache()
    with open(os.path.join(out, "attention.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("\n".join(["", "summary:", *lines]))


def _case(dev, vk, ptx_cfg, prog, vk_cfg, q, k, v, causal, device, date):
    """The rows (ptx, vulkan) and the printed line of one shape, head dim, dtype and mask;
    `ptx_cfg` is (config, stages), `vk_cfg` (config, compiled program or None)."""
    import torch
    import torch.nn.functional as F
    from gpu_timing import interleaved_medians
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from coopdialect.kernels.attention import grid

    b, h, s, d = q.shape
    scale = float(np.float32(d ** -0.5))
    o = torch.full_like(q, float("nan"))
    lse = torch.full((b, h, s), float("nan"), device="cuda", dtype=torch.float32)
    args = [q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(), b, h, s,
            scale, int(causal)]
    (cfg, stages), (vcfg, vprog) = ptx_cfg, vk_cfg
    gr = grid(cfg, b, h, s)
    dev.launch(prog, cfg.name, args, gr)  # waits for the kernel
    err, ratio = _check(cfg, q, k, v, o, lse, scale, causal, "cuda")
    # the CUDA device's own events on its stream (torch's events would not bracket its launches)
    launches = [(prog, cfg.name, args, gr)]
    first = statistics.median(dev.time_launches(launches, 1)) * 1e3
    reps = _reps(first)
    timers = {"ptx": lambda _reps: statistics.median(dev.time_launches(launches, reps)) * 1e3}
    errors = {}
    for name in BACKENDS:
        backend = getattr(SDPBackend, name, None)
        if backend is None:
            continue

        def sdpa(backend=backend):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
        try:
            ref = sdpa()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - a backend that refuses the shape is left out
            print(f"  {name} unavailable at {b}x{h}x{s} d{d}: {str(e).splitlines()[0][:100]}")
            continue
        errors[name] = _check(cfg, q, k, v, ref, None, scale, causal, "cuda")[0]
        timers[name] = _timer(sdpa, _ms_once(sdpa))
        del ref
    vk_check = None
    if vprog is not None:
        host = [x.cpu().numpy().reshape(-1) for x in (q, k, v)]
        vo, vl = np.zeros_like(host[0]), np.zeros(b * h * s, np.float32)
        vargs = [vk.upload(x) for x in (*host, vo, vl)] + [b, h, s, scale, int(causal)]
        vgr = grid(vcfg, b, h, s)
        vk.launch(vprog, vcfg.name, vargs, vgr)
        got_o = torch.from_numpy(vk.download(vargs[3], vo).reshape(b, h, s, d)).cuda()
        got_l = torch.from_numpy(vk.download(vargs[4], vl).reshape(b, h, s)).cuda()
        vk_check = _check(vcfg, q, k, v, got_o, got_l, scale, causal, "vulkan")
        vreps = _reps(float(np.median(vk.time(vprog, vcfg.name, vargs, vgr, 1))) * 1e3)
        timers["vulkan"] = lambda _reps: float(np.median(vk.time(vprog, vcfg.name, vargs, vgr,
                                                                 vreps))) * 1e3
    ms = interleaved_medians(timers)
    flop = 4.0 * b * h * s * s * d / (2 if causal else 1)
    tf = {key: flop / t / 1e9 for key, t in ms.items()}
    torch_keys = [x for x in ms if x in BACKENDS]
    best = min(torch_keys, key=lambda x: ms[x]) if torch_keys else None
    base = dict(name=cfg.name + ("_causal" if causal else ""), device=device, m=s, n=d, k=d,
                batch=b, heads=h, causal=causal, dtype=cfg.dtype, command=COMMAND, date=date,
                baselines={x: tf[x] for x in torch_keys},
                baseline_errors=errors,
                baseline=f"torch SDPA ({best})" if best else "none",
                baseline_tflops=tf[best] if best else None)
    out = []
    line = (f"{cfg.dtype} d{d} {b}x{h}x{s} {'causal' if causal else 'full'}: ptx {tf['ptx']:6.1f} "
            f"TFLOP/s (err {err:.1e}, {ratio:.2f} of bound)")
    lowering = {"ptx": f"{cfg.block_m}x{cfg.block_n} tiles, " + (
                    f"{stages}-stage bulk tensor copies" if stages else "synchronous staging")
                + (f", {cfg.min_ctas} workgroup{'s' if cfg.min_ctas > 1 else ''} a "
                   "multiprocessor" if cfg.min_ctas else ""),
                "vulkan": f"{vcfg.block_m}x{vcfg.block_n} tiles"}
    for key, checked, c in (("ptx", (err, ratio), cfg), ("vulkan", vk_check, vcfg)):
        if key not in ms:
            continue
        e, r = checked
        out.append(dict(base, backend=key, tflops=tf[key], exact=bool(r <= 1), max_error=e,
                        error_bound_ratio=r, ms=ms[key], block_m=c.block_m, block_n=c.block_n,
                        stages=stages if key == "ptx" else 0, lowering=lowering[key],
                        ratio=tf[key] / tf[best] if best else None))
    if "vulkan" in ms:
        line += f", vulkan {tf['vulkan']:6.1f} ({vk_check[1]:.2f} of bound)"
    if best:
        line += (f"; torch {best} {tf[best]:6.1f} -> ptx/torch {tf['ptx'] / tf[best]:.3f} ("
                 + ", ".join(f"{x} {tf[x]:.0f}" for x in torch_keys) + ")")
    return out, line


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
    r.add_argument("--quick", action="store_true", help="f16, 16x16x1024 and 4x32x8192 only")
    r.add_argument("--no-vulkan", action="store_true", help="time the PTX kernels only")
    r.add_argument("--dtype", default=",".join(DTYPES), help="comma-separated: f16, bf16")
    r.add_argument("--head-dim", default="64,128", help="comma-separated: 64, 128")
    r.add_argument("--seq", help="comma-separated sequence lengths of SHAPES to run (default all)")
    m = sub.add_parser("merge")
    m.add_argument("paths", nargs="+")
    a = ap.parse_args()
    if a.cmd == "build":
        build(a.dir)
    elif a.cmd == "run":
        os.makedirs(a.out, exist_ok=True)
        run(a.dir, a.out, a.quick, not a.no_vulkan, a.dtype.split(","),
            [int(x) for x in a.head_dim.split(",")],
            {int(x) for x in a.seq.split(",")} if a.seq else None)
    else:
        merge(a.paths)


if __name__ == "__main__":
    main()
