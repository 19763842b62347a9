"""Rules of MLIR's verifiers for upstream ops that xDSL 0.74's verifiers do not check.

`diagnostics.verify_with_locations` applies `verify_upstream(op)` to every op, so a violation is
a CoopError on the op at parse time and between passes, as in mlir-opt:

* `scf.for`: "constant step operand must be positive" (MLIR `scf::ForOp::verify`).
* `arith.constant` of `index`: the value fits 64 bits, [-2^63, 2^64) (MLIR stores an index
  attribute as a 64-bit APInt: "integer constant out of range"); otherwise the backends would
  write a literal ptxas rejects ("Constant overflow").
* dominance (MLIR `verifyDominance`), inside `func.func` bodies: an operand is a block argument
  of the op's block or of an enclosing block, or the result of an op before it in its block or
  before an enclosing op ("operand #i does not dominate this use"). Within a region of several
  blocks (a CFG) only the order inside one block is checked.
"""

from __future__ import annotations

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult

from coopdialect.errors import CoopError


UPSTREAM_OPS = (scf.ForOp, arith.ConstantOp)
"""The ops `verify_upstream` has rules for."""


def verify_upstream(op: Operation) -> None:
    """CoopError on `op` if it breaks one of the rules above."""
    if isinstance(op, arith.ConstantOp):
        v = op.value
        if isinstance(v, IntegerAttr) and isinstance(v.type, IndexType) and \
                not -(1 << 63) <= v.value.data < (1 << 64):
            raise CoopError(op, f"integer constant out of range for index (64 bits): {v.value.data}")
        return
    if isinstance(op, scf.ForOp):
        step = op.step.owner
        if isinstance(step, arith.ConstantOp) and isinstance(step.value, IntegerAttr):
            if step.value.value.data <= 0:
                raise CoopError(op, f"constant step operand must be positive, got {step.value.value.data}")


class DominanceChecker:
    """`check(op)`: CoopError on `op` if an operand does not dominate it (module docstring).

    Positions of ops in their blocks are numbered once per block, so a module is checked in
    time linear in its size times its nesting depth."""

    def __init__(self):
        self._index: dict[Block, dict[Operation, int]] = {}
        self._kernel_block: dict[Block, bool] = {}

    def _pos(self, block: Block, op: Operation) -> int:
        index = self._index.get(block)
        if index is None:
            index = self._index[block] = {o: i for i, o in enumerate(block.ops)}
        return index[op]

    def _in_kernel(self, block: Block | None) -> bool:
        """Whether `block` is in a func.func: the source IR, where the passes rely on dominance
        (target dialects lay out module-level values their own way and are checked by their
        reference validators)."""
        if block is None:
            return False
        hit = self._kernel_block.get(block)
        if hit is None:
            parent = block.parent_op()
            hit = isinstance(parent, func.FuncOp) or (parent is not None and self._in_kernel(parent.parent_block()))
            self._kernel_block[block] = hit
        return hit

    def check(self, op: Operation) -> None:
        if not self._in_kernel(op.parent_block()):
            return
        for i, v in enumerate(op.operands):
            if isinstance(v, OpResult):
                ok = self._result_dominates(v.op, op)
            elif isinstance(v, BlockArgument):
                ok = self._block_encloses(v.block, op)
            else:
                ok = True
            if not ok:
                raise CoopError(op, f"operand #{i} does not dominate this use")

    def _result_dominates(self, def_op: Operation, use: Operation) -> bool:
        def_block = def_op.parent_block()
        if def_block is None:
            return False
        node: Operation | None = use
        while node is not None:
            block = node.parent_block()
            if block is def_block:
                return node is not def_op and self._pos(block, def_op) < self._pos(block, node)
            if block is not None and block.parent is not None and block.parent is def_block.parent:
                return True  # another block of one CFG region: not checked here
            node = node.parent_op()
        return False

    @staticmethod
    def _block_encloses(block: Block, use: Operation) -> bool:
        node: Operation | None = use
        while node is not None:
            b = node.parent_block()
            if b is block:
                return True
            if b is not None and b.parent is not None and b.parent is block.parent:
                return True  # a CFG region's other block
            node = node.parent_op()
        return False
