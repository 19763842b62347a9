"""`raise-spirv-to-coop`, last step: drop what the lifting carried or computed for nothing.

glslang copies every `inout` argument and every matrix it loads through temporaries, and the
lifter carries each variable a construct stores out of it; a value nobody reads afterwards then
rides through `scf.if` results and `scf.for` iteration arguments (a dead matrix there costs
registers, and the PTX backend cannot carry some operands through a loop at all). This removes
results of `scf.if` that are never used, iteration arguments of `scf.for` whose result and block
argument are never used (but by their own yield), and then the operations without effects whose
results are unused (xDSL's `region_dce`), until nothing changes.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.ir import Operation, Region
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import region_dce


def drop_dead_values(region: Region) -> None:
    changed = True
    while changed:
        changed = False
        for op in list(region.walk()):
            if isinstance(op, scf.IfOp):
                changed |= _drop_if_results(op)
            elif isinstance(op, scf.ForOp):
                changed |= _drop_for_arguments(op)
        changed |= region_dce(region)


def _replace(old: Operation, new: Operation, keep: list[int]) -> None:
    Rewriter.insert_op(new, InsertPoint.before(old))
    for j, i in enumerate(keep):
        old.results[i].replace_all_uses_with(new.results[j])
    old.detach()
    old.erase()


def _drop_if_results(op: scf.IfOp) -> bool:
    keep = [i for i, r in enumerate(op.results) if r.uses]
    if len(keep) == len(op.results):
        return False
    for region in (op.true_region, op.false_region):
        if region.blocks:
            y = region.block.last_op
            assert isinstance(y, scf.YieldOp)
            Rewriter.replace_op(y, scf.YieldOp(*[y.operands[i] for i in keep]))
    true_region, false_region = op.true_region, op.false_region
    op.detach_region(true_region)
    op.detach_region(false_region)
    _replace(op, scf.IfOp(op.cond, [op.results[i].type for i in keep], true_region, false_region), keep)
    return True


def _drop_for_arguments(op: scf.ForOp) -> bool:
    body = op.body.block
    y = body.last_op
    assert isinstance(y, scf.YieldOp)
    dead = [i for i, r in enumerate(op.results)
            if not r.uses and all(u.operation is y and u.index == i for u in body.args[i + 1].uses)]
    if not dead:
        return False
    keep = [i for i in range(len(op.results)) if i not in dead]
    Rewriter.replace_op(y, scf.YieldOp(*[y.operands[i] for i in keep]))
    for i in reversed(dead):
        body.erase_arg(body.args[i + 1])
    region = op.detach_region(op.body)
    _replace(op, scf.ForOp(op.lb, op.ub, op.step, [op.iter_args[i] for i in keep], region), keep)
    return True
