"""`fold-tensor-views`: fold chains of tensor layout / tensor view ops to their shortest form.

Layout and view values are immutable structs that each op copies and updates
(SPV_NV_tensor_addressing 3.X), so a chain of ops is a sequence of state updates. The pass is a
set of rewrite patterns, applied until none matches:

* `FoldConstantChain`: a value whose whole chain back to create_layout/create_view has constant
  operands becomes ONE `tensor_addr.layout_constant` / `view_constant` op holding the final state
  (or the bare create op when that state is the created default).
* `DropOverwrittenSets`: walking a chain backwards from its end, an op whose every written field
  is overwritten by later ops before anything reads it is removed (set_dimension resets
  dimension, span, offset and stride; slice reads the offset it adds to; set_dimension reads the
  block size its strides depend on). Fields of a single-use constant head that the chain
  overwrites are reset to their defaults.
* `MergeSlices`: slice(slice(x, o1, s1), o2, s2) -> slice(x, o1 + o2, s2) (int32 wrapping add, as
  the state's offset is; set_stride / set_block_size / set_clamp_value in between commute with it).
* `EraseDead`: tensor_addr ops without uses are erased (they are pure).

Only ops whose result has exactly one use (the next op of the chain) are removed or merged, so a
value that a load, a store or a second chain uses keeps its exact state: what every load and store
addresses is unchanged (the property test checks it on random chains with the interpreter). A
program that breaks a stride rule (a "must" of OpTensorLayoutSetStrideNV/SliceNV) is invalid
before and after; removing an overwritten op may remove the broken rule with it, and folding may
make a broken rule visible to the verifier.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp, Signedness
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint

from coopdialect.dialects import tensor_addr as ta

_LAYOUT_RW: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    ta.LayoutSetDimensionOp.name: (frozenset({"dimension", "span", "offset", "stride"}),
                                   frozenset({"block_size"})),
    ta.LayoutSetStrideOp.name: (frozenset({"stride"}), frozenset()),
    ta.LayoutSetBlockSizeOp.name: (frozenset({"block_size"}), frozenset()),
    ta.LayoutSliceOp.name: (frozenset({"offset", "span"}), frozenset({"offset"})),
    ta.LayoutSetClampValueOp.name: (frozenset({"clamp_value"}), frozenset()),
    ta.ViewSetDimensionOp.name: (frozenset({"dimension", "stride"}), frozenset()),
    ta.ViewSetStrideOp.name: (frozenset({"stride"}), frozenset()),
    ta.ViewSetClipOp.name: (frozenset({"clip"}), frozenset()),
}
_SET_OPS = (*ta.LAYOUT_SET_OPS, *ta.VIEW_SET_OPS)


def _single_chain_use(v: SSAValue) -> Operation | None:
    """The set op that is the only user of `v` (as its input), else None."""
    uses = list(v.uses)
    if len(uses) != 1:
        return None
    user = uses[0].operation
    if isinstance(user, _SET_OPS) and uses[0].index == 0:
        return user
    return None


class FoldConstantChain(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, ta.LAYOUT_SET_OPS):
            state = ta.constant_layout_state(op.result)
            if state is not None:
                rewriter.replace(op, [_layout_const(state, op.result.type)])
        elif isinstance(op, ta.VIEW_SET_OPS):
            state = ta.constant_view_state(op.result)
            if state is not None:
                rewriter.replace(op, [_view_const(state, op.result.type)])
        elif isinstance(op, ta.LayoutConstantOp):
            t = op.result.type
            if op.state == ta.LayoutState.create(t.rank):
                rewriter.replace(op, [ta.CreateLayoutOp(t)])
        elif isinstance(op, ta.ViewConstantOp):
            t = op.result.type
            if op.state == ta.ViewState.create(t.rank):
                rewriter.replace(op, [ta.CreateViewOp(t)])


def _layout_const(state: ta.LayoutState, t) -> Operation:
    if state == ta.LayoutState.create(t.rank):
        return ta.CreateLayoutOp(t)
    return ta.LayoutConstantOp.from_state(state, t)


def _view_const(state: ta.ViewState, t) -> Operation:
    if state == ta.ViewState.create(t.rank):
        return ta.CreateViewOp(t)
    return ta.ViewConstantOp.from_state(state, t)


class DropOverwrittenSets(RewritePattern):
    """Match a chain end (a set op not consumed by exactly one further set op)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, _SET_OPS) or _single_chain_use(op.result) is not None:
            return
        dead: frozenset[str] = frozenset()
        cur: Operation = op
        while True:
            writes, reads = _LAYOUT_RW[cur.name]
            if cur is not op and writes <= dead:
                rewriter.replace(cur, [], [cur.input])  # its every write is overwritten
                return
            dead = (dead | writes) - reads
            prev = cur.input.owner
            if isinstance(prev, _SET_OPS) and len(list(cur.input.uses)) == 1:
                cur = prev
                continue
            if len(list(cur.input.uses)) == 1 and dead:
                self._reset_head(prev, dead, rewriter)
            return

    @staticmethod
    def _reset_head(head, dead: frozenset[str], rewriter: PatternRewriter) -> None:
        """A single-use constant head: reset the fields the chain overwrites to defaults."""
        if isinstance(head, ta.LayoutConstantOp):
            t = head.result.type
            default = ta.LayoutState.create(t.rank)
            state = head.state
            new = ta.LayoutState(*(getattr(default if f in dead else state, f) for f in
                                   ("block_size", "dimension", "stride", "offset", "span",
                                    "clamp_value")))
            if new != state:
                rewriter.replace(head, [_layout_const(new, t)])
        elif isinstance(head, ta.ViewConstantOp):
            t = head.result.type
            default = ta.ViewState.create(t.rank)
            state = head.state
            new = ta.ViewState(*(getattr(default if f in dead else state, f) for f in
                                 ("dimension", "stride", "clip")))
            if new != state:
                rewriter.replace(head, [_view_const(new, t)])


def _is_i32(v: SSAValue) -> bool:
    t = v.type
    return isinstance(t, IntegerType) and t.width.data == 32 and \
        t.signedness.data == Signedness.SIGNLESS


class MergeSlices(RewritePattern):
    _COMMUTE = (ta.LayoutSetStrideOp, ta.LayoutSetBlockSizeOp, ta.LayoutSetClampValueOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ta.LayoutSliceOp):
            return
        between: list[Operation] = []
        cur = op.input
        while len(list(cur.uses)) == 1 and isinstance(cur.owner, self._COMMUTE):
            between.append(cur.owner)
            cur = cur.owner.input
        inner = cur.owner
        if not isinstance(inner, ta.LayoutSliceOp) or len(list(cur.uses)) != 1:
            return
        if not all(_is_i32(v) for v in (*inner.values, *op.values)):
            return
        dim = op.result.type.rank
        new_ops: list[Operation] = []
        vals: list[SSAValue] = []
        for i in range(dim):
            a, b = inner.values[2 * i], op.values[2 * i]
            ca, cb = ta.const_u32(a), ta.const_u32(b)
            if cb == 0:
                vals.append(a)
            elif ca == 0:
                vals.append(b)
            elif ca is not None and cb is not None:
                c = arith.ConstantOp(IntegerAttr(ta.s32(ca + cb), IntegerType(32)))
                new_ops.append(c)
                vals.append(c.result)
            else:
                add = arith.AddiOp(a, b)
                new_ops.append(add)
                vals.append(add.result)
            vals.append(op.values[2 * i + 1])
        if new_ops:
            rewriter.insert(new_ops, InsertPoint.before(op))
        rewriter.replace(inner, [], [inner.input])
        rewriter.replace(op, [ta.LayoutSliceOp(op.input, vals)])


class EraseDead(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.dialect_name() == "tensor_addr" and not any(r.uses for r in op.results):
            rewriter.erase(op)


@dataclass(frozen=True)
class FoldTensorViewsPass(ModulePass):
    """`-p fold-tensor-views` (see the module docstring)."""

    name = "fold-tensor-views"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([
            EraseDead(), FoldConstantChain(), MergeSlices(), DropOverwrittenSets(),
        ])).rewrite_module(op)
