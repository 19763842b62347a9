"""`raise-spirv-to-coop`, control flow: SPIR-V's structured control flow (2.11 "Structured
Control Flow") as `scf`, and OpFunctionCall inlined. A mixin of the lifter in
`raise_spirv_to_coop`.

* A selection (OpSelectionMerge + OpBranchConditional) becomes `scf.if`: the merge block's
  OpPhis and the variables either side stores (and something reads later) are its results. When
  both sides only compute scalars (`speculatable`: no memory but variables and push constants,
  no division, no matrix), both run and `arith.select` picks: glslang's `a || b`, `c ? x : y`
  and small `if`s in combine / per-element functions, whose conditions differ per element.
* A loop (OpLoopMerge) in glslang's counted form — the header compares a variable `k` with a
  value fixed during the loop (`k < n`, signed or unsigned), the continue block only adds a
  positive constant to `k`, the body neither stores `k` nor leaves early, and `k` is not read
  after the loop — becomes `scf.for` over `index` (`k` as `arith.index_cast` of the induction
  variable). Any other loop becomes `scf.while` running whole iterations in its `before`
  region: header to continue target, then the continue construct back to the header; the
  condition is "neither left nor returned", the `do` region passes the values on.
* Leaving a construct early — `break` (a branch to the loop's merge block, the loop header's
  own exit test included), `continue` (to its continue target), `return` inside a construct —
  sets an i1 flag (a variable like the others, so it is carried out of the constructs it is set
  in); what follows such a construct up to the end of the enclosing one runs under
  `scf.if` on "no flag set". A return's value is another variable.
* OpFunctionCall: the callee's body is lifted in place, its parameters bound to the arguments
  (pointers included, so a callee stores into the caller's variables). Recursion is refused.

Refused with one line at the instruction: OpSwitch, a branch that is neither structured nor an
exit of the innermost loop, OpPhi in a loop's merge block.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerType, i1, i32, i64
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from coopdialect.dialects import spirv, spirv_general
from coopdialect.passes.raise_spirv_values import BuiltinVector, Composite, refuse


@dataclass
class Frame:
    """The function being lifted (the kernel, or a callee inlined into it)."""

    fn: spirv.FuncOp
    ret: object  # the key of its 'returned' flag
    retval: object | None  # the key of its return value (None: void)


@dataclass
class Loop:
    header: Block
    merge: Block
    cont: Block
    brk: object  # the key of its 'left' flag (break, or the header's exit test)
    cnt: object  # the key of its 'continue' flag


# scalar instructions that may run on a path the program does not take (no division: a zero
# divisor is undefined behavior)
_SPECULATABLE = frozenset({
    "OpIAdd", "OpISub", "OpIMul", "OpFAdd", "OpFSub", "OpFMul", "OpFDiv", "OpBitwiseAnd", "OpBitwiseOr",
    "OpBitwiseXor", "OpShiftLeftLogical", "OpShiftRightLogical", "OpShiftRightArithmetic", "OpLogicalAnd",
    "OpLogicalOr", "OpLogicalNot", "OpLogicalEqual", "OpLogicalNotEqual", "OpNot", "OpSNegate", "OpFNegate",
    "OpIEqual", "OpINotEqual", "OpSLessThan", "OpSLessThanEqual", "OpSGreaterThan", "OpSGreaterThanEqual",
    "OpULessThan", "OpULessThanEqual", "OpUGreaterThan", "OpUGreaterThanEqual", "OpFOrdEqual", "OpFOrdNotEqual",
    "OpFOrdLessThan", "OpFOrdLessThanEqual", "OpFOrdGreaterThan", "OpFOrdGreaterThanEqual", "OpFUnordEqual",
    "OpFUnordNotEqual", "OpFUnordLessThan", "OpFUnordLessThanEqual", "OpFUnordGreaterThan",
    "OpFUnordGreaterThanEqual", "OpSelect", "OpUConvert", "OpSConvert", "OpFConvert", "OpConvertSToF",
    "OpConvertUToF", "OpBitcast", "OpCompositeConstruct", "OpCompositeExtract", "OpCompositeInsert",
    "OpVectorShuffle", "OpCopyObject", "OpVectorTimesScalar"})


class _Key:
    """A fresh variable key (flags, return values)."""

    def __init__(self, what: str):
        self.what = what

    def __repr__(self) -> str:
        return self.what


class ControlLifting:
    """Mixin: see the module docstring. Needs the lifter's `lift`, `emit`, `const`, `value`,
    `ssa`, `zero`, `values`, `vars`, `var_types`, `static_key`, `var_value`, `index`."""

    # -- flags ----------------------------------------------------------------------------------
    def new_flag(self, what: str) -> _Key:
        k = _Key(what)
        self.var_types[k] = i1
        return k

    # flags are often known (false at a loop's start, true right after a break): the boolean
    # helpers fold constants so that the IR holds only the tests that can go either way
    def set_flag(self, key: object, cond: SSAValue | None = None) -> None:
        """flag |= cond (cond None: true)."""
        self.vars[key] = self.const(1, i1) if cond is None else self.or_(self.var_value(key), cond)

    def or_(self, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = _bool(a), _bool(b)
        if ca is not None or cb is not None:
            known, other = (ca, b) if ca is not None else (cb, a)
            return self.const(1, i1) if known else other
        return self.emit(arith.OrIOp(a, b)).results[0]

    def none_set(self, flags) -> SSAValue:
        """i1: no flag of `flags` is set."""
        acc = None
        for f in flags:
            v = self.var_value(f)
            acc = v if acc is None else self.or_(acc, v)
        return self.not_(acc)

    def not_(self, v: SSAValue) -> SSAValue:
        c = _bool(v)
        if c is not None:
            return self.const(0 if c else 1, i1)
        return self.emit(arith.XOrIOp(v, self.const(1, i1))).results[0]

    # -- regions --------------------------------------------------------------------------------
    def exit_flag(self, target: Block, stop: Block | None) -> object | None:
        """The flag a branch to `target` sets when it leaves the construct ending at `stop`."""
        if not self.loops or target is stop:
            return None
        lp = self.loops[-1]
        if target is lp.merge:
            return lp.brk
        if target is lp.cont:
            return lp.cnt
        if target is lp.header:
            return lp.cnt  # a back edge from inside the continue construct: the iteration's end
        return None

    def stops(self, stop: Block | None) -> set[Block]:
        out = {stop} if stop is not None else set()
        if self.loops:
            lp = self.loops[-1]
            out |= {lp.merge, lp.cont, lp.header}
        return out

    @staticmethod
    def region_blocks(start: Block, stops) -> list[Block]:
        """Blocks reachable from `start` without passing a block of `stops`."""
        seen: list[Block] = []
        todo = [start]
        while todo:
            b = todo.pop()
            if b in stops or b in seen:
                continue
            seen.append(b)
            term = b.last_op
            if term is not None:
                todo.extend(term.successors)
        return seen

    def region_exits(self, blocks: list[Block], stop: Block | None) -> list[object]:
        """The flags the exits in `blocks` (of a construct ending at `stop`) may set."""
        out: list[object] = []
        for b in blocks:
            term = b.last_op
            if isinstance(term, spirv.ReturnOp | spirv.ReturnValueOp):
                flags = [self.frame.ret]
            else:
                flags = [self.exit_flag(t, stop) for t in term.successors] if term is not None else []
            for f in flags:
                if f is not None and f not in out:
                    out.append(f)
        return out

    def stored_keys(self, blocks: list[Block]) -> list[object]:
        """Variables stored in `blocks`, by a store or by a callee given their pointer."""
        out: list[object] = []

        def add(k: object) -> None:
            if k is not None and k not in out:
                out.append(k)

        for b in blocks:
            for op in b.ops:
                if isinstance(op, spirv.StoreOp):
                    add(self.static_key(op.pointer))
                elif isinstance(op, spirv_general.FunctionCallOp):
                    for a in op.arguments:
                        if isinstance(a.type, spirv.PointerType):
                            add(self.static_key(a))
                    for k in self.callee_private_stores(op.callee.root_reference.data):
                        add(k)
        return out

    def callee_private_stores(self, name: str, seen: set[str] | None = None) -> list[str]:
        """Private variables a function (or one it calls) stores."""
        seen = set() if seen is None else seen
        fn = self.functions.get(name)
        if fn is None or name in seen:
            return []
        seen.add(name)
        out = []
        for op in fn.walk():
            if isinstance(op, spirv.StoreOp):
                k = self.static_key(op.pointer)
                if isinstance(k, str) and k not in out:
                    out.append(k)
            elif isinstance(op, spirv_general.FunctionCallOp):
                out += [k for k in self.callee_private_stores(op.callee.root_reference.data, seen) if k not in out]
        return out

    def carried(self, blocks: list[Block], stop: Block | None) -> tuple[list[object], list[object]]:
        """(variables a construct over `blocks` changes, the exit flags among them)."""
        flags = self.region_exits(blocks, stop)
        keys = self.stored_keys(blocks)
        for f in flags:
            if f not in keys:
                keys.append(f)
        if self.frame.ret in flags and self.frame.retval is not None and self.frame.retval not in keys:
            keys.append(self.frame.retval)
        if stop is None and self.frame.retval is not None and self.frame.retval not in keys:
            keys.append(self.frame.retval)  # the rest of a function may reach its return
        return keys, flags

    # -- which variables a construct must carry out -------------------------------------------
    def prune(self, keys: list[object], blocks: list[Block], entries: list[Block]) -> list[object]:
        """`keys` without the current function's own variables whose value at the construct's
        end is never read: read nowhere outside `blocks`, and inside only after being stored
        (from `entries` on) — a variable declared in a loop body, say. Carrying them would only
        keep dead values (matrices!) alive through scf results."""
        return [k for k in keys if not self.is_local(k) or self.read_outside(k, blocks)
                or self.exposed(k, blocks, entries)]

    def is_local(self, k: object) -> bool:
        return isinstance(k, SSAValue) and isinstance(k.owner, spirv_general.VariableOp) \
            and k.owner.parent_op() is not None and self.enclosing_fn(k.owner) is self.frame.fn

    @staticmethod
    def enclosing_fn(op: Operation):
        while op is not None and not isinstance(op, spirv.FuncOp):
            op = op.parent_op()
        return op

    def accesses(self, op: Operation, k: object) -> tuple[bool, bool]:
        """(reads `k`, stores all of `k`) for one instruction."""
        if isinstance(op, spirv.LoadOp):
            return self.static_key(op.pointer) is k and not _only_unclipped_object(op.result), False
        if isinstance(op, spirv.StoreOp) and self.static_key(op.pointer) is k:
            whole = op.pointer is k
            return not whole, whole  # a store to a part keeps the other parts
        if isinstance(op, spirv_general.FunctionCallOp):
            return any(isinstance(a.type, spirv.PointerType) and self.static_key(a) is k for a in op.arguments), False
        return False, False

    def read_outside(self, k: object, blocks: list[Block]) -> bool:
        inside = set(map(id, blocks))
        for op in self.frame.fn.walk():
            if id(op.parent_block()) not in inside and self.accesses(op, k)[0]:
                return True
        return False

    def exposed(self, k: object, blocks: list[Block], entries: list[Block]) -> bool:
        """Whether some read of `k` in `blocks` may see the value `k` had on entering them."""
        preds: dict[int, list[Block]] = {id(b): [] for b in blocks}
        for b in blocks:
            for t in b.last_op.successors if b.last_op is not None else ():
                if id(t) in preds:
                    preds[id(t)].append(b)
        stored_out = {id(b): True for b in blocks}  # must-analysis: start from "stored"
        changed = True
        while changed:
            changed = False
            for b in blocks:
                stored = b not in entries and all(stored_out[id(p)] for p in preds[id(b)])
                for op in b.ops:
                    reads, whole = self.accesses(op, k)
                    if reads and not stored:
                        return True
                    stored = stored or whole
                if stored != stored_out[id(b)]:
                    stored_out[id(b)] = stored
                    changed = True
        return False

    # -- flattening values carried through scf --------------------------------------------------
    def flatten(self, v: object, op: Operation) -> list[SSAValue]:
        if isinstance(v, SSAValue):
            return [v]
        if isinstance(v, BuiltinVector):
            v = self.as_composite(v, op)
        if isinstance(v, Composite):
            return [x for p in v.parts for x in self.flatten(p, op)]
        refuse(op, "carries a pointer through control flow (variable pointers are not lifted)")

    @staticmethod
    def unflatten(template: object, it) -> object:
        if isinstance(template, Composite):
            return Composite(tuple(ControlLifting.unflatten(p, it) for p in template.parts))
        return next(it)

    def placeholders(self, stop: Block | None) -> list[object]:
        """Values for `stop`'s OpPhis on a path that left early (never used)."""
        return [] if stop is None else [self.zero(a.type) for a in stop.args]

    def bind(self, target: Block, args: list, user: Operation) -> None:
        if len(args) != len(target.args):
            refuse(user, "branch arguments do not match the target's OpPhis")
        for a, v in zip(target.args, args):
            self.values[a] = v

    # -- chains ---------------------------------------------------------------------------------
    def raise_chain(self, block: Block, stop: Block | None, header: Block | None = None) -> list | None:
        """Emit `block` and its structured successors up to `stop` (None: the function's return).
        Returns the values passed to `stop` (its OpPhis; [] at a return), or None when every
        path leaves early (the flags say how). `header`: the loop header being lifted (its
        OpLoopMerge is the loop's, already open)."""
        while True:
            ops = list(block.ops)
            if block is not header and any(isinstance(o, spirv.LoopMergeOp) for o in ops):
                merge, flags = self.raise_loop(block)
                if flags:
                    return self.raise_rest(merge, stop, flags)
                block = merge
                continue
            for op in ops[:-1]:
                if not isinstance(op, spirv.SelectionMergeOp | spirv.LoopMergeOp):
                    self.lift(op)
            term = ops[-1]
            if isinstance(term, spirv.ReturnOp | spirv.ReturnValueOp):
                if isinstance(term, spirv.ReturnValueOp):
                    self.vars[self.frame.retval] = self.value(term.value, term)
                if stop is None:
                    return []
                self.set_flag(self.frame.ret)
                return None
            if isinstance(term, spirv_general.UnreachableOp):
                return None
            if isinstance(term, spirv.BranchOp):
                args = [self.value(a, term) for a in term.args]
                if term.target is stop:
                    return args
                flag = self.exit_flag(term.target, stop)
                if flag is not None:
                    self.set_flag(flag)
                    return None
                self.bind(term.target, args, term)
                block = term.target
                continue
            if isinstance(term, spirv.BranchConditionalOp):
                if len(ops) > 1 and isinstance(ops[-2], spirv.SelectionMergeOp):
                    merge, flags = self.raise_selection(ops[-2], term)
                    if flags:
                        return self.raise_rest(merge, stop, flags)
                    block = merge
                    continue
                return self.conditional_exit(term, stop)
            refuse(term, f"'{term.name}' is not lifted (switch statements and unstructured control flow)")

    def conditional_exit(self, term: spirv.BranchConditionalOp, stop: Block | None) -> list | None:
        """An OpBranchConditional without OpSelectionMerge: one side (or both) leaves the
        innermost loop (break, continue, the header's exit test, the back edge)."""
        cond = self.ssa(term.condition, term)
        sides = [(term.true_target, term.true_args, cond), (term.false_target, term.false_args, None)]
        flags = [self.exit_flag(t, stop) for t, _, _ in sides]
        if flags[0] is None and flags[1] is None:
            refuse(term, "unstructured control flow (a conditional branch that is neither a selection nor an exit "
                         "of the innermost loop) is not lifted")
        stay = None  # the side that goes on, if one does
        for (target, args, c), flag in zip(sides, flags):
            taken = c if c is not None else self.not_(cond)
            if flag is not None:
                self.set_flag(flag, taken)
            else:
                stay = (target, args)
        if stay is None:
            return None
        target, args = stay
        values = [self.value(a, term) for a in args]
        if target is stop:
            return values
        self.bind(target, values, term)
        return self.raise_rest(target, stop, [f for f in flags if f is not None])

    def raise_rest(self, block: Block, stop: Block | None, flags: list[object]) -> list | None:
        """The chain from `block` to `stop` under `scf.if` "none of `flags` set"."""
        live = self.none_set(flags)
        if _bool(live) is not None:  # known: the rest runs, or never does
            return self.raise_chain(block, stop) if _bool(live) else None
        blocks = self.region_blocks(block, self.stops(stop) - {block})
        keys, _ = self.carried(blocks, stop)
        keys = self.prune(keys, blocks, [block])
        for f in flags:
            if f not in keys:
                keys.append(f)
        anchor = block.first_op
        before = {k: self.var_value(k) for k in keys}
        if self.speculatable(blocks) and all(self.selectable(t) for t in [
                *(a.type for a in (stop.args if stop is not None else ())), *(self.var_types[k] for k in keys)]):
            result = self.raise_chain(block, stop)
            args = result if result is not None else self.placeholders(stop)
            new = [*args, *(self.var_value(k) for k in keys)]
            old = [*self.placeholders(stop), *(before[k] for k in keys)]
            picked = [self.pick(live, a, b, anchor) for a, b in zip(new, old)]
            for k, v in zip(keys, picked[len(args):]):
                self.vars[k] = v
            return picked[:len(args)] if result is not None else None
        # values of the region used after it (the region dominates its continue construct, say)
        exported = [r for b in blocks for r in (*b.args, *(x for o in b.ops for x in o.results))
                    if any(u.operation.parent_block() not in blocks for u in r.uses)]
        saved = self.block
        self.block = Block()
        result = self.raise_chain(block, stop)
        exported = [r for r in exported if r in self.values]
        args = result if result is not None else self.placeholders(stop)
        then_vals = [*args, *(self.var_value(k) for k in keys), *(self.values[r] for r in exported)]
        then_flat = [x for v in then_vals for x in self.flatten(v, anchor)]
        self.emit(scf.YieldOp(*then_flat))
        then_region = Region(self.block)
        self.block = Block()
        else_vals = [*self.placeholders(stop), *(before[k] for k in keys), *(self.zero(r.type) for r in exported)]
        self.emit(scf.YieldOp(*[x for v in else_vals for x in self.flatten(v, anchor)]))
        else_region = Region(self.block)
        self.block = saved
        if_op = self.emit(scf.IfOp(live, [v.type for v in then_flat], then_region, else_region), anchor)
        it = iter(if_op.results)
        out = [self.unflatten(v, it) for v in then_vals]
        for k, v in zip(keys, out[len(args):]):
            self.vars[k] = v
        for r, v in zip(exported, out[len(args) + len(keys):]):
            self.values[r] = v
        return out[:len(args)] if result is not None else None

    # -- selections -----------------------------------------------------------------------------
    def raise_selection(self, merge_op: spirv.SelectionMergeOp, term: spirv.BranchConditionalOp):
        """`scf.if`; returns (merge block, the exit flags its sides may set)."""
        merge = merge_op.merge_block
        cond = self.ssa(term.condition, term)
        stops = self.stops(merge)
        inner = self.region_blocks(term.true_target, stops) + self.region_blocks(term.false_target, stops)
        keys, flags = self.carried(inner, merge)
        keys = self.prune(keys, inner, [term.true_target, term.false_target])
        before = {k: self.var_value(k) for k in keys}
        if self.speculatable(inner) and all(self.selectable(t) for t in
                                            [*(a.type for a in merge.args), *(self.var_types[k] for k in keys)]):
            return self.select_sides(term, merge, cond, keys, before), flags
        sides = []
        for target, edge_args in ((term.true_target, term.true_args), (term.false_target, term.false_args)):
            saved = self.block
            self.block = Block()
            self.vars.update(before)
            values = [self.value(a, term) for a in edge_args]
            flag = self.exit_flag(target, merge)
            if target is merge:
                args = values
            elif flag is not None:
                self.set_flag(flag)
                args = self.placeholders(merge)
            else:
                self.bind(target, values, term)
                result = self.raise_chain(target, merge)
                args = result if result is not None else self.placeholders(merge)
            vals = [*args, *(self.var_value(k) for k in keys)]
            sides.append((self.block, vals))
            self.block = saved
        flat = []
        for blk, vals in sides:
            f = [x for v in vals for x in self.flatten(v, term)]
            blk.add_op(scf.YieldOp(*f))
            blk.last_op.location = term.location
            flat.append(f)
        types = [v.type for v in flat[0]]
        if types != [v.type for v in flat[1]]:
            refuse(term, "the two sides of a selection produce different types")
        if_op = self.emit(scf.IfOp(cond, types, Region(sides[0][0]), Region(sides[1][0])), term)
        it = iter(if_op.results)
        out = [self.unflatten(v, it) for v in sides[0][1]]
        n = len(merge.args)
        self.bind(merge, out[:n], term)
        for k, v in zip(keys, out[n:]):
            self.vars[k] = v
        return merge, flags

    def select_sides(self, term: spirv.BranchConditionalOp, merge: Block, cond: SSAValue, keys, before) -> Block:
        """A selection whose sides only compute scalars (`speculatable`): both sides run, and
        `arith.select` picks the merge block's OpPhis and the variables (no divergence, no
        branch)."""
        outs = []
        for target, edge_args in ((term.true_target, term.true_args), (term.false_target, term.false_args)):
            self.vars.update(before)
            values = [self.value(a, term) for a in edge_args]
            flag = self.exit_flag(target, merge)
            if target is merge:
                args = values
            elif flag is not None:
                self.set_flag(flag)
                args = self.placeholders(merge)
            else:
                self.bind(target, values, term)
                result = self.raise_chain(target, merge)
                args = result if result is not None else self.placeholders(merge)
            outs.append([*args, *(self.var_value(k) for k in keys)])
        picked = [self.pick(cond, a, b, term) for a, b in zip(*outs)]
        n = len(merge.args)
        self.bind(merge, picked[:n], term)
        for k, v in zip(keys, picked[n:]):
            self.vars[k] = v
        return merge

    def pick(self, cond: SSAValue, a: object, b: object, op: Operation) -> object:
        """select(cond, a, b) part by part."""
        if a is b:
            return a
        if isinstance(a, SSAValue) and isinstance(b, SSAValue):
            c = _bool(cond)
            if c is not None:
                return a if c else b
            if a.type == i1 and _bool(a) is True and _bool(b) is False:
                return cond
            if a.type == i1 and _bool(b) is True:  # select(c, a, true) = a or not c
                return self.or_(a, self.not_(cond))
            if a.type == i1 and _bool(a) is True:  # select(c, true, b) = c or b
                return self.or_(cond, b)
            return self.emit(arith.SelectOp(cond, a, b), op).results[0]
        a, b = self.as_composite(a, op), self.as_composite(b, op)
        return Composite(tuple(self.pick(cond, x, y, op) for x, y in zip(a.parts, b.parts)))

    def selectable(self, t) -> bool:
        """A value of SPIR-V type `t` can go through arith.select (scalars and aggregates of them)."""
        from coopdialect.passes.raise_spirv_values import components, is_aggregate, is_scalar

        if is_scalar(t):
            return True
        return is_aggregate(t) and all(self.selectable(m) for m in components(t))

    def speculatable(self, blocks: list[Block]) -> bool:
        """Whether `blocks` may run whatever the condition: scalar arithmetic without division,
        and loads/stores of variables and push constants only (no memory a wrong path could read
        out of bounds, no matrix, no loop, no call)."""
        for b in blocks:
            for op in b.ops:
                if isinstance(op, spirv.LoadOp | spirv.StoreOp | spirv.AccessChainOp):
                    ptr = op.pointer if not isinstance(op, spirv.AccessChainOp) else op.base
                    if self.static_key(ptr) is None and not self.is_push_constant(ptr):
                        return False
                elif isinstance(op, spirv_general.VariableOp | spirv.SelectionMergeOp | spirv.BranchOp
                                | spirv.BranchConditionalOp | spirv.ReturnOp | spirv.ReturnValueOp):
                    continue
                elif not (isinstance(op, spirv.SpirvInstruction) and op.OPNAME in _SPECULATABLE) or any(
                        not self.selectable(r.type) for r in op.results):
                    return False
        return True

    # -- loops ----------------------------------------------------------------------------------
    def raise_loop(self, header: Block):
        """`scf.for` or `scf.while`; returns (merge block, the flags the loop may leave set)."""
        lm = next(o for o in header.ops if isinstance(o, spirv.LoopMergeOp))
        merge, cont = lm.merge_block, lm.continue_block
        if merge.args:
            refuse(lm, "OpPhis in a loop's merge block are not lifted")
        outer = self.stops(None)
        blocks = self.region_blocks(header, outer | {merge})
        if self.counted_loop(header, lm, blocks):
            return merge, []
        returns = any(isinstance(b.last_op, spirv.ReturnOp | spirv.ReturnValueOp) for b in blocks)
        keys = self.prune(self.stored_keys(blocks), blocks, [header])
        if returns:
            keys += [k for k in (self.frame.ret, self.frame.retval) if k is not None and k not in keys]
        loop = Loop(header, merge, cont, self.new_flag("break"), self.new_flag("continue"))
        phis = [self.values[a] for a in header.args]
        init_vals = [*phis, *(self.var_value(k) for k in keys)]
        init = [x for v in init_vals for x in self.flatten(v, lm)]
        saved = self.block
        before = Block(arg_types=[v.type for v in init])
        self.block = before
        it = iter(before.args)
        cur = [self.unflatten(v, it) for v in init_vals]
        self.bind(header, cur[:len(phis)], lm)
        for k, v in zip(keys, cur[len(phis):]):
            self.vars[k] = v
        self.loops.append(loop)
        self.vars[loop.brk] = self.const(0, i1)
        self.vars[loop.cnt] = self.const(0, i1)
        # forwarded: values of the header used after the loop (the header dominates the merge)
        forwarded = [r for o in header.ops for r in o.results
                     if any(u.operation.parent_block() not in blocks for u in r.uses)]
        if cont is header:
            back = self.raise_chain(header, header, header)
        else:
            body = self.raise_chain(header, cont, header)
            if body is not None:
                self.bind(cont, body, lm)
            else:
                for a in cont.args:
                    self.values[a] = self.zero(a.type)
            self.vars[loop.cnt] = self.const(0, i1)
            back = self.raise_rest(cont, header, [loop.brk, *([self.frame.ret] if returns else [])])
        if back is None:
            back = self.placeholders(header)
        stay = self.none_set([loop.brk, *([self.frame.ret] if returns else [])])
        fwd = [self.values[r] for r in forwarded]
        for r, v in zip(forwarded, fwd):
            if any(_nested_in(x, before) for x in self.flatten(v, lm)):
                refuse(r.owner, "a value computed under a condition in a loop header and used after the loop is "
                                "not lifted")
        cond_vals = [*back, *cur[:len(phis)], *(self.var_value(k) for k in keys), *fwd]
        cond_flat = [x for v in cond_vals for x in self.flatten(v, lm)]
        self.emit(scf.ConditionOp(stay, *cond_flat), lm)
        self.loops.pop()
        after = Block(arg_types=[v.type for v in cond_flat])
        it = iter(after.args)
        a_vals = [self.unflatten(v, it) for v in cond_vals]
        n = len(phis)
        yield_vals = [*a_vals[:n], *a_vals[2 * n: 2 * n + len(keys)]]
        after.add_op(scf.YieldOp(*[x for v in yield_vals for x in self.flatten(v, lm)]))
        self.block = saved
        while_op = self.emit(scf.WhileOp(init, [v.type for v in cond_flat], Region(before), Region(after)), lm)
        it = iter(while_op.results)
        res = [self.unflatten(v, it) for v in cond_vals]
        for a, v in zip(header.args, res[n: 2 * n]):
            self.values[a] = v
        for k, v in zip(keys, res[2 * n: 2 * n + len(keys)]):
            self.vars[k] = v
        for r, v in zip(forwarded, res[2 * n + len(keys):]):
            self.values[r] = v
        return merge, [self.frame.ret] if returns else []

    def counted_loop(self, header: Block, lm: spirv.LoopMergeOp, blocks: list[Block]) -> bool:
        """Lift glslang's counted loop as `scf.for` (module docstring); False if it is not one."""
        merge, cont = lm.merge_block, lm.continue_block
        if cont is header or header.args:
            return False
        chain = [header]
        while isinstance(chain[-1].last_op, spirv.BranchOp) and chain[-1].last_op.target not in (merge, cont, header):
            chain.append(chain[-1].last_op.target)
        term = chain[-1].last_op
        if not isinstance(term, spirv.BranchConditionalOp) or term.false_target is not merge \
                or term.true_target in (merge, cont, header) or term.true_args or term.false_args:
            return False
        if any(b.args for b in chain[1:]) or len(chain[-1].ops) > 1 and isinstance(
                list(chain[-1].ops)[-2], spirv.SelectionMergeOp):
            return False
        body = term.true_target
        cmp = term.condition.owner
        if not isinstance(cmp, spirv.ULessThanOp | spirv.SLessThanOp):
            return False
        load = cmp.lhs.owner
        if not isinstance(load, spirv.LoadOp) or not isinstance(load.pointer.owner, spirv_general.VariableOp):
            return False
        k = load.pointer
        if not isinstance(k.type.pointee, IntegerType) or k.type.pointee.width.data != 32:
            return False
        # the continue block: k = k + step (a positive constant)
        cops = list(cont.ops)
        if len(cops) != 4 or cont.args or not isinstance(cops[0], spirv.LoadOp) or cops[0].pointer is not k:
            return False
        add, st, br = cops[1], cops[2], cops[3]
        if not isinstance(add, spirv.IAddOp) or add.lhs is not cops[0].result or not isinstance(
                st, spirv.StoreOp) or st.pointer is not k or st.value is not add.result or not isinstance(
                br, spirv.BranchOp) or br.target is not header:
            return False
        step = self.const_or_none(add.rhs)
        if step is None or step <= 0:
            return False
        # the body: no early exit, k not stored, one way into the continue block
        body_blocks = self.region_blocks(body, {cont, merge, header} | self.stops(None))
        into_cont = 0
        for b in body_blocks:
            t = b.last_op
            if isinstance(t, spirv.ReturnOp | spirv.ReturnValueOp | spirv_general.UnreachableOp):
                return False
            if merge in t.successors or any(s is header for s in t.successors):
                return False
            into_cont += sum(1 for s in t.successors if s is cont)
            for op in b.ops:
                if isinstance(op, spirv.StoreOp) and self.static_key(op.pointer) is k:
                    return False
                if isinstance(op, spirv_general.FunctionCallOp) and any(a is k for a in op.arguments):
                    return False
        if into_cont != 1:
            return False
        # k is read nowhere else in the function but in the loop
        for op in self.current_fn().walk():
            if isinstance(op, spirv.LoadOp) and op.pointer is k and op.parent_block() not in blocks:
                return False
        # the header chain: loop-invariant loads and pure instructions, k read only by the test
        stored = self.stored_keys(blocks)
        chain_ops = [o for b in chain for o in b.ops if not isinstance(o, spirv.LoopMergeOp | spirv.BranchOp
                                                                          | spirv.BranchConditionalOp)]
        for o in chain_ops:
            if o is load:
                if any(u.operation is not cmp for u in load.result.uses):
                    return False
            elif o is cmp:
                continue
            elif isinstance(o, spirv.LoadOp):
                key = self.static_key(o.pointer)
                if key is not None:
                    if key in stored:
                        return False
                elif not self.unchanged_in(o.pointer, blocks):
                    return False
            elif not isinstance(o, spirv.AccessChainOp | spirv.CompositeExtractOp) and not (
                    isinstance(o, spirv.SpirvInstruction) and o.OPNAME.startswith(("OpI", "OpU", "OpS", "OpF"))
                    and not o.OPNAME.startswith("OpFunction")):
                return False
        # emit: the invariant header ops before the loop, then the loop
        for o in chain_ops:
            if o is not load and o is not cmp:
                self.lift(o)
        unsigned = isinstance(cmp, spirv.ULessThanOp)
        lb = self.index_of(self.ssa_of(self.var_value(k), lm), unsigned)
        ub = self.index_of(self.ssa(cmp.rhs, cmp), unsigned)
        keys = self.prune([x for x in self.stored_keys(body_blocks) if x is not k], blocks, [header])
        init_vals = [self.var_value(x) for x in keys]
        init = [x for v in init_vals for x in self.flatten(v, lm)]
        saved = self.block
        body_block = Block(arg_types=[IndexType(), *(v.type for v in init)])
        self.block = body_block
        it = iter(body_block.args[1:])
        for x, v in zip(keys, init_vals):
            self.vars[x] = self.unflatten(v, it)
        self.vars[k] = self.emit(arith.IndexCastOp(body_block.args[0], i32), load).results[0]
        self.loops.append(Loop(header, merge, cont, self.new_flag("break"), self.new_flag("continue")))
        self.raise_chain(body, cont)
        self.loops.pop()
        self.emit(scf.YieldOp(*[x for v in (self.var_value(x) for x in keys) for x in self.flatten(v, lm)]), lm)
        self.block = saved
        step_v = self.emit(arith.ConstantOp.from_int_and_width(step, IndexType())).results[0]
        for_op = self.emit(scf.ForOp(lb, ub, step_v, init, Region(body_block)), lm)
        it = iter(for_op.results)
        for x, v in zip(keys, init_vals):
            self.vars[x] = self.unflatten(v, it)
        return True

    def index_of(self, v: SSAValue, unsigned: bool) -> SSAValue:
        """An i32 as an index: sign-extended, or zero-extended for an unsigned comparison."""
        c = self.const_or_none(v)
        if c is not None:
            return self.const_at_entry(c % (1 << 32) if unsigned else c, IndexType())
        if unsigned:
            v = self.emit(arith.ExtUIOp(v, i64)).results[0]
        return self.emit(arith.IndexCastOp(v, IndexType())).results[0]

    # -- calls ----------------------------------------------------------------------------------
    def inline_call(self, op: spirv_general.FunctionCallOp) -> None:
        name = op.callee.root_reference.data
        fn = self.functions.get(name)
        if fn is None:
            refuse(op, f"@{name} is not a function of the module")
        if any(f.fn is fn for f in self.call_stack):
            refuse(op, f"a recursive call of @{name} is not lifted")
        args = [self.value(a, op) for a in op.arguments]
        saved = self.frame, self.loops
        self.frame = self.new_frame(fn)
        self.loops = []
        self.call_stack.append(self.frame)
        entry = fn.body.blocks[0]
        for a, v in zip(entry.args, args):
            self.values[a] = v
        self.raise_chain(entry, None)
        result = self.var_value(self.frame.retval) if self.frame.retval is not None else None
        self.call_stack.pop()
        self.frame, self.loops = saved
        if result is not None:
            self.values[op.result] = result

    def new_frame(self, fn: spirv.FuncOp) -> Frame:
        outs = fn.function_type.outputs.data
        retval = None
        if outs:
            retval = _Key(f"{fn.sym_name.data} result")
            self.var_types[retval] = outs[0]
        frame = Frame(fn, self.new_flag(f"{fn.sym_name.data} returned"), retval)
        self.vars[frame.ret] = self.const_at_entry(0, i1)
        return frame

    def current_fn(self) -> spirv.FuncOp:
        return self.frame.fn


def _bool(v: SSAValue) -> bool | None:
    """The value of an i1 `arith.constant`, None for anything else."""
    from xdsl.dialects.builtin import IntegerAttr

    owner = v.owner
    if v.type == i1 and isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return bool(owner.value.value.data)
    return None


def _only_unclipped_object(v: SSAValue) -> bool:
    """Whether `v` is used only as the Object of tensor loads without a view: Object's values
    are used for clipped loads only (SPV_NV_cooperative_matrix2), so those never read it."""
    from coopdialect.dialects import spirv_nv2

    uses = list(v.uses)
    return bool(uses) and all(isinstance(u.operation, spirv_nv2.CooperativeMatrixLoadTensorOp)
                              and u.operation.view is None and u.operation.object is v for u in uses)


def _nested_in(v: SSAValue, block: Block) -> bool:
    """Whether `v` is defined in a region nested in `block` (not visible at its end)."""
    b = v.block if isinstance(v, BlockArgument) else v.owner.parent_block()
    first = True
    while b is not None:
        if b is block:
            return not first
        first = False
        parent = b.parent_op()
        b = parent.parent_block() if parent is not None else None
    return False
