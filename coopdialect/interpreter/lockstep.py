"""The lock-step runner: every subgroup of every workgroup of a grid, interpreted together.

`run_kernel` (`coopdialect.interpreter.kernel`) hands this module the *members* of a dispatch
(one `SubgroupContext` per subgroup of each workgroup, workgroup-major) and it interprets the
kernel body ONCE for all of them, op by op, without threads:

* **Values.** An SSA value that is the same for every member is held once, in the value model of
  `coopdialect.interpreter.common` (a Python int, a numpy matrix, a lane vector, ...). One that
  differs between members is a `Varying`: member m's value is `item(m)`, kept either as a list or
  as a numpy stack with a leading member axis (shape (members, ...)).
* **Ops.** The members that execute an op with identical operands execute it once, as one
  group: an op whose operands are all uniform runs once for all of them; a Workgroup-scope
  matrix op whose operands agree within each workgroup runs once per workgroup. Hot ops whose
  operands differ run once over the member axis (`lockstep_fast`: arith, the element-wise and
  mul_add matrix ops, Subgroup-scope coop.load/coop.store); any other op runs once per member,
  with the unchanged impl of its dialect. An op that reads its member's identity (`gpu.subgroup_id`,
  `gpu.block_id`, `gpu.thread_id`, `gpu.global_id`, allocations, Workgroup-scope
  extract/insert, lane-masked memref accesses in a partial last subgroup) runs once per member.
  A fast path that meets anything unusual (an error, a race, repeated elements) gives up before
  changing any state and the op is replayed one member at a time, so values, errors and their
  `(workgroup ..., subgroup ...)` are those of the per-member semantics.
* **Control flow.** `scf.if`, `scf.for`, `scf.while` are run here: each member's condition or
  bounds must be uniform across its own invocations (a lane-divergent one is refused with one
  line naming the op, as before); members that disagree are split into groups that run the
  region one group after another, and the region results are merged per member.
* **`gpu.barrier`** is a point that all subgroups of a workgroup reach together: it starts a new
  race-detection epoch for them. A barrier reached by only some subgroups of a workgroup (it
  sits in control flow that diverges between them) is an error.
* **Workgroups.** The members of many workgroups run together (chunks of up to `MAX_MEMBERS`
  members). That order is as good as any other: two workgroups are never ordered, so any element
  that one workgroup writes and another accesses is a data race that
  `coopdialect.interpreter.races` reports whichever order the accesses come in; without such a
  race, no order can change a value.
* **Workgroup-collective ops** (`WORKGROUP_COLLECTIVE`, e.g. asynchronous copies into workgroup
  memory) run once per workgroup, with every subgroup of the workgroup present (like a barrier)
  and with operands that agree between its subgroups; the impl gets the first subgroup's context
  with `ctx.batch` listing the workgroup's subgroups, and `ctx.workgroup` is the workgroup's
  shared state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import func, memref, scf
from xdsl.dialects import gpu as xgpu
from xdsl.interpreter import Interpreter
from xdsl.ir import Block, Operation, SSAValue

from coopdialect.dialects import coop
from coopdialect.dialects import gpu as cgpu
from coopdialect.interpreter.common import (
    InterpreterError,
    SubgroupContext,
    fail,
    set_subgroup_context,
    uniform,
)
from coopdialect.interpreter.lockstep_fast import FAST as _FAST
from coopdialect.interpreter.lockstep_fast import try_fast
from coopdialect.interpreter.lockstep_values import Varying, kind_of, same_bits, value_key

MAX_MEMBERS = 8192  # subgroups interpreted together (whole workgroups)

# Ops that run once per workgroup at a point all its subgroups reach together (module docstring).
# Other impl modules add their op classes here.
WORKGROUP_COLLECTIVE: set[type[Operation]] = set()


def _workgroup_scope(op: Operation) -> bool:
    """Whether an operand or result of `op` is a Workgroup-scope cooperative matrix."""
    return any(isinstance(v.type, coop.MatrixType) and v.type.scope_value == coop.Scope.Workgroup
               for v in (*op.operands, *op.results))


_IDENTITY = (cgpu.SubgroupIdOp, cgpu.BlockIdOp, cgpu.ThreadIdOp, cgpu.GlobalIdOp,
             memref.AllocOp, memref.AllocaOp, func.CallOp)
_LANE_MASKED = (memref.LoadOp, memref.StoreOp, coop.InsertOp)  # ctx.active(): partial subgroups


class LockstepRunner:
    """Interprets one kernel for a list of members (module docstring)."""

    def __init__(self, interpreter: Interpreter, stack: list[Operation],
                 members: list[SubgroupContext]) -> None:
        self.interpreter = interpreter
        self.op_stack = stack  # kernel._OpTracker's stack: the innermost op of an error
        self.members = members
        self.count = len(members)
        self.nsub = members[0].num_subgroups
        self.partial = members[0].workgroup_invocations % members[0].subgroup_size != 0
        self.env: dict[SSAValue, Any] = {}
        self.step = 0
        self._plans: dict[Operation, str] = {}

    # ---- entry ------------------------------------------------------------------------

    def run(self, kernel: func.FuncOp, args: Sequence[Any]) -> None:
        block = kernel.body.block
        self.env.update(zip(block.args, args))
        self.run_block(block, list(range(self.count)))

    def run_block(self, block: Block, act: list[int]) -> list[Any]:
        """Run `block` for the members `act`; the terminator's operand values."""
        env = self.env
        for op in block.ops:
            if isinstance(op, scf.YieldOp | scf.ConditionOp | func.ReturnOp):
                return [env[o] for o in op.operands]
            special = _SPECIAL.get(type(op))
            if special is not None:
                results = special(self, op, act)
            else:
                results = self.execute(op, act)
            env.update(zip(op.results, results))
        return []

    # ---- errors -----------------------------------------------------------------------

    def error(self, e: BaseException, ctx: SubgroupContext) -> InterpreterError:
        """One InterpreterError naming the innermost op and the member (or the accessor a race
        names)."""
        if isinstance(e, InterpreterError) and getattr(e, "located", False):
            return e
        member = getattr(e, "member", None) or ctx
        where = f"workgroup {member.block_id}, subgroup {member.subgroup_id}"
        if isinstance(e, InterpreterError):
            out = InterpreterError(e.op, f"{e.message} ({where})")
        else:
            op = self.op_stack[-1] if self.op_stack else None
            text = str(e).strip().splitlines()
            out = InterpreterError(op, f"{type(e).__name__}: {text[0] if text else ''} ({where})")
        out.located = True
        return out

    # ---- ops --------------------------------------------------------------------------

    def call(self, op: Operation, members: list[int], args: Sequence[Any]) -> tuple:
        """Run `op`'s impl once for `members` (identical operands)."""
        ctxs = self.members
        ctx = ctxs[members[0]]
        ctx.batch = [ctxs[m] for m in members] if len(members) > 1 else None
        for m in members:
            ctxs[m].step = self.step
        set_subgroup_context(self.interpreter, ctx)
        self.op_stack.clear()
        try:
            return tuple(self.interpreter.run_op(op, tuple(args)))
        except Exception as e:  # noqa: BLE001 - every failure becomes one InterpreterError
            raise self.error(e, ctx) from e
        finally:
            ctx.batch = None

    def plan(self, op: Operation) -> str:
        """How `op` groups its members: "member" (its identity matters), "collective",
        "workgroup" (a Workgroup-scope matrix op) or "uniform"."""
        p = self._plans.get(op)
        if p is None:
            if op.regions:  # the runner holds the values its regions would read
                raise self.error(fail(op, f"{op.name} (an op with regions) is not supported by "
                                          "the interpreter"), self.members[0])
            if isinstance(op, _IDENTITY) or (self.partial and isinstance(op, _LANE_MASKED)) or (
                    isinstance(op, coop.ExtractOp | coop.InsertOp) and _workgroup_scope(op)):
                p = "member"
            elif type(op) in WORKGROUP_COLLECTIVE:
                p = "collective"
            elif _workgroup_scope(op):
                p = "workgroup"
            else:
                p = "uniform"
            self._plans[op] = p
        return p

    def execute(self, op: Operation, act: list[int]) -> tuple:
        self.step += 1
        args = [self.env[o] for o in op.operands]
        plan = self.plan(op)
        varying = [i for i, a in enumerate(args) if isinstance(a, Varying)]
        vargs = [args[i] for i in varying]
        if plan == "collective":
            self.check_whole_workgroups(op, act, "the workgroup-collective op")
            groups = self.workgroup_groups(op, act, vargs)
        elif plan != "member" and not varying:
            return self.call(op, act, args)
        else:
            fast = _FAST.get(type(op)) if plan != "member" and self.count > 1 and \
                len(act) == self.count else None
            if fast is not None and plan == "uniform":
                results = try_fast(fast, self, op, args)
                if results is not None:
                    return results
                fast = None
            groups = [[m] for m in act] if plan == "member" else self.key_groups(act, vargs)
            if fast is not None and len(groups) == len(act):
                # a Workgroup-scope op that no two members share
                results = try_fast(fast, self, op, args)
                if results is not None:
                    return results
        return self.merge(op, groups, [self.call(op, g, self.member_args(args, g[0]))
                                       for g in groups])

    @staticmethod
    def member_args(args: Sequence[Any], m: int) -> list[Any]:
        return [a.item(m) if isinstance(a, Varying) else a for a in args]

    def key_groups(self, act: list[int], varying: list[Varying]) -> list[list[int]]:
        """The members of `act` grouped by their values of `varying` (equal ints, bools and
        numpy scalars; the same object for anything else), in order of first member."""
        groups: dict[tuple, list[int]] = {}
        for m in act:
            groups.setdefault(tuple(value_key(v.item(m)) for v in varying), []).append(m)
        return list(groups.values())

    def workgroup_groups(self, op: Operation, act: list[int],
                         varying: list[Varying]) -> list[list[int]]:
        """The members of each workgroup, for a workgroup-collective op (whose operands must
        agree between the subgroups of a workgroup)."""
        groups: list[list[int]] = []
        members = self.members
        i = 0
        while i < len(act):
            w = members[act[i]].workgroup
            j = i
            while j < len(act) and members[act[j]].workgroup is w:
                j += 1
            g = act[i:j]
            if not all(same_bits(v.item(g[0]), v.item(m)) for v in varying for m in g[1:]):
                raise self.error(fail(op, "the operands of a workgroup-collective op differ "
                                          "between the subgroups of the workgroup"),
                                 members[g[0]])
            groups.append(g)
            i = j
        return groups

    def merge(self, op: Operation, groups: list[list[int]], results: list[tuple]) -> tuple:
        """Per-result values from the results of each group of members."""
        out = []
        for k in range(len(op.results)):
            first = results[0][k]
            if len(results) == 1 or (all(r[k] is first for r in results) and
                                     not isinstance(first, Varying)):
                out.append(first)
                continue
            items: list[Any] = [None] * self.count
            for g, r in zip(groups, results):
                v = r[k]
                for m in g:
                    items[m] = v.item(m) if isinstance(v, Varying) else v
            out.append(Varying(items=items, kind=kind_of(items[groups[0][0]])))
        return tuple(out)

    def check_whole_workgroups(self, op: Operation, act: list[int], what: str) -> None:
        """Every workgroup with a member in `act` has all its subgroups there."""
        counts: dict[int, list[int]] = {}
        for m in act:
            counts.setdefault(self.members[m].workgroup_number, []).append(m)
        for ms in counts.values():
            if len(ms) != self.nsub:
                missing = sorted(set(range(self.nsub)) - {self.members[m].subgroup_id
                                                          for m in ms})
                raise self.error(fail(op, f"the barrier was abandoned: {what} is reached by "
                                          f"only some subgroups of the workgroup (subgroups "
                                          f"{missing} do not reach it here: divergent control "
                                          f"flow)"), self.members[ms[0]])

    # ---- control flow -----------------------------------------------------------------

    def per_member(self, op: Operation, v: Any, act: list[int], what: str) -> list[Any]:
        """Each member's uniform value of the control operand `v` (lane-divergence raises)."""
        if not isinstance(v, Varying):
            try:
                u = uniform(op, v, what)
            except InterpreterError as e:
                raise self.error(e, self.members[act[0]]) from None
            return [u] * len(act)
        out = []
        for m in act:
            try:
                out.append(uniform(op, v.item(m), what))
            except InterpreterError as e:
                raise self.error(e, self.members[m]) from None
        return out

    @staticmethod
    def split(act: list[int], keys: list[Any]) -> list[tuple[Any, list[int]]]:
        """The members of `act` grouped by key, in order of first appearance."""
        groups: dict[Any, list[int]] = {}
        for m, k in zip(act, keys):
            groups.setdefault(k, []).append(m)
        return list(groups.items())

    def run_if(self, op: scf.IfOp, act: list[int]) -> tuple:
        conds = self.per_member(op, self.env[op.cond], act, "the scf.if condition")
        parts = self.split(act, [bool(c) for c in conds])
        results = []
        for c, g in parts:
            region = op.true_region if c else op.false_region
            results.append(self.run_block(region.block, g) if region.blocks else [])
        return self.merge(op, [g for _, g in parts], [tuple(r) for r in results])

    def run_for(self, op: scf.ForOp, act: list[int]) -> tuple:
        env = self.env
        bounds = [self.per_member(op, env[v], act, what) for v, what in
                  ((op.lb, "the lower bound"), (op.ub, "the upper bound"),
                   (op.step, "the step"))]
        parts = self.split(act, list(zip(*bounds)))
        body = op.body.block
        results = []
        for (lb, ub, step), g in parts:
            loop = [env[v] for v in op.iter_args]
            for i in range(lb, ub, step):
                env[body.args[0]] = i
                env.update(zip(body.args[1:], loop))
                loop = self.run_block(body, g)
            results.append(tuple(loop))
        return self.merge(op, [g for _, g in parts], results)

    def run_while(self, op: scf.WhileOp, act: list[int]) -> tuple:
        env = self.env
        before, after = op.before_region.block, op.after_region.block
        loop = [env[v] for v in op.arguments]
        done_groups: list[list[int]] = []
        done_results: list[tuple] = []
        while act:
            env.update(zip(before.args, loop))
            cond, *fwd = self.run_block(before, act)
            conds = self.per_member(op, cond, act, "the scf.while condition")
            going = [m for m, c in zip(act, conds) if c]
            if len(going) < len(act):
                done_groups.append([m for m, c in zip(act, conds) if not c])
                done_results.append(tuple(fwd))
            act = going
            if act:
                env.update(zip(after.args, fwd))
                loop = self.run_block(after, act)
        return self.merge(op, done_groups, done_results)

    def run_index_switch(self, op: scf.IndexSwitchOp, act: list[int]) -> tuple:
        values = self.per_member(op, self.env[op.arg], act, "the scf.index_switch operand")
        cases = [int(c) for c in op.cases.get_values()]
        parts = self.split(act, [cases.index(v) if v in cases else -1 for v in values])
        results = []
        for c, g in parts:
            region = op.case_regions[c] if c >= 0 else op.default_region
            results.append(tuple(self.run_block(region.block, g)))
        return self.merge(op, [g for _, g in parts], results)

    def run_barrier(self, op: Operation, act: list[int]) -> tuple:
        self.check_whole_workgroups(op, act, "the gpu.barrier")
        for m in act:
            self.members[m].epoch += 1  # a new race-detection epoch (interpreter.races)
        return ()


_SPECIAL: dict[type, Callable[[LockstepRunner, Any, list[int]], tuple]] = {
    scf.IfOp: LockstepRunner.run_if,
    scf.ForOp: LockstepRunner.run_for,
    scf.WhileOp: LockstepRunner.run_while,
    scf.IndexSwitchOp: LockstepRunner.run_index_switch,
    xgpu.BarrierOp: LockstepRunner.run_barrier,
}
