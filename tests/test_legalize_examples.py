"""`fold-tensor-views,legalize-coop-sizes{target=T}` on every non-sparse example, for the Vulkan
target (h200-vulkan) and the PTX one (sm90a-ptx): the pipeline runs through coop-opt, the result
verifies, and the interpreter gives the same output buffers, byte for byte, before and after
(integer-valued data, so a K split cannot change a sum). flexible=false too (where a
Workgroup-scope GEMM is refused on h200-vulkan: only flexible rows allow it).

Every example legalized for sm90a-ptx lowers through convert-coop-to-ptx (in the pipeline its
PTX route takes) to PTX that ptxas assembles without a word: tests/test_ptx_ptxas.py
(`_legalized_route`), with the example's other routes; the examples legalize refuses are
checked here."""

from __future__ import annotations

import os

import numpy as np
import pytest
from xdsl.dialects import func

from coopdialect.context import make_context
from coopdialect.errors import CoopError
from coopdialect.interpreter import run_kernel
from coopdialect.passes.fold_tensor_views import FoldTensorViewsPass
from coopdialect.passes.legalize_coop_sizes import LegalizeCoopSizesPass
from coopdialect.tools.race_soak import small_integer_buffers
from cli import run_coop_opt
import parsed

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
    return parsed.parse_file(os.path.join(EX, name))


_RESULTS: dict[tuple[str, str], list] = {}


def _interpreted(module, key: str, inputs: list) -> list:
    """The buffers after running GRIDS key `key`'s kernel of `module` on (copies of) `inputs`.
    The interpreter is a function of the IR and the inputs, so a module that prints the same as
    one run before for this key (the original module for each target, and the legalized one
    where two targets legalize alike) is not run again."""
    ir = str(module)
    if (key, ir) not in _RESULTS:
        out = [x.copy() if hasattr(x, "copy") else x for x in inputs]
        run_kernel(module, _kernel(module, key).sym_name.data, out, GRIDS[key])
        _RESULTS[key, ir] = out
    return _RESULTS[key, ir]


def _kernel(module, key: str = "") -> func.FuncOp:
    """The kernel a GRIDS key names (`file:kernel`), or the file's only kernel."""
    wanted = key.split(":")[1] if ":" in key else None
    (k,) = [f for f in module.walk()
            if isinstance(f, func.FuncOp) and "coop.workgroup_size" in f.attributes
            and (wanted is None or f.sym_name.data == wanted)]
    return k


# sm90a-ptx with flexible=false keeps the instruction shapes only (16x8 mma.sync tiles, 64-row
# wgmma tiles), which the reductions, tensor loads and Arm layouts of several examples cannot be
# split into: refused there, and the PTX backend takes the flexible rows' whole matrices
# Examples legalize-coop-sizes refuses for a target, with the reason: the attention kernel's
# Workgroup products (64-row blocks, 128 invocations for d128) are not among sm90a-ptx's
# flexible rows, and its tiles come through 3-D layouts, which legalize cannot split. The PTX
# backend takes them whole as written (no legalization needed); the target's Workgroup row
# does not describe that yet.
LEGALIZE_REFUSED = {"attention.mlir": (("sm90a-ptx",), "cannot be split into native tiles")}


@pytest.mark.parametrize("target,flexible", [("h200-vulkan", True), ("h200-vulkan", False),
                                             ("sm90a-ptx", True)])
@pytest.mark.parametrize("name", sorted(GRIDS))
def test_pipeline_keeps_interpreter_results(name, flexible, target):
    key, name = name, name.split(":")[0]
    module = _parse(name)
    kernel = _kernel(module, key)
    inputs = small_integer_buffers(kernel, 7, GIVEN.get(key))
    before = _interpreted(module, key, inputs)
    after_mod = _parse(name)
    ctx = make_context()
    FoldTensorViewsPass().apply(ctx, after_mod)
    vulkan_fixed = target == "h200-vulkan" and not flexible
    if name == "gemm_coopmat2_f16.mlir" and vulkan_fixed:
        # a Workgroup-scope 128x128x32: only the NV2 flexible-dimension rows allow it
        with pytest.raises(CoopError, match="128x128x32 f16·f16·f32·f32 Workgroup has no native"):
            LegalizeCoopSizesPass(target=target, flexible=False).apply(ctx, after_mod)
        return
    if name.startswith("gemm_any") and vulkan_fixed:  # a Workgroup-scope 128x256x64 likewise
        with pytest.raises(CoopError, match="128x256x64 [bf0-9]+·[bf0-9]+·f32·f32 Workgroup has "
                                            "no native"):
            LegalizeCoopSizesPass(target=target, flexible=False).apply(ctx, after_mod)
        return
    if name in LEGALIZE_REFUSED and target in LEGALIZE_REFUSED[name][0]:
        with pytest.raises(CoopError, match=LEGALIZE_REFUSED[name][1]):
            LegalizeCoopSizesPass(target=target, flexible=flexible).apply(ctx, after_mod)
        return
    if name.startswith("attention") and vulkan_fixed:  # and the attention's Q K^T
        with pytest.raises(CoopError, match="(128x64x64|64x64x128) f16·f16·f32·f32 Workgroup has "
                                            "no native"):
            LegalizeCoopSizesPass(target=target, flexible=False).apply(ctx, after_mod)
        return
    LegalizeCoopSizesPass(target=target, flexible=flexible).apply(ctx, after_mod)
    after_mod.verify()
    after = _interpreted(after_mod, key, inputs)
    for x, y in zip(before, after):
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes()


@pytest.mark.parametrize("target", ["h200-vulkan", "sm90a-ptx"])
@pytest.mark.parametrize("name", sorted({key.split(":")[0] for key in GRIDS}))
def test_pipeline_through_coop_opt(name, target):
    pipeline = PIPELINE.replace("h200-vulkan", target)
    r = run_coop_opt([os.path.join(EX, name), "-p", pipeline])
    if name in LEGALIZE_REFUSED and target in LEGALIZE_REFUSED[name][0]:
        assert r.returncode == 1 and LEGALIZE_REFUSED[name][1] in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        return
    assert r.returncode == 0, r.stderr
    assert "func.func" in r.stdout


# -- legalized for sm90a-ptx, lowered to PTX ----------------------------------------------------
# tests/test_ptx_ptxas.py's test_every_example_assembles takes every example through
# `_legalized_route` (its PTX route with legalize-coop-sizes{target=sm90a-ptx}) to ptxas, with
# its other routes, so that an IR two routes share is lowered and assembled once.


@pytest.mark.parametrize("name", sorted(LEGALIZE_REFUSED))
def test_legalize_refusals_hold(name):
    """Each example kept out of that legalized route is refused by legalize-coop-sizes, with the
    reason written down (so an entry cannot outlive the refusal)."""
    targets, why = LEGALIZE_REFUSED[name]
    for target in targets:
        module = _parse(name)
        ctx = make_context()
        FoldTensorViewsPass().apply(ctx, module)
        with pytest.raises(CoopError, match=why):
            LegalizeCoopSizesPass(target=target).apply(ctx, module)
