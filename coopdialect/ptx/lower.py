"""Lowering of one kernel `func.func` to a `ptx.kernel` (used by convert-coop-to-ptx): the
dispatcher above every rule module. It imports them all (each registers its rules in
`kernel_lowering.RULES`: `scalar_rules.py`, `coop_rules.py` with `wgmma.py`, `sparse.py`,
`tensor_rules.py`, `nv2_workgroup.py`, `nv2_rules.py`, `staged_generic.py`) and lowers a kernel
op by op (`KernelLowering`), or a kernel in the staged form as the warp-specialized wgmma
pipeline (`pipelined.py`).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.utils.exceptions import DiagnosticException

import coopdialect.ptx.coop_rules  # noqa: F401  (the coop rules, subgroup and workgroup scope)
import coopdialect.ptx.math_rules  # noqa: F401  (the math dialect)
import coopdialect.ptx.nv2_rules  # noqa: F401  (the coopmat2 rules)
import coopdialect.ptx.nv2_workgroup  # noqa: F401  (workgroup-scope coopmat2 + tensor addressing)
import coopdialect.ptx.scalar_rules  # noqa: F401  (func, arith, scf, gpu)
import coopdialect.ptx.sparse  # noqa: F401  (2:4 products; wraps coop.load/store)
import coopdialect.ptx.staged_generic  # noqa: F401  (the staged form op by op)
import coopdialect.ptx.staged_workgroup  # noqa: F401  (... at workgroup scope: cp.async into tiles)
import coopdialect.ptx.staged_tma  # noqa: F401  (... with bulk tensor copies and mbarriers)
import coopdialect.ptx.tensor_rules  # noqa: F401  (tensor addressing)
from coopdialect.dialects import ptx
from coopdialect.errors import CoopError, warn
from coopdialect.ptx.kernel_lowering import KernelLowering
from coopdialect.ptx.pipelined import lower_staged
from coopdialect.ptx.pipelined_plan import Options, analyze


def lower_function(fn: func.FuncOp, target: str, options=None) -> ptx.KernelOp:
    """Lower one kernel function (see the module docstring); raises DiagnosticException.

    A kernel in the staged form (`pipeline-coop-loads`) becomes the warp-specialized wgmma
    pipeline of `coopdialect.ptx.pipelined` (`options`: its `Options`).
    """
    options = options or Options()
    try:
        plan = analyze(fn, target, options.cluster_m, options.persistent)
    except DiagnosticException as refusal:
        # Not the warp-specialized pipeline's form: op by op (staged_workgroup.py), which
        # copies with cp.async into the operand tiles, unless an option asks for the pipeline;
        # if op by op fails too, the pipeline's refusal says more about what the kernel needs.
        if options.persistent or options.cluster_m != 1:
            raise
        try:
            kernel = KernelLowering(fn, target, options.bulk_copies).run()
        except DiagnosticException:
            raise refusal from None
        why = refusal.message if isinstance(refusal, CoopError) else str(refusal)
        how = ("bulk tensor copies and mbarriers" if kernel.tensor_maps is not None
               else "cp.async copies, one barrier per wait")
        warn(getattr(refusal, "op", None) or fn, f"lowered op by op ({how}), not as the "
             f"warp-specialized wgmma pipeline: {why}")
        return kernel
    if plan is not None:
        return lower_staged(fn, target, plan, options)
    return KernelLowering(fn, target, options.bulk_copies).run()
