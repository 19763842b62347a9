"""Interpreter impls of the gpu id ops of `coopdialect.dialects.gpu` and of `gpu.barrier`.

One interpreter runs one subgroup (see `coopdialect.interpreter.common.SubgroupContext`):

* uniform ints: `gpu.block_id`, `gpu.grid_dim`, `gpu.block_dim` (x|y|z), `gpu.subgroup_id`,
  `gpu.num_subgroups`, `gpu.subgroup_size`;
* lane vectors (int64 arrays of shape (subgroup_size,), one entry per invocation):
  `gpu.lane_id` = arange(subgroup_size); `gpu.thread_id` from each lane's LocalInvocationIndex
  `i = subgroup_id*subgroup_size + lane` as x = i % X, y = (i / X) % Y, z = i / (X*Y) (subgroups
  take consecutive LocalInvocationIndex values, which is what Vulkan drivers and CUDA do; the
  specs only guarantee it for 1-D workgroups); `gpu.global_id` = block_id*block_dim + thread_id.
  Lanes past the end of a partial last subgroup are inactive: their ids run past the workgroup.
* `gpu.barrier`: the lock-step runner (`coopdialect.interpreter.lockstep`) executes it itself,
  as the point that all subgroups of a workgroup reach together; this impl only serves a barrier
  reached another way (a bare `Interpreter`, a `func.call`ed function), where it is a no-op for a
  single subgroup and an error for several.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import gpu as xgpu
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from coopdialect.dialects import gpu
from coopdialect.interpreter.common import fail, subgroup_context

_AXIS = {"x": 0, "y": 1, "z": 2}


def _thread_ids(interpreter: Interpreter, axis: int) -> np.ndarray:
    ctx = subgroup_context(interpreter)
    x, y, _ = ctx.block_dim
    i = ctx.local_index()
    return (i % x, (i // x) % y, i // (x * y))[axis]


@register_impls
class GpuFunctions(InterpreterFunctions):
    """Ids of the running subgroup and the workgroup barrier (module docstring)."""

    @impl(gpu.BlockIdOp)
    def run_block_id(self, interpreter: Interpreter, op, args: PythonValues):
        return (subgroup_context(interpreter).block_id[_AXIS[op.dim]],)

    @impl(gpu.GridDimOp)
    def run_grid_dim(self, interpreter: Interpreter, op, args: PythonValues):
        return (subgroup_context(interpreter).grid[_AXIS[op.dim]],)

    @impl(gpu.BlockDimOp)
    def run_block_dim(self, interpreter: Interpreter, op, args: PythonValues):
        return (subgroup_context(interpreter).block_dim[_AXIS[op.dim]],)

    @impl(gpu.ThreadIdOp)
    def run_thread_id(self, interpreter: Interpreter, op, args: PythonValues):
        return (_thread_ids(interpreter, _AXIS[op.dim]),)

    @impl(gpu.GlobalIdOp)
    def run_global_id(self, interpreter: Interpreter, op, args: PythonValues):
        ctx = subgroup_context(interpreter)
        a = _AXIS[op.dim]
        return (ctx.block_id[a] * ctx.block_dim[a] + _thread_ids(interpreter, a),)

    @impl(gpu.SubgroupIdOp)
    def run_subgroup_id(self, interpreter: Interpreter, op, args: PythonValues):
        return (subgroup_context(interpreter).subgroup_id,)

    @impl(gpu.SubgroupSizeOp)
    def run_subgroup_size(self, interpreter: Interpreter, op, args: PythonValues):
        return (subgroup_context(interpreter).subgroup_size,)

    @impl(gpu.NumSubgroupsOp)
    def run_num_subgroups(self, interpreter: Interpreter, op, args: PythonValues):
        return (subgroup_context(interpreter).num_subgroups,)

    @impl(gpu.LaneIdOp)
    def run_lane_id(self, interpreter: Interpreter, op, args: PythonValues):
        return (np.arange(subgroup_context(interpreter).subgroup_size, dtype=np.int64),)

    @impl(xgpu.BarrierOp)
    def run_barrier(self, interpreter: Interpreter, op, args: PythonValues):
        ctx = subgroup_context(interpreter)
        if ctx.num_subgroups > 1:
            raise fail(op, "a gpu.barrier with several subgroups must be in the kernel itself "
                           "(not in a called function): the lock-step runner executes it")
        ctx.epoch += 1  # a new race-detection epoch (coopdialect.interpreter.races)
        return ()
