"""How to launch the kernels of a lowered module: the PTX launch description (JSON-able dict).

    {"format": "coopdialect-ptx-launch", "version": 1,
     "kernels": [{"name": "gemm_dynamic", "block": [128, 1, 1], "grid": "dispatch",
                  "grid_dims": [{"op": "ceildiv", "args": [{"arg": 4}, 64]},
                                {"op": "ceildiv", "args": [{"arg": 3}, 64]}, 1],
                  "dynamic_shared_bytes": 0,
                  "args": [{"name": "A", "dtype": "f16", "shape": [null, null]}, ...,
                           {"name": "M", "dtype": "i32", "scalar": true}, ...],
                  "params": [{"kind": "pointer", "arg": 0}, ...,
                             {"kind": "scalar", "arg": 3, "dtype": "i32"}, ...]}]}

* `block`: threads per CTA (`.reqntid`; the kernel's `coop.workgroup_size`).
* `grid`: `"dispatch"`: the grid is the workgroup count the user dispatches (x, y, z); with
  `grid_dims` (a kernel that declares `coop.grid`), three host expressions
  (`coopdialect.host_expr`: int literals, `{"arg": i}`, `{"op": ..., "args": [e1, e2]}`) that
  give that count from the scalar arguments when the caller gives none. `"persistent"`
  (`convert-coop-to-ptx{persistent=true}`): the host launches min(x * y, multiprocessors) CTAs
  along x and passes the dispatch grid as `grid` params.
* `args`: every argument of the source function, in order: a memref as `{"name", "dtype",
  "shape"}` (`dtype` in MLIR spelling, `shape` in elements, `null` for a dynamic `?` size); a
  scalar as `{"name", "dtype", "scalar": true}` (`dtype` one of i32, i64, index, f32, f16).
* `params`: the `.entry` parameters in order. `{"kind": "pointer", "arg": i}` (`.param .u64`:
  the device address of memref argument i); `{"kind": "scalar", "arg": i, "dtype": D}` (the
  value of scalar argument i: `.param .u32` for i32 (4 bytes), `.u64` for i64 and index (8
  bytes; index is 64-bit in PTX), `.f32` for f32 (4 bytes), `.b16` for f16 (2 bytes),
  little-endian); a `{"kind": "tensor_map", "arg": i, "data_type", "global_dims",
  "global_strides", "box_dims", "element_strides", "interleave", "swizzle", "l2_promotion",
  "oob_fill"}`: a 128-byte CUtensorMap (`.param .align 64 .b8 [128]`) encoded with
  `cuTensorMapEncodeTiled` over argument i's buffer, fields named after that function's
  parameters (dims innermost first in elements, strides in bytes for dims 1.., enums as
  `CU_TENSOR_MAP_*` suffixes; an entry of `global_dims` / `global_strides` may be a host
  expression over the scalar arguments), or a `{"kind": "grid", "dim": "x"|"y"}` of a
  persistent kernel (`.param .u64`: the dispatch's workgroups along it). A warp-specialized
  kernel (`coopdialect.ptx.pipelined`) has `block` larger than its workgroup size (a producer
  warpgroup) and `dynamic_shared_bytes` > 0. The runtime (`coopdialect.runtime.cuda_params`)
  reads every kind; docs/runtime.md describes them.

The op-by-op lowering has one parameter per argument, in argument order.
`coop-opt K.mlir -p convert-coop-to-ptx -t ptx-launch` prints this as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import AffineMapAttr, MemRefType, ModuleOp
from xdsl.ir import Attribute
from xdsl.utils.target import Target

from coopdialect.dialects import ptx
from coopdialect.dialects.coop_kernel import grid_symbol_args, scalar_type_name
from coopdialect.errors import CoopError
from coopdialect.host_expr import from_affine

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


def arg_descs(names: Sequence[str], types: Sequence[Attribute]) -> list[dict]:
    """The `args` of a launch description: one entry per source argument (see the module
    docstring); `names` are the arguments' names (SSA names, or their index)."""
    out = []
    for name, t in zip(names, types):
        if isinstance(t, MemRefType):
            out.append({"name": name, "dtype": str(t.element_type),
                        "shape": [int(d) if d >= 0 else None for d in t.get_shape()]})
        else:
            out.append({"name": name, "dtype": scalar_type_name(t), "scalar": True})
    return out


def scalar_param_desc(i: int, t: Attribute) -> dict:
    """The `params` entry of scalar argument `i` of type `t`."""
    return {"kind": "scalar", "arg": i, "dtype": scalar_type_name(t)}


def grid_desc(grid: AffineMapAttr | None, types: Sequence[Attribute]) -> dict:
    """`{"grid": "dispatch"}`, with `grid_dims` (host expressions) when the kernel declares its
    grid (`coop.grid`, an affine map over the integer scalar arguments)."""
    if grid is None:
        return {"grid": "dispatch"}
    symbols = grid_symbol_args(types)
    return {"grid": "dispatch", "grid_dims": [from_affine(r, symbols) for r in grid.data.results]}


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
    types = list(k.arg_types.data)
    names = [p.data[len(prefix):] if p.data.startswith(prefix) else p.data for p in k.params.data]
    params = [{"kind": "pointer", "arg": i} if isinstance(t, MemRefType)
              else scalar_param_desc(i, t) for i, t in enumerate(types)]
    return {"name": name, "block": [int(x.data) for x in k.reqntid.data],
            **grid_desc(k.grid, types),
            "dynamic_shared_bytes": k.dynamic_shared.data if k.dynamic_shared is not None else 0,
            "args": arg_descs(names, types), "params": params}


class PtxLaunchTarget(Target):
    """`coop-opt -t ptx-launch`: writes the launch description (see `describe`) as JSON."""

    name = "ptx-launch"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(json.dumps(describe(module), indent=1) + "\n")
