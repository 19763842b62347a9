"""Which Workgroup-scope matrices are constant along their rows, by what computes them.

A Row `coop.reduce` broadcasts each row's reduction to every column; an online softmax keeps its
running max and sum in such matrices and broadcasts them back to a wider matrix by reducing them
again with @max. When the matrix reduced is known to be row-constant and the combine function is
one whose combine(x, x) is x (max, min, and, or), that reduction is the row's value itself, and
`nv2_rules` takes it from the thread's own register instead of a butterfly across the quad.

`row_constant(v)` holds for a matrix value computed, by the IR's semantics, with one value per
row:

* a Row `coop.reduce` result;
* `coop.composite_construct` of a workgroup-uniform scalar (`uniform_scalar`);
* a `coop.per_element_op` whose function does not read its column argument, of row-constant
  matrices and workgroup-uniform scalars;
* an element-wise arithmetic op (`coop.fmul`, `coop.fadd`, ...) or a conversion of row-constant
  matrices;
* an `scf.for` iteration argument whose initial and yielded values are row-constant, in a loop
  whose bounds are workgroup-uniform (assumed while the loop is examined: the greatest fixed
  point).

Anything else is not known to be. `uniform_scalar(v)` holds for a scalar every invocation of the
workgroup computes alike: kernel arguments, constants, the workgroup and grid ids and sizes, an
`scf.for` induction variable or iteration argument of uniform values (uniform bounds), and
arithmetic of such.
"""

from __future__ import annotations

from xdsl.dialects import arith, func, scf
from xdsl.ir import BlockArgument, OpResult, SSAValue

from coopdialect.dialects import coop
from coopdialect.dialects import coop_nv2 as nv2
from coopdialect.dialects import gpu

# the ids and sizes every invocation of a workgroup reads alike
_UNIFORM_IDS = (gpu.BlockIdOp, gpu.GridDimOp, gpu.BlockDimOp, gpu.SubgroupSizeOp,
                gpu.NumSubgroupsOp)
_MATRIX_ELEMENTWISE = (*coop.ELEMENTWISE_BINARY, *coop.CONVERSIONS)


def _memo(memo: dict[SSAValue, bool], v: SSAValue, compute) -> bool:
    """compute(v), assumed True while it runs (a loop-carried value reached again); if it is
    False after all, what was concluded under that assumption is forgotten."""
    if v in memo:
        return memo[v]
    mark = len(memo)
    memo[v] = True
    result = compute(v)
    if not result:
        for later in list(memo)[mark + 1:]:
            del memo[later]
    memo[v] = result
    return result


def of(lowering) -> RowConstancy:
    """The kernel's `RowConstancy` (one per KernelLowering)."""
    found = lowering.__dict__.get("row constancy")
    if found is None:
        found = lowering.__dict__["row constancy"] = RowConstancy()
    return found


class RowConstancy:
    """Memoized `row_constant` / `uniform_scalar` over one kernel (module docstring)."""

    def __init__(self) -> None:
        self._rows: dict[SSAValue, bool] = {}
        self._scalars: dict[SSAValue, bool] = {}

    def row_constant(self, v: SSAValue) -> bool:
        try:
            return _memo(self._rows, v, self._row_constant)
        except RecursionError:  # a chain deeper than Python recurses: not known, and the
            self._rows.clear()  # assumptions of the unfinished walk are dropped
            self._scalars.clear()
            return False

    def uniform_scalar(self, v: SSAValue) -> bool:
        return _memo(self._scalars, v, self._uniform_scalar)

    def _trips_alike(self, loop: scf.ForOp) -> bool:
        """Whether every invocation runs `loop` the same number of times (uniform bounds)."""
        return all(self.uniform_scalar(x) for x in (loop.lb, loop.ub, loop.step))

    def _carried(self, v: BlockArgument, check) -> bool:
        """An scf.for iteration argument (index >= 1) whose init and yielded values pass, in a
        loop every invocation runs alike."""
        loop = v.owner.parent_op()
        if not isinstance(loop, scf.ForOp) or v.index == 0 or not self._trips_alike(loop):
            return False
        init = loop.iter_args[v.index - 1]
        yielded = loop.body.block.last_op.operands[v.index - 1]
        return check(init) and check(yielded)

    def _row_constant(self, v: SSAValue) -> bool:
        if isinstance(v, BlockArgument):
            return self._carried(v, self.row_constant)
        if not isinstance(v, OpResult):
            return False
        op = v.op
        if isinstance(op, scf.ForOp):
            return self._carried(op.body.block.args[v.index + 1], self.row_constant)
        if isinstance(op, nv2.ReduceOp):
            return op.reduce.data == nv2.REDUCE_ROW
        if isinstance(op, coop.CompositeConstructOp):
            return self.uniform_scalar(op.constituent)
        if isinstance(op, nv2.PerElementOp):
            fn = nv2.lookup_func(op, op.func, "Func")
            if fn.body.block.args[1].uses:
                return False
            return self.row_constant(op.matrix) and all(
                self.row_constant(x) if isinstance(x.type, coop.MatrixType)
                else self.uniform_scalar(x) for x in op.extra)
        if isinstance(op, _MATRIX_ELEMENTWISE):
            return all(self.row_constant(x) for x in op.operands)
        return False

    def _uniform_scalar(self, v: SSAValue) -> bool:
        if isinstance(v, BlockArgument):
            parent = v.owner.parent_op()
            if isinstance(parent, func.FuncOp):
                return True
            if isinstance(parent, scf.ForOp):
                return self._trips_alike(parent) if v.index == 0 \
                    else self._carried(v, self.uniform_scalar)
            return False
        if not isinstance(v, OpResult):
            return False
        op = v.op
        if isinstance(op, (arith.ConstantOp, *_UNIFORM_IDS)):
            return True
        if isinstance(op, scf.ForOp):
            return self._carried(op.body.block.args[v.index + 1], self.uniform_scalar)
        if op.name.startswith("arith."):
            return all(self.uniform_scalar(x) for x in op.operands)
        return False
