"""The attention kernels (examples/attention.mlir, coopdialect.kernels.attention) on a GPU, at a
sequence length that cuts the last query and key blocks, causal and not.

* `coop-run --device cuda|vulkan --check` on data whose every rounding is exact (scores are small
  integers with scale · log2(e) = 1 exactly in f32, so every exponential is a power of two that
  f16 holds, and every sum is exact in f32 in any order): O must agree with the interpreter
  within one f16 ulp (exact but for Vulkan's OpFDiv, 2.5 ulp of f32, which may move the f16
  rounding) and the LSE within the log2 each backend uses (`--ulp 8`).
* Random data through coopdialect.runtime: O and LSE within the device's bound of the float64
  model (coopdialect.kernels.attention_bound: the exp2, log2, division and tensor-core sums of
  that backend), hence within the sum of the device's and the interpreter's bounds of the
  interpreter's results.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
B, H, S = 2, 3, 200
SCALE = "0.693147182464599609375"  # 0x3F317218: scale * log2(e) rounds to exactly 1.0 in f32


def _exact_inputs(d: int, folder: Path) -> dict[str, str]:
    """Q = K with four entries ±1 per row (scores are integers in [-4, 4], the diagonal's 4 the
    row maximum), V small integers; flat .npy files."""
    rng = np.random.default_rng(d)
    q = np.zeros((B, H, S, d), np.float16)
    for idx in np.ndindex(B, H, S):
        q[idx][rng.choice(d, 4, replace=False)] = rng.choice([-1.0, 1.0], 4)
    v = rng.integers(-3, 4, (B, H, S, d)).astype(np.float16)
    files = {}
    for name, x in (("Q", q), ("K", q), ("V", v)):
        files[name] = str(folder / f"{name}{d}.npy")
        np.save(files[name], x.reshape(-1))
    return files


def _max_ulp(line: str) -> float:
    if line.endswith("bit-exact"):
        return 0.0
    return float(re.search(r"max ([0-9.e+-]+) ulp", line).group(1))


@pytest.mark.parametrize("causal", [0, 1])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("device", ["cuda", "vulkan"])
def test_coop_run_check(request, tmp_path, device, d, causal) -> None:
    request.getfixturevalue(device)  # skipped, or failed under --device, without that device
    files = _exact_inputs(d, tmp_path)
    cmd = [sys.executable, "-P", "-m", "coopdialect.tools.coop_run",
           str(ROOT / "examples/attention.mlir"), "--kernel", f"attention_d{d}", "--device", device,
           "--check", "--ulp", "8", *[a for n, f in files.items() for a in ("--input", f"{n}={f}")],
           "--shape", f"O={B * H * S * d}", "--shape", f"LSE={B * H * S}",
           "--arg", f"B={B}", "--arg", f"H={H}", "--arg", f"S={S}", "--arg", f"scale={SCALE}",
           "--arg", f"causal={causal}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith(("%O ", "%LSE ", "check:"))]
    print("\n".join(lines))
    assert r.returncode == 0 and any(ln.startswith("check: PASS") for ln in lines), (
        f"coop-run {' '.join(cmd[4:])}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    (o_line,) = [ln for ln in lines if ln.startswith("%O ")]
    assert _max_ulp(o_line) <= 1, o_line


def _configs(device: str):
    from coopdialect.kernels.attention import EXAMPLE, AttentionConfig

    out = list(EXAMPLE)
    if device == "cuda":  # bf16 SPIR-V (SPV_KHR_bfloat16) lowers but is not run here yet
        out.append(AttentionConfig(64, "bf16", 128, 64, 256))
    return out


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("index", [0, 1, 2])
@pytest.mark.parametrize("device", ["cuda", "vulkan"])
def test_within_the_bound(request, device, index, causal) -> None:
    import ml_dtypes

    from coopdialect import api
    from coopdialect.kernels.attention import attention_module, grid
    from coopdialect.kernels.attention_bound import error_bound, row_stats

    dev = request.getfixturevalue(device)
    configs = _configs(device)
    if index >= len(configs):
        pytest.skip(f"{device} has {len(configs)} attention configs")
    cfg = configs[index]
    b, h, s = 1, 2, 333
    t = np.float16 if cfg.dtype == "f16" else ml_dtypes.bfloat16
    rng = np.random.default_rng(index + 10 * causal)
    q, k, v = ((rng.standard_normal((b, h, s, cfg.head_dim)) * 1.5).astype(t) for _ in range(3))
    scale = np.float32(cfg.head_dim ** -0.5)
    module = api.parse(attention_module([cfg]), f"{cfg.name}.mlir")

    def run(on):
        o, lse = np.zeros_like(q), np.zeros((b, h, s), np.float32)
        args = [q.reshape(-1), k.reshape(-1), v.reshape(-1), o.reshape(-1), lse.reshape(-1)]
        if on is None:
            api.run_kernel(module, cfg.name, args + [b, h, s, scale, int(causal)])
            return o, lse
        prog = on.compile(module)
        bufs = [on.upload(x) for x in args]
        on.launch(prog, cfg.name, bufs + [b, h, s, scale, int(causal)], grid(cfg, b, h, s))
        return (on.download(bufs[3], args[3]).reshape(q.shape),
                on.download(bufs[4], args[4]).reshape(lse.shape))

    got, want = run(dev), run(None)
    st = row_stats(q, k, v, scale, causal)
    bo, bl = error_bound(st, cfg, causal, device)
    io, il = error_bound(st, cfg, causal, "interp")
    e_o = np.abs(got[0].astype(np.float64) - st.o)
    e_l = np.abs(got[1].astype(np.float64) - st.lse)
    same = np.count_nonzero(got[0] == want[0])
    print(f"{cfg.name} causal={causal}: O error/bound max {(e_o / bo).max():.3f}, LSE "
          f"{(e_l / bl).max():.3f}; {same}/{got[0].size} O elements equal the interpreter's")
    assert (e_o <= bo).all() and (e_l <= bl).all()
    assert (np.abs(got[0].astype(np.float64) - want[0].astype(np.float64)) <= bo + io).all()
    assert (np.abs(got[1].astype(np.float64) - want[1].astype(np.float64)) <= bl + il).all()


FORMS = {"tuned": {}, "plain": {"pingpong": False, "late_pv": False},
         "overlap": {"pingpong": False, "late_pv": False, "overlap": True}}


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d,form", [(64, "tuned"), (128, "tuned"), (128, "plain"),
                                    (128, "overlap")])
def test_tuned_staged_ptx_within_the_bound(cuda, d, form, causal) -> None:
    """The benchmark's PTX kernels (PTX_TUNED: tiles past 48 KB, K and V copied S-1 blocks ahead
    after pipeline-coop-loads, by the bulk tensor copy engine into swizzled tiles, mbarriers
    between copies and reads; at D 128 the warpgroups taking turns and each P V issued a trip
    late), and D 128's plain loop and its overlap form (the next block's product in flight
    during the softmax), at a sequence length that cuts query and key blocks (the engine's
    zero fill past S; the block before the first, which late_pv reads, is all zero fill):
    within the device's bound of the float64 model and of the interpreter's results."""
    import dataclasses
    import warnings

    from coopdialect import api
    from coopdialect.errors import CoopWarning
    from coopdialect.kernels.attention import PTX_TUNED, attention_module, grid, ptx_pipeline
    from coopdialect.kernels.attention_bound import error_bound, row_stats

    cfg, stages = PTX_TUNED[d]
    cfg = dataclasses.replace(cfg, **FORMS[form])
    b, h, s = 1, 2, 333
    rng = np.random.default_rng(d + causal)
    q, k, v = ((rng.standard_normal((b, h, s, d)) * 1.5).astype(np.float16) for _ in range(3))
    scale = np.float32(d ** -0.5)
    module = api.parse(attention_module([cfg]), f"{cfg.name}.mlir")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoopWarning)
        prog = cuda.compile(module, ptx_pipeline(stages))
    args = [q.reshape(-1), k.reshape(-1), v.reshape(-1), np.zeros_like(q).reshape(-1),
            np.zeros(b * h * s, np.float32)]
    bufs = [cuda.upload(x) for x in args]
    cuda.launch(prog, cfg.name, bufs + [b, h, s, scale, int(causal)], grid(cfg, b, h, s))
    o = cuda.download(bufs[3], args[3]).reshape(q.shape)
    lse = cuda.download(bufs[4], args[4]).reshape(b, h, s)
    want = [np.zeros_like(q), np.zeros((b, h, s), np.float32)]
    api.run_kernel(module, cfg.name, args[:3] + [want[0].reshape(-1), want[1].reshape(-1)]
                   + [b, h, s, scale, int(causal)])
    st = row_stats(q, k, v, scale, causal)
    bo, bl = error_bound(st, cfg, causal, "cuda")
    io, il = error_bound(st, cfg, causal, "interp")
    assert (np.abs(o.astype(np.float64) - st.o) <= bo).all()
    assert (np.abs(lse.astype(np.float64) - st.lse) <= bl).all()
    assert (np.abs(o.astype(np.float64) - want[0].astype(np.float64)) <= bo + io).all()
    assert (np.abs(lse.astype(np.float64) - want[1].astype(np.float64)) <= bl + il).all()
