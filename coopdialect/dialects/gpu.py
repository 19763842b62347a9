"""The `gpu` dialect as coopdialect reads it: xDSL's, with MLIR's syntax for the id operations.

xDSL 0.74 gives `gpu.block_id`, `gpu.thread_id`, `gpu.subgroup_id`, ... only the generic form.
Kernels are written by hand, so this module defines those operations again with MLIR's custom
syntax (`%x = gpu.block_id x`, `%s = gpu.subgroup_id : index`) and builds a `gpu` dialect that is
xDSL's with these ops swapped in. coopdialect's context registers this dialect under `gpu`;
lowerings and the interpreter match on the classes defined here.
"""

from __future__ import annotations

from xdsl.dialects import gpu as xgpu
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, result_def, traits_def
from xdsl.traits import NoMemoryEffect

DimensionAttr = xgpu.DimensionAttr


class _DimIdOp(IRDLOperation):
    dimension = prop_def(DimensionAttr)
    result = result_def(IndexType)
    traits = traits_def(NoMemoryEffect())
    assembly_format = "$dimension attr-dict"

    def __init__(self, dim: str):
        super().__init__(result_types=[IndexType()],
                         properties={"dimension": DimensionAttr(xgpu.DimensionEnum(dim))})

    @property
    def dim(self) -> str:
        return self.dimension.data.value


class _ScalarIdOp(IRDLOperation):
    result = result_def(IndexType)
    traits = traits_def(NoMemoryEffect())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self):
        super().__init__(result_types=[IndexType()])


def _define(name: str, base: type, doc: str) -> type[IRDLOperation]:
    cls = type(name.title().replace("_", "") + "Op", (base,),
               {"name": f"gpu.{name}", "__doc__": doc, "__module__": __name__})
    return irdl_op_definition(cls)


BlockIdOp = _define("block_id", _DimIdOp, "Workgroup id along x|y|z (SPIR-V WorkgroupId; PTX %ctaid).")
BlockDimOp = _define("block_dim", _DimIdOp, "Workgroup size along x|y|z (from coop.workgroup_size).")
GridDimOp = _define("grid_dim", _DimIdOp, "Number of workgroups along x|y|z (NumWorkgroups; %nctaid).")
ThreadIdOp = _define("thread_id", _DimIdOp, "Local invocation id along x|y|z (LocalInvocationId; %tid).")
GlobalIdOp = _define("global_id", _DimIdOp, "Global invocation id along x|y|z (GlobalInvocationId).")
SubgroupIdOp = _define("subgroup_id", _ScalarIdOp, "Subgroup index in the workgroup (SubgroupId).")
SubgroupSizeOp = _define("subgroup_size", _ScalarIdOp, "Invocations per subgroup (SubgroupSize).")
NumSubgroupsOp = _define("num_subgroups", _ScalarIdOp, "Subgroups per workgroup (NumSubgroups).")
LaneIdOp = _define("lane_id", _ScalarIdOp, "Index within the subgroup (SubgroupLocalInvocationId).")

ID_OPS = (BlockIdOp, BlockDimOp, GridDimOp, ThreadIdOp, GlobalIdOp, SubgroupIdOp, SubgroupSizeOp,
          NumSubgroupsOp, LaneIdOp)
_BY_NAME = {op.name: op for op in ID_OPS}

GPU = Dialect(
    "gpu",
    [_BY_NAME.get(op.name, op) for op in xgpu.GPU.operations],
    list(xgpu.GPU.attributes),
)
