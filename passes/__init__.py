"""coopdialect's passes, one module each; `get_all_passes()` is the registry coop-opt reads."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> zero-argument factory returning the pass class (imports lazily)."""

    def convert_coop_to_spirv():
        from coopdialect.passes.convert_coop_to_spirv import ConvertCoopToSpirvPass
        return ConvertCoopToSpirvPass

    def convert_coop_to_ptx():
        from coopdialect.passes.convert_coop_to_ptx import ConvertCoopToPtxPass
        return ConvertCoopToPtxPass

    def legalize_coop_sizes():
        from coopdialect.passes.legalize_coop_sizes import LegalizeCoopSizesPass
        return LegalizeCoopSizesPass

    def fold_tensor_views():
        from coopdialect.passes.fold_tensor_views import FoldTensorViewsPass
        return FoldTensorViewsPass

    def pipeline_coop_loads():
        from coopdialect.passes.pipeline_coop_loads import PipelineCoopLoadsPass
        return PipelineCoopLoadsPass

    def distribute_coop_workgroup():
        from coopdialect.passes.distribute_coop_workgroup import DistributeCoopWorkgroupPass
        return DistributeCoopWorkgroupPass

    def raise_spirv_to_coop():
        from coopdialect.passes.raise_spirv_to_coop import RaiseSpirvToCoopPass
        return RaiseSpirvToCoopPass

    return {
        "fold-tensor-views": fold_tensor_views,
        "pipeline-coop-loads": pipeline_coop_loads,
        "distribute-coop-workgroup": distribute_coop_workgroup,
        "legalize-coop-sizes": legalize_coop_sizes,
        "convert-coop-to-spirv": convert_coop_to_spirv,
        "convert-coop-to-ptx": convert_coop_to_ptx,
        "raise-spirv-to-coop": raise_spirv_to_coop,
    }
