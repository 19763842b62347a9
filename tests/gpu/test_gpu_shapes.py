"""The shape-generic GEMM kernels (coopdialect.kernels.gemm) on a CUDA GPU: every tile config of
coop-tune (`coopdialect.tools.coop_tune.CONFIGS`) and dtype, and the bias + GELU epilogue of the
largest tile, each compiled once (its config's pipeline, then PTX) and run at shapes with
partial tiles on every edge. Small-integer data, so each f32 sum is exact and rounded once:
bit for bit against torch (TF32 off); the GELU epilogue within the bound of the erf each side
uses (relative 2^-10 for f16, 2^-7 for bf16, as the benchmark's epilogue rows). torch is the
GPU machine's (the reference and the device buffers)."""

from __future__ import annotations

import functools

import pytest

pytestmark = pytest.mark.gpu
SHAPES = [(1, 8, 8), (77, 130, 72), (128, 256, 64), (129, 257, 65), (255, 511, 200),
          (1000, 1000, 1000), (64, 4096, 4096), (300, 1, 9), (4095, 333, 4095), (3, 5, 7)]


def _kernels() -> list[tuple[str, str, int]]:
    """(dtype, epilogue, index into CONFIGS) of every kernel the test compiles."""
    from coopdialect.tools.coop_tune import CONFIGS

    return ([(dt, "none", i) for dt in ("f16", "bf16") for i in range(len(CONFIGS))]
            + [(dt, "bias_gelu", 0) for dt in ("f16", "bf16")])


@functools.lru_cache(maxsize=None)
def _compiled(dtype: str, epilogue: str, index: int):
    """(config, PTX text, launch description, kernel names) of one kernel."""
    from coopdialect import api
    from coopdialect.kernels.gemm import gemm_ir, splitk_ir
    from coopdialect.ptx.launch import describe
    from coopdialect.ptx.printer import emit_ptx
    from coopdialect.tools.coop_tune import CONFIGS

    cfg = CONFIGS[index]
    text = (splitk_ir if cfg.split_k > 1 else gemm_ir)(dtype, cfg, epilogue)
    module = api.parse(text, f"{dtype}_{epilogue}_{cfg.name}.mlir")
    api.run_pipeline(module, cfg.pipeline())
    launch = describe(module)
    return cfg, emit_ptx(module), launch, [k["name"] for k in launch["kernels"]]


@functools.lru_cache(maxsize=None)
def _program(cuda, dtype: str, epilogue: str, index: int):
    cfg, ptx, launch, names = _compiled(dtype, epilogue, index)
    return cfg, cuda.load(ptx, launch), names


def _ids() -> list[str]:
    from coopdialect.tools.coop_tune import CONFIGS

    return [f"{dt}-{epi}-{CONFIGS[i].name}" for dt, epi, i in _kernels()]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("kernel", _kernels(), ids=_ids())
def test_shape_generic_gemm_on_cuda(cuda, kernel, shape) -> None:
    torch = pytest.importorskip("torch", reason="the reference and the buffers are torch's")
    from coopdialect.kernels.gemm import gemm_launches
    from coopdialect.tools.coop_tune import Workspaces

    dtype, epilogue, index = kernel
    m, n, k = shape
    cfg, prog, names = _program(cuda, *kernel)
    torch.backends.cuda.matmul.allow_tf32 = False
    tdt = torch.float16 if dtype == "f16" else torch.bfloat16
    g = torch.Generator(device="cuda").manual_seed(m + 3 * n + 7 * k)
    a = torch.randint(-2, 3, (m, k), device="cuda", generator=g).to(tdt)
    bt = torch.randint(-2, 3, (n, k), device="cuda", generator=g).to(tdt)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=tdt)
    ref = a.float() @ bt.float().T
    bias = None
    if epilogue != "none":
        bias = torch.randint(-2, 3, (n,), device="cuda", generator=g).to(tdt)
        ref = torch.nn.functional.gelu((ref + bias.float()).double()).float()
    for name, args, grid in gemm_launches(names, cfg, a.data_ptr(), bt.data_ptr(), d.data_ptr(),
                                          m, n, k, bias=None if bias is None else bias.data_ptr(),
                                          workspace=Workspaces()):
        cuda.launch(prog, name, args, grid)
    torch.cuda.synchronize()
    if epilogue == "bias_gelu":
        err = float(((d.double() - ref.double()).abs() / (ref.double().abs() + 1)).max())
        assert err <= 2.0 ** (-10 if dtype == "f16" else -7), f"max rel err {err:.2e}"
    else:
        want = ref.to(tdt)
        bad = int((d.view(torch.int16) != want.view(torch.int16)).sum())
        assert bad == 0, f"{bad} of {m * n} elements differ from torch"
