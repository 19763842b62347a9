"""How to launch the kernels of a lowered module: the PTX launch description (JSON-able dict).

    {"format": "coopdialect-ptx-launch", "version": 1,
     "kernels": [{"name": "gemm_f16", "block": [128, 1, 1], "grid": "dispatch",
                  "dynamic_shared_bytes": 0,
                  "args": [{"name": "A", "dtype": "f16", "shape": [128, 256]}, ...],
                  "params": [{"kind": "pointer", "arg": 0}, ...]}]}

* `block`: threads per CTA (`.reqntid`; the kernel's `coop.workgroup_size`).
* `grid`: `"dispatch"`: the grid is the workgroup count the user dispatches (x, y, z);
  `"persistent"` (`convert-coop-to-ptx{persistent=true}`): the host launches
  min(x * y, multiprocessors) CTAs along x and passes the dispatch grid as `grid` params.
* `args`: the source function's memref arguments in order (`dtype` in MLIR spelling, `shape` in
  elements); `params`: the `.entry` parameters in order. Today every parameter is a
  `{"kind": "pointer", "arg": i}` (`.param .u64`: the device address of memref argument i), or
  a `{"kind": "tensor_map", "arg": i, "data_type", "global_dims", "global_strides", "box_dims",
  "element_strides", "interleave", "swizzle", "l2_promotion", "oob_fill"}`: a 128-byte
  CUtensorMap (`.param .align 64 .b8 [128]`) encoded with `cuTensorMapEncodeTiled` over argument
  i's buffer, fields named after that function's parameters (dims innermost first in elements,
  strides in bytes for dims 1.., enums as `CU_TENSOR_MAP_*` suffixes), or a `{"kind": "grid",
  "dim": "x"|"y"}` of a persistent kernel (`.param .u64`: the dispatch's workgroups along it). A warp-specialized
  kernel (`coopdialect.ptx.pipelined`) has `block` larger than its workgroup size (a producer
  warpgroup) and `dynamic_shared_bytes` > 0. The runtime (`coopdialect.runtime.cuda_params`)
  reads both kinds; docs/runtime.md describes them.

`coop-opt K.mlir -p convert-coop-to-ptx -t ptx-launch` prints this as JSON.
"""

from __future__ import annotations

import json
from typing import IO

from xdsl.utils.target import Target
from xdsl.context import Context
from xdsl.dialects.builtin import MemRefType, ModuleOp

from coopdialect.dialects import ptx
from coopdialect.errors import CoopError

FORMAT = "coopdialect-ptx-launch"
VERSION = 1


def describe(module: ModuleOp) -> dict:
    """The launch description of every `ptx.kernel` of `module` (the output of convert-coop-to-ptx).

    Raises CoopError (one line, at the kernel) when the module has no kernel, or a kernel lacks
    its workgroup size (`.reqntid`) or its argument types.
    """
    kernels = [op for op in module.ops if isinstance(op, ptx.KernelOp)]
    if not kernels:
        raise CoopError(None, "no ptx.kernel in the module (run convert-coop-to-ptx)",
                        where="<module>")
    return {"format": FORMAT, "version": VERSION, "kernels": [_kernel(k) for k in kernels]}


def _kernel(k: ptx.KernelOp) -> dict:
    name = k.sym_name.data
    if k.launch is not None:  # the lowering wrote a richer description (tensor maps, smem)
        return json.loads(k.launch.data)
    if k.reqntid is None:
        raise CoopError(k, f"kernel '{name}' has no .reqntid: give its function a "
                           "coop.workgroup_size so that the launch knows its block size")
    if k.arg_types is None or len(k.arg_types.data) != len(k.params.data):
        raise CoopError(k, f"kernel '{name}' does not record its argument types")
    prefix = f"{name}_param_"
    args = []
    for p, t in zip(k.params.data, k.arg_types.data):
        assert isinstance(t, MemRefType)  # the lowering accepts memref arguments only
        pname = p.data[len(prefix):] if p.data.startswith(prefix) else p.data
        args.append({"name": pname, "dtype": str(t.element_type),
                     "shape": [int(d) for d in t.get_shape()]})
    return {"name": name, "block": [int(x.data) for x in k.reqntid.data], "grid": "dispatch",
            "dynamic_shared_bytes": 0, "args": args,
            "params": [{"kind": "pointer", "arg": i} for i in range(len(args))]}


class PtxLaunchTarget(Target):
    """`coop-opt -t ptx-launch`: writes the launch description (see `describe`) as JSON."""

    name = "ptx-launch"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(json.dumps(describe(module), indent=1) + "\n")
