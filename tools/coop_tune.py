"""`coop-tune`: time the shape-generic GEMM configurations on a GPU and write the fastest per shape
into a target description, where `coopdialect.kernels.gemm.pick_config` finds them.

```sh
coop-tune build DIR                          # compile every config (f16, bf16) to PTX, here
coop-tune run DIR --out my-h200.json         # on the GPU: time them, write the target file
coop-tune run DIR --shapes 16x4096x4096,8192x8192x8192 --target sm90a-ptx --out t.json
```

`build` writes, for each dtype and each config of `CONFIGS` (tile, stages, persistence, split
of K), the kernels of `coopdialect.kernels.gemm` (`gemm_ir`, or `splitk_ir` for split-K) lowered
by the config's pipeline, and `kernels.json` indexing them. `run` times every config at each
shape (f16, random data) in alternating rounds in one process, on the CUDA device, and writes
the target description named by `--target` with two more keys: `gemm_configs` (the configs
timed) and `gemm_tuned` (one entry per shape: `m`, `n`, `k`, the fastest `config` by name, and
every config's time in ms). Sizes whose tensor maps need 16-byte rows are repacked by the
runtime (docs/runtime.md), and timed with the repack.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics

from coopdialect.kernels.gemm import GemmConfig, gemm_ir, gemm_launches, splitk_ir

CONFIGS = [GemmConfig(128, 256, 64, 4, True), GemmConfig(128, 128, 64, 5, True),
           GemmConfig(64, 256, 64, 5, True), GemmConfig(64, 128, 64, 6, True),
           GemmConfig(64, 64, 64, 8, False), GemmConfig(64, 64, 64, 8, False, 8),
           GemmConfig(64, 128, 64, 6, False, 4)]
"""The configurations a GPU run chooses among (sm_90a; each compiles in a few seconds)."""

DEFAULT_SHAPES = [(m, n, k) for m in (1, 16, 128, 1024, 8192)
                  for n, k in ((4096, 4096), (14336, 4096), (4096, 14336), (128256, 4096))] + [
    (8192, 8192, 8192), (4096, 4096, 4096), (1000, 1000, 1000), (2047, 3073, 8192),
    (8193, 2501, 5008), (4095, 511, 10000), (127, 4097, 12288), (4095, 4095, 4095)]


def build(out: str, dtypes=("f16", "bf16"), epilogues=("none",), configs=CONFIGS) -> list[dict]:
    """Compile every (dtype, epilogue, config) into `out`; returns (and writes) the index."""
    from coopdialect import api
    from coopdialect.ptx.launch import describe
    from coopdialect.ptx.printer import emit_ptx

    os.makedirs(out, exist_ok=True)
    index = []
    for dt in dtypes:
        for epi in epilogues:
            for cfg in configs:
                stem = f"{dt}_{epi}_{cfg.name}"
                text = (splitk_ir if cfg.split_k > 1 else gemm_ir)(dt, cfg, epi)
                module = api.parse(text, f"{stem}.mlir")
                api.run_pipeline(module, cfg.pipeline())
                launch = describe(module)
                with open(os.path.join(out, stem + ".mlir"), "w") as f:
                    f.write(text)
                with open(os.path.join(out, stem + ".ptx"), "w") as f:
                    f.write(emit_ptx(module))
                with open(os.path.join(out, stem + ".json"), "w") as f:
                    json.dump(launch, f)
                index.append({"stem": stem, "dtype": dt, "epilogue": epi, "config": cfg.__dict__,
                              "kernels": [k["name"] for k in launch["kernels"]],
                              "pipeline": cfg.pipeline()})
                print("built", stem, flush=True)
    with open(os.path.join(out, "kernels.json"), "w") as f:
        json.dump(index, f, indent=1)
    return index


def load(dev, root: str) -> dict:
    """{(dtype, epilogue, GemmConfig): (program, kernel names)} of a built directory, loaded
    on CUDA device `dev`."""
    out = {}
    for k in json.load(open(os.path.join(root, "kernels.json"))):
        stem = os.path.join(root, k["stem"])
        out[(k["dtype"], k["epilogue"], GemmConfig(**k["config"]))] = (
            dev.load(open(stem + ".ptx").read(), json.load(open(stem + ".json"))), k["kernels"])
    return out


class Workspaces:
    """Scratch buffers for split-K partial sums (torch, on the GPU), one kept per size."""

    def __init__(self):
        self.held: dict[int, object] = {}

    def __call__(self, nbytes: int) -> int:
        import torch
        if nbytes not in self.held:
            self.held = {nbytes: torch.empty(nbytes, dtype=torch.uint8, device="cuda")}
        return self.held[nbytes].data_ptr()


def timer(dev, prog, launches):
    """A timer (reps -> median ms) of the launches, for runtime.timing.interleaved_medians."""
    full = [(prog, name, args, grid) for name, args, grid in launches]
    return lambda reps: statistics.median(dev.time_launches(full, reps)) * 1e3


def run(root: str, shapes, target: str, out: str) -> dict:
    import torch

    from coopdialect.runtime.cuda import CudaDevice
    from coopdialect.runtime.timing import interleaved_medians

    dev = CudaDevice()
    progs = {c: v for (dt, epi, c), v in load(dev, root).items() if dt == "f16" and epi == "none"}
    ws = Workspaces()
    tuned = []
    for (m, n, k) in shapes:
        a = torch.randn(m, k, device="cuda").half()
        bt = torch.randn(n, k, device="cuda").half()
        d = torch.empty(m, n, device="cuda", dtype=torch.half)
        timers = {cfg.name: timer(dev, prog, gemm_launches(names, cfg, a.data_ptr(), bt.data_ptr(),
                                                            d.data_ptr(), m, n, k, workspace=ws))
                  for cfg, (prog, names) in progs.items()}
        ms = interleaved_medians(timers, rounds=3, reps=5)
        best = min(ms, key=ms.get)
        tuned.append({"m": m, "n": n, "k": k, "config": best,
                      "ms": {c: round(t, 5) for c, t in ms.items()}})
        print(f"{m}x{n}x{k}: {best} ({2 * m * n * k / ms[best] / 1e9:.1f} TFLOP/s)", flush=True)
    desc = json.load(open(_target_file(target)))
    desc["name"] = os.path.splitext(os.path.basename(out))[0]
    desc["gemm_configs"] = [c.__dict__ | {"name": c.name} for c in progs]
    desc["gemm_tuned"] = tuned
    from coopdialect.targets import parse_target
    parse_target(desc, out)  # what pick_config will read back
    with open(out, "w") as f:
        json.dump(desc, f, indent=1)
    return desc


def _target_file(target: str) -> str:
    if os.path.exists(target):
        return target
    import coopdialect.targets as t
    return os.path.join(os.path.dirname(t.__file__), f"{target}.json")


def _shapes(text: str):
    try:
        return [tuple(int(x) for x in s.split("x")) for s in text.split(",") if s]
    except ValueError:
        raise SystemExit(f"<command line>: error: --shapes takes MxNxK,... (got {text!r})")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="coop-tune", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile every config to PTX into DIR (no GPU needed)")
    b.add_argument("dir", help="the directory the kernels and kernels.json are written to")
    r = sub.add_parser("run", help="time the configs of DIR on the GPU, write a target file")
    r.add_argument("dir", help="a directory `coop-tune build` wrote")
    r.add_argument("--shapes", default=",".join("x".join(map(str, s)) for s in DEFAULT_SHAPES),
                   help="MxNxK,... the shapes to tune for (default: the benchmark's)")
    r.add_argument("--target", default="sm90a-ptx",
                   help="the target description the result extends (name or .json path)")
    r.add_argument("--out", required=True, help="the target description file to write")
    a = ap.parse_args(argv)
    if a.cmd == "build":
        build(a.dir)
    else:
        run(a.dir, _shapes(a.shapes), a.target, a.out)


if __name__ == "__main__":
    main()
