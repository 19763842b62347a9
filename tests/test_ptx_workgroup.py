"""Workgroup-scope products op by op through PTX (coopdialect/ptx/wgmma.py, nv2_workgroup.py):
the lowered kernels run by tests/ptx_sim.py (wgmma computed from the shared-memory descriptors
as the PTX ISA defines them: K-major core matrices, f16/bf16 k16 into f32, s8/u8 k32 into
wrapping s32) equal the interpreter bit for bit.

* The wgmma cases of tests/ptx_cases.py (also the GPU's, tests/gpu/test_gpu_ptx.py), each
  first checked against their numpy model: f16/bf16, s8/u8/mixed, saturating, 64-row blocks,
  two warpgroups, N chunks.
* The Vulkan-style GEMM examples as written at a size the simulator runs: gemm_f16_vk and
  gemm_s8_vk (one warpgroup, 128x128 accumulator), gemm_s8_coopmat2_vk (two warpgroups, tensor
  loads) as written and folded; each with 16-byte aligned operands (the vector staging path)
  and with operands moved off alignment (the element path).
* The Workgroup-tile GEMM (examples/gemm_f16_wg.mlir's generator) op by op, and random tiles of
  `coopdialect.kernels.gemm_tiles.workgroup_gemm_ir` (f16 and s8, B row- or column-major, one or
  two warpgroups, one or two row blocks per warpgroup, several N and K steps).
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

import ptx_cases
import ptx_sim
from test_nv2_ptx import _lower, _run_both

ROOT = Path(__file__).resolve().parents[1]
CASES = {c.name: c for c in ptx_cases.wgmma_cases()}


@pytest.mark.parametrize("name", CASES)
def test_wgmma_case_runs_like_the_interpreter_and_the_model(name: str) -> None:
    c = CASES[name]
    ptx_cases.check_model(c, ptx_cases.interpreter_outputs(c))
    bufs = [b.copy() for b in c.buffers]
    ptx_sim.Kernel(_lower(c.mlir, c.name)[c.kernel]).run(bufs, c.grid, c.block)
    for i, want in c.expected.items():
        assert bufs[i].view(np.uint8).tobytes() == want.view(np.uint8).tobytes(), (
            f"{name}: {np.count_nonzero(bufs[i] != want)} elements differ from the model")


def _example(stem: str, n: int) -> str:
    return (ROOT / "examples" / f"{stem}.mlir").read_text().replace("8192", str(n))


@pytest.mark.parametrize("shift", [0, 2])
@pytest.mark.parametrize("stem,dtype", [("gemm_f16_vk", "f16"), ("gemm_s8_vk", "s8")])
def test_vk_example_runs_like_the_interpreter(stem: str, dtype: str, shift: int) -> None:
    """The example at 128^3 (one workgroup, 4 K steps for f16, 2 for s8); shift moves A and B
    by `shift` bytes, so they are not 16-byte aligned: the element staging path."""
    rng = np.random.default_rng(11)
    n = 128
    if dtype == "f16":
        ab = [rng.integers(-4, 5, (n, n)).astype(np.float16) for _ in range(2)]
        c = np.zeros((n, n), np.float32)
    else:
        ab = [rng.integers(-128, 128, (n, n)).astype(np.int8) for _ in range(2)]
        c = np.zeros((n, n), np.int32)
    _run_both(_example(stem, n), stem, stem, [*ab, c], (1, 1, 1), (128, 1, 1),
              shifts=[shift, shift, 0])


@pytest.mark.parametrize("fold,shift", [(False, 0), (True, 0), (True, 1)])
def test_s8_coopmat2_example_runs_like_the_interpreter(fold: bool, shift: int) -> None:
    """examples/gemm_s8_coopmat2_vk.mlir at 256^3, workgroup (0, 0): two warpgroups, a 256x128
    s32 accumulator, A and B staged from tensor loads (16-byte vectors when aligned)."""
    rng = np.random.default_rng(12)
    n = 256
    bufs = [rng.integers(-128, 128, (n, n)).astype(np.int8),
            rng.integers(-128, 128, (n, n)).astype(np.int8), np.zeros((n, n), np.int32)]
    _run_both(_example("gemm_s8_coopmat2_vk", n), "cm2", "gemm_s8_coopmat2_vk", bufs,
              (1, 1, 1), (256, 1, 1), fold=fold, shifts=[shift, shift, 0])


def test_workgroup_tile_gemm_op_by_op() -> None:
    """examples/gemm_f16_wg.mlir's kernel (128x256 tile, two warpgroups, B column-major) at
    128x256x128, without pipeline-coop-loads: the op-by-op wgmma path."""
    from coopdialect.kernels.gemm_tiles import gemm_wg_ir

    rng = np.random.default_rng(13)
    a = rng.integers(-3, 4, (128, 128)).astype(np.float16)
    bt = rng.integers(-3, 4, (256, 128)).astype(np.float16)
    _run_both(gemm_wg_ir(128, 256, 128, "f16"), "wg", "gemm_f16_wg",
              [a, bt, np.zeros((128, 256), np.float16)], (1, 1, 1), (256, 1, 1))


def _tiles(seed: int) -> dict:
    rnd = random.Random(seed)
    dtype = rnd.choice(["f16", "i8"])
    wgs, blocks = rnd.choice([(1, 1), (1, 2), (2, 1)])
    bm = 64 * wgs * blocks
    bn = rnd.choice([16, 32, 48, 64] if dtype == "i8" else [8, 24, 40, 64])
    bk = rnd.choice([32, 64] if dtype == "i8" else [16, 32, 48])
    return dict(m=bm, n=bn * rnd.choice([1, 2]), k=bk * rnd.choice([1, 2]), bm=bm, bn=bn, bk=bk,
                invocations=128 * wgs, dtype=dtype, b_col=rnd.random() < 0.5)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 5, 17])
def test_random_workgroup_tiles_run_like_the_interpreter(seed: int) -> None:
    from coopdialect.kernels.gemm_tiles import grid, workgroup_gemm_ir

    p = _tiles(seed)
    rng = np.random.default_rng(seed)
    m, n, k = p["m"], p["n"], p["k"]
    if p["dtype"] == "f16":
        a = rng.integers(-3, 4, (m, k)).astype(np.float16)
        b = rng.integers(-3, 4, (n, k) if p["b_col"] else (k, n)).astype(np.float16)
        c = np.zeros((m, n), np.float32)
    else:
        a = rng.integers(-128, 128, (m, k)).astype(np.int8)
        b = rng.integers(-128, 128, (n, k) if p["b_col"] else (k, n)).astype(np.int8)
        c = np.zeros((m, n), np.int32)
    text = workgroup_gemm_ir(**p)
    _run_both(text, "tiles", "g", [a, b, c], grid(m, n, p["bm"], p["bn"]),
              (p["invocations"], 1, 1))
