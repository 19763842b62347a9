"""`convert-coop-to-ptx{target=sm_90a}`: lower kernel functions to the `ptx` dialect.

Every `func.func` with a body becomes a `ptx.kernel` (declarations are dropped; functions that
cooperative-matrix-2 ops call are inlined into their callers, not kernels); the module gets
a `ptx.target` attribute that the printer writes as `.target`. The rules are in
`coopdialect.ptx.lower` (kernel convention, arith, scf, gpu ids), `coopdialect.ptx.coop_rules`
(subgroup fragments, mma.sync) and `coopdialect.ptx.wgmma` (warpgroup matrices). A shape or type
the target cannot do is a one-line DiagnosticException naming the op and its location.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

TARGETS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")


@dataclass(frozen=True)
class ConvertCoopToPtxPass(ModulePass):
    """Lower coop kernels to PTX ops; `target` is the `.target` (sm_80 ... sm_90a).

    Options of the warp-specialized pipeline that a staged kernel becomes (`pipelined.py`):
    `producer-registers` / `consumer-registers` (`setmaxnreg` budgets per thread; 0 = the most that fits
    beside the producer, capped at 232: 40 / 232 with two consumer warpgroups) and `raster-group` (tile
    rows per sweep of the remapped workgroup ids; 8 measured best on the H200).
    """

    name = "convert-coop-to-ptx"
    target: str = "sm_90a"
    producer_registers: int = 40
    consumer_registers: int = 0
    raster_group: int = 8
    cluster_m: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from coopdialect.ptx.lower import lower_function
        from coopdialect.ptx.nv2_rules import inlined_functions
        from coopdialect.ptx.pipelined import Options

        if self.target not in TARGETS:
            raise DiagnosticException(
                f"convert-coop-to-ptx: unknown target '{self.target}' (one of {', '.join(TARGETS)})")
        if self.raster_group < 1:
            raise DiagnosticException(
                f"convert-coop-to-ptx: raster-group must be >= 1, got {self.raster_group}")
        options = Options(self.producer_registers, self.consumer_registers, self.raster_group,
                          self.cluster_m)
        kernels = []
        callees = inlined_functions(op)  # DecodeFunc/CombineFunc/Func: inlined, not kernels
        for fn in list(op.ops):
            if isinstance(fn, func.FuncOp) and not fn.is_declaration and \
                    fn.sym_name.data not in callees:
                kernels.append(lower_function(fn, self.target, options))
        for old in list(op.ops):
            old.detach()
            old.erase()
        for k in kernels:
            op.body.block.add_op(k)
        op.attributes["ptx.target"] = StringAttr(self.target)
