"""Every example through `coop-run --device D --check` on a GPU: the device's buffers against the
interpreter's on random data (docs/runtime.md), as a user runs it.

CUDA: every example the PTX backend takes at an interpretable size (gemm_f16, gemm_f16_64_large,
gemm_s8, gemm_dynamic at two shapes given as scalar arguments, sparse_gemm_f16 with valid 2:4
metadata, gemm_coopmat2_f16, conv_patch_clamped,
softmax_rows, both block_decode_load kernels on Q4_0 blocks, gemm_f16_arm_blocked), and the
8192³ Workgroup-scope GEMMs on a corner of their grid (2 x 2 or 2 x 1 workgroups: the
interpreter runs those in seconds): gemm_f16_vk and gemm_s8_vk op by op (wgmma) and through
their Vulkan pipeline's first passes (mma.sync tiles), gemm_s8_coopmat2_vk as written and
folded, gemm_f16_wg op by op (its staged form: test_gpu_stage.py). Vulkan: every example the
SPIR-V backend takes (gemm_f16 and gemm_s8 in both flavors, gemm_dynamic at the same two shapes
(push constants), gemm_f16_64_large through
legalize-coop-sizes split and flexible, gemm_coopmat2_f16 as written and folded,
conv_patch_clamped, softmax_rows, both DecodeFunc kernels unfolded and folded); its 8192³
`*_wg` / `*_vk` examples: test_gpu_stage.py, test_gpu_vk_gemm.py and the benchmarks. On both,
gemm_any at 200x300x72 (partial tiles on every edge). Some runs add `--bench 20`, so the timing
path runs too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
NV = "convert-coop-to-spirv{flavor=nv}"
# the *_vk examples' Vulkan pipeline before its conversion, for PTX: subgroup mma.sync tiles
VK_PTX = ("pipeline-coop-loads{stages=2},distribute-coop-workgroup,"
          "legalize-coop-sizes{target=sm90a-ptx flexible=false}")
Q = ("--input", "Q={q4_0}")
# one module, sizes as scalar arguments, the grid it declares, two shapes
DYN1 = ("--arg", "M=1024", "--arg", "N=512", "--arg", "K=256", "--shape", "A=1024x256",
        "--shape", "B=256x512", "--shape", "C=1024x512")
DYN2 = ("--arg", "M=192", "--arg", "N=320", "--arg", "K=80", "--shape", "A=192x80",
        "--shape", "B=80x320", "--shape", "C=192x320")
# the any-shape GEMM at a shape with partial tiles on every edge (128x256 tiles, K steps of 64)
ANY = ("gemm_any", "--kernel", "gemm_f16", "--arg", "M=200", "--arg", "N=300", "--arg", "K=72",
       "--shape", "A=200x72", "--shape", "Bt=300x72", "--shape", "D=200x300")
CUDA = {  # name: coop-run arguments after the example's path ({q4_0}, {meta24}: the inputs below)
    "gemm_f16": ("gemm_f16", "--grid", "2,2,1", "--bench", "20"),
    "gemm_f16_64_large": ("gemm_f16_64_large", "--grid", "1,1,1"),
    "gemm_s8": ("gemm_s8", "--grid", "4,2,1", "--bench", "20"),
    "gemm_dynamic_1024x512x256": ("gemm_dynamic", *DYN1, "--bench", "20"),
    "gemm_dynamic_192x320x80": ("gemm_dynamic", *DYN2),
    "sparse_gemm_f16": ("sparse_gemm_f16", "--grid", "2,4,1", "--input", "E={meta24}",
                        "--bench", "20"),
    "gemm_coopmat2_f16": ("gemm_coopmat2_f16", "--grid", "2,2,1", "--bench", "20"),
    "conv_patch_clamped": ("conv_patch_clamped", "--grid", "4,4,1"),
    "softmax_rows": ("softmax_rows", "--grid", "1,4,1"),
    "dequant_q4": ("block_decode_load", "--kernel", "dequant_q4", "--grid", "8,4,1", *Q),
    "gemm_q4": ("block_decode_load", "--kernel", "gemm_q4", "--grid", "2,4,1", *Q),
    "gemm_any_200x300x72": ANY,
    # Workgroup-scope products op by op (wgmma on staged shared-memory tiles), the 8192^3
    # examples on a corner of their grid
    "gemm_f16_vk": ("gemm_f16_vk", "--grid", "2,2,1", "--bench", "20"),
    "gemm_f16_vk_subgroups": ("gemm_f16_vk", "--grid", "2,2,1", "--pipeline", VK_PTX),
    "gemm_s8_vk": ("gemm_s8_vk", "--grid", "2,2,1", "--bench", "20"),
    "gemm_s8_vk_subgroups": ("gemm_s8_vk", "--grid", "2,2,1", "--pipeline", VK_PTX),
    "gemm_s8_coopmat2_vk": ("gemm_s8_coopmat2_vk", "--grid", "2,1,1", "--bench", "20"),
    "gemm_s8_coopmat2_vk_folded": ("gemm_s8_coopmat2_vk", "--grid", "2,1,1", "--pipeline",
                                   "fold-tensor-views"),
    "gemm_f16_wg_op_by_op": ("gemm_f16_wg", "--grid", "2,1,1"),
    "gemm_f16_arm_blocked": ("gemm_f16_arm_blocked", "--grid", "2,2,1"),
}
VULKAN = {
    "gemm_f16": ("gemm_f16", "--grid", "2,2,1", "--bench", "20"),
    "gemm_f16_nv": ("gemm_f16", "--grid", "2,2,1", "--pipeline", NV),
    "gemm_s8": ("gemm_s8", "--grid", "4,2,1"),
    "gemm_dynamic_1024x512x256": ("gemm_dynamic", *DYN1, "--bench", "20"),
    "gemm_dynamic_192x320x80": ("gemm_dynamic", *DYN2),
    "gemm_s8_nv": ("gemm_s8", "--grid", "4,2,1", "--pipeline", NV),
    "gemm_f16_64_large_split": ("gemm_f16_64_large", "--grid", "1,1,1", "--pipeline",
                                "legalize-coop-sizes{target=h200-vulkan flexible=false}"),
    "gemm_f16_64_large_flexible": ("gemm_f16_64_large", "--grid", "1,1,1", "--pipeline",
                                   "legalize-coop-sizes{target=h200-vulkan}"),
    "gemm_coopmat2_f16": ("gemm_coopmat2_f16", "--grid", "2,2,1", "--bench", "20"),
    "gemm_coopmat2_f16_folded": ("gemm_coopmat2_f16", "--grid", "2,2,1", "--pipeline",
                                 "fold-tensor-views"),
    "conv_patch_clamped": ("conv_patch_clamped", "--grid", "4,4,1"),
    "softmax_rows": ("softmax_rows", "--grid", "1,4,1"),
    "dequant_q4": ("block_decode_load", "--kernel", "dequant_q4", "--grid", "8,4,1", *Q),
    "gemm_q4": ("block_decode_load", "--kernel", "gemm_q4", "--grid", "2,4,1", *Q),
    "dequant_q4_folded": ("block_decode_load", "--kernel", "dequant_q4", "--grid", "8,4,1", *Q,
                          "--pipeline", "fold-tensor-views"),
    "gemm_q4_folded": ("block_decode_load", "--kernel", "gemm_q4", "--grid", "2,4,1", *Q,
                       "--pipeline", "fold-tensor-views"),
    "gemm_any_200x300x72": ANY,
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, str]:
    """Inputs random data cannot give: Q4_0 blocks (f16 scales; tests/test_decode_func.py) and
    valid 2:4 metadata (PTX ISA 9.7.15.6.1), as .npy files."""
    from test_decode_func import make_q4_0

    d = tmp_path_factory.mktemp("inputs")
    np.save(d / "q4_0.npy", make_q4_0(np.random.default_rng(1))[0])
    np.save(d / "meta24.npy", np.random.default_rng(2).choice(
        np.array([0x4, 0x8, 0xC, 0x9, 0xD, 0xE], np.uint8), (256, 64)))
    return {"q4_0": str(d / "q4_0.npy"), "meta24": str(d / "meta24.npy")}


def _fill(arg: str, inputs: dict[str, str]) -> str:
    """`arg` with the {name} input paths put in (a pass pipeline's own braces left alone)."""
    for name, path in inputs.items():
        arg = arg.replace("{" + name + "}", path)
    return arg


def _coop_run(device: str, args: tuple[str, ...], inputs: dict[str, str]) -> None:
    example, *rest = args
    # -P: the installed coopdialect, never a source tree on the current directory
    cmd = [sys.executable, "-P", "-m", "coopdialect.tools.coop_run",
           str(ROOT / "examples" / f"{example}.mlir"), "--device", device, "--check",
           *(_fill(a, inputs) for a in rest)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    report = [ln for ln in r.stdout.splitlines() if ln.startswith(("check:", "bench:"))]
    print("\n".join(report))
    assert r.returncode == 0 and any(ln.startswith("check: PASS") for ln in report), (
        f"coop-run {' '.join(cmd[4:])}: exit {r.returncode}\n{r.stdout}{r.stderr}")


@pytest.mark.parametrize("name", CUDA)
def test_example_on_cuda(cuda, inputs, name: str) -> None:
    _coop_run("cuda", CUDA[name], inputs)


@pytest.mark.parametrize("name", VULKAN)
def test_example_on_vulkan(vulkan, inputs, name: str) -> None:
    _coop_run("vulkan", VULKAN[name], inputs)
