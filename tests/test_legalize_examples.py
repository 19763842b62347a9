"""`fold-tensor-views,legalize-coop-sizes{target=h200-vulkan}` on every non-sparse example:
the pipeline runs through coop-opt, the result verifies, and the interpreter gives the same
output buffers, byte for byte, before and after (integer-valued data, so a K split cannot change a
sum). flexible=false too (where the Workgroup-scope coopmat2 GEMM is refused: only flexible rows
allow it)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from xdsl.dialects import func

from coopdialect.context import make_context
from coopdialect.errors import CoopError
from coopdialect.diagnostics import LocatingParser
from coopdialect.interpreter import run_kernel
from coopdialect.passes.fold_tensor_views import FoldTensorViewsPass
from coopdialect.passes.legalize_coop_sizes import LegalizeCoopSizesPass
from coopdialect.tools.race_soak import small_integer_buffers

EX = os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples")
# the grids stated in the examples' headers
GRIDS = {"conv_patch_clamped.mlir": (4, 4, 1), "gemm_coopmat2_f16.mlir": (2, 2, 1),
         "gemm_f16.mlir": (2, 2, 1), "gemm_f16_64_large.mlir": (1, 1, 1),
         "gemm_s8.mlir": (4, 2, 1), "softmax_rows.mlir": (1, 4, 1), "softmax_exp_rows.mlir": (1, 4, 1),
         "gemm_f16_arm_blocked.mlir": (2, 2, 1),
         "block_decode_load.mlir:dequant_q4": (8, 4, 1), "block_decode_load.mlir:gemm_q4": (2, 4, 1)}
PIPELINE = "fold-tensor-views,legalize-coop-sizes{target=h200-vulkan}"
# sizes of the examples that take them as arguments (grid: the one the kernel declares)
GRIDS["gemm_dynamic.mlir"] = None
GIVEN = {"gemm_dynamic.mlir": {"M": 128, "N": 64, "K": 48, "A": (128, 48), "B": (48, 64),
                               "C": (128, 64)}}
# the any-shape GEMMs at a size whose tiles are cut on every edge
_ANY = {"M": 130, "N": 260, "K": 70, "A": (130, 70), "Bt": (260, 70), "D": (130, 260), "bias": (260,)}
for _key in ("gemm_any.mlir:gemm_f16", "gemm_any.mlir:gemm_f16_bias_gelu",
             "gemm_any_bf16.mlir:gemm_bf16_bias_gelu"):
    GRIDS[_key] = None
    GIVEN[_key] = _ANY
# the attention kernels at a sequence length that cuts the last query and key blocks, causal
for _d in (64, 128):
    _key = f"attention.mlir:attention_d{_d}"
    GRIDS[_key] = None
    GIVEN[_key] = {"B": 1, "H": 2, "S": 100, "scale": 0.125, "causal": 1, "LSE": (200,),
                   **{x: (200 * _d,) for x in "QKVO"}}


def test_every_non_sparse_example_is_covered():
    # the Vulkan GEMM examples (*_vk.mlir) and the Workgroup-tile GEMM examples (*_wg.mlir) are
    # 8192³, too large to interpret here: tests/test_distribute_coop_workgroup.py,
    # tests/test_tensor_examples.py (*_coopmat2_vk.mlir) and tests/test_gemm_wg_examples.py run
    # them (or their generators' output) at small sizes
    names = {f for f in os.listdir(EX) if f.endswith(".mlir") and "sparse" not in f
             and not f.endswith(("_vk.mlir", "_wg.mlir"))}
    assert names == {key.split(":")[0] for key in GRIDS}


def _parse(name: str):
    path = os.path.join(EX, name)
    m = LocatingParser(make_context(), open(path).read(), path).parse_module()
    m.verify()
    return m


def _kernel(module, key: str = "") -> func.FuncOp:
    """The kernel a GRIDS key names (`file:kernel`), or the file's only kernel."""
    wanted = key.split(":")[1] if ":" in key else None
    (k,) = [f for f in module.walk()
            if isinstance(f, func.FuncOp) and "coop.workgroup_size" in f.attributes
            and (wanted is None or f.sym_name.data == wanted)]
    return k


@pytest.mark.parametrize("flexible", [True, False])
@pytest.mark.parametrize("name", sorted(GRIDS))
def test_pipeline_keeps_interpreter_results(name, flexible):
    key, name = name, name.split(":")[0]
    module = _parse(name)
    kernel = _kernel(module, key)
    inputs = small_integer_buffers(kernel, 7, GIVEN.get(key))
    copy = lambda xs: [x.copy() if hasattr(x, "copy") else x for x in xs]  # noqa: E731
    before = copy(inputs)
    run_kernel(module, kernel.sym_name.data, before, GRIDS[key])
    after_mod = _parse(name)
    ctx = make_context()
    FoldTensorViewsPass().apply(ctx, after_mod)
    if name == "gemm_coopmat2_f16.mlir" and not flexible:
        # a Workgroup-scope 128x128x32: only the NV2 flexible-dimension rows allow it
        with pytest.raises(CoopError, match="128x128x32 f16·f16·f32·f32 Workgroup has no native"):
            LegalizeCoopSizesPass(target="h200-vulkan", flexible=False).apply(ctx, after_mod)
        return
    if name.startswith("gemm_any") and not flexible:  # a Workgroup-scope 128x256x64 likewise
        with pytest.raises(CoopError, match="128x256x64 [bf0-9]+·[bf0-9]+·f32·f32 Workgroup has "
                                            "no native"):
            LegalizeCoopSizesPass(target="h200-vulkan", flexible=False).apply(ctx, after_mod)
        return
    if name.startswith("attention") and not flexible:  # and the attention's Q K^T
        with pytest.raises(CoopError, match="(128x64x64|64x64x128) f16·f16·f32·f32 Workgroup has "
                                            "no native"):
            LegalizeCoopSizesPass(target="h200-vulkan", flexible=False).apply(ctx, after_mod)
        return
    LegalizeCoopSizesPass(target="h200-vulkan", flexible=flexible).apply(ctx, after_mod)
    after_mod.verify()
    after = copy(inputs)
    run_kernel(after_mod, kernel.sym_name.data, after, GRIDS[key])
    for x, y in zip(before, after):
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes()


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_pipeline_through_coop_opt(name):
    name = name.split(":")[0]
    r = subprocess.run([sys.executable, "-m", "coopdialect.tools.coop_opt", os.path.join(EX, name), "-p", PIPELINE],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "func.func" in r.stdout
