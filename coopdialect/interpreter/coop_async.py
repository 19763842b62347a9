"""Interpreter impls of the staged form (`coopdialect.dialects.coop_async`).

Semantics (docs/staging.md): `coop.alloc_workgroup` gives every subgroup of a workgroup the same
zero-filled buffer (a fresh one per workgroup). `coop.async_copy` reads its source when issued
and writes its destination when its group completes, at the `coop.async_wait_group` that
retires the group; in between, touching a destination element (a load, a store, another copy)
raises InterpreterError naming the op and the copy. A copy into elements that another subgroup
accessed in the same barrier interval is a data race (`coopdialect.interpreter.races`; the copy
counts as an access by an unknown subgroup, since the invocations that execute it are the
implementation's choice). `coop.async_wait_group` is also the workgroup barrier. A workgroup that
returns with copies not waited for raises too.

Execution model glue: the pending copies and groups are the workgroup's `AsyncCopyState`
(`coopdialect.interpreter.async_copies`), which wants each collective op ONCE per workgroup. The
interpreter currently runs each subgroup separately (in threads when the kernel has barriers), so
every subgroup executes every collective op: the first subgroup to reach the n-th copy / commit
/ wait performs it, and the others check that theirs is the same op with the same operands (an
error otherwise: the op is workgroup-collective).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from coopdialect.diagnostics import location_of
from coopdialect.dialects import coop_async
from coopdialect.interpreter.async_copies import PendingCopy
from coopdialect.interpreter.common import (
    InterpreterError,
    SubgroupContext,
    Workgroup,
    fail,
    subgroup_context,
    uniform,
)
from coopdialect.interpreter.coop import memref_view
from coopdialect.interpreter.races import access


@dataclass
class _Reached:
    """What each subgroup has reached: the performed collective ops, in order, and per subgroup
    how many copies / commits / waits it has executed."""

    copies: list[tuple[Operation, tuple[int, ...], int]] = field(default_factory=list)
    waits: list[tuple[Operation, int, int]] = field(default_factory=list)
    counts: dict[int, list[int]] = field(default_factory=dict)  # subgroup -> [copies, commits, waits]


def _reached(wg: Workgroup, ctx: SubgroupContext) -> tuple[_Reached, list[int]]:
    state = wg.async_copies
    if state.collective is None:
        state.collective = _Reached()
    r = state.collective
    return r, r.counts.setdefault(ctx.subgroup_id, [0, 0, 0])


def _box(op: Operation, what: str, rows: int, cols: int, offset: int, stride: int,
         size: int) -> np.ndarray:
    """Flat element indices (rows, cols) of `offset + i*stride + j`, bounds-checked."""
    if stride < 0 or offset < 0:
        raise fail(op, f"the {what} offset and stride must be >= 0, got offset {offset}, stride "
                       f"{stride} at run time")
    idx = offset + np.arange(rows, dtype=np.int64)[:, None] * stride + np.arange(
        cols, dtype=np.int64)[None, :]
    last = int(idx[-1, -1])
    if last >= size:
        raise fail(op, f"out-of-bounds copy: the {rows}x{cols} box reaches element {last} of the "
                       f"{what}, which has {size} elements (offset {offset}, stride {stride})")
    return idx


def _not_collective(op: Operation, ctx: SubgroupContext, what: str, first: Operation) -> \
        InterpreterError:
    return fail(op, f"{op.name} is workgroup-collective, but subgroup {ctx.subgroup_id} reached "
                    f"it {what} than the subgroup that reached the collective op first (the "
                    f"{first.name} at {location_of(first)})")


@register_impls
class CoopAsyncFunctions(InterpreterFunctions):
    """The staged-form ops (module docstring)."""

    @impl(coop_async.AllocWorkgroupOp)
    def run_alloc_workgroup(self, interpreter: Interpreter, op: coop_async.AllocWorkgroupOp,
                            args: PythonValues):
        from coopdialect.interpreter.memref import new_memref

        t = op.result.type
        assert isinstance(t, MemRefType)
        wg = subgroup_context(interpreter).workgroup
        with wg.lock:
            if op not in wg.shared:
                wg.shared[op] = new_memref(t)
                if wg.races is not None:  # unregistered when the workgroup ends
                    name = op.result.name_hint
                    wg.races.register(wg.shared[op], f"the workgroup memory "
                                      f"{'%' + name + ' ' if name else ''}of {op.name} at "
                                      f"{location_of(op)}", True)
            return (wg.shared[op],)

    @impl(coop_async.AsyncCopyOp)
    def run_async_copy(self, interpreter: Interpreter, op: coop_async.AsyncCopyOp,
                       args: PythonValues):
        src, soff, sstride, dst, doff, dstride = args
        ints = tuple(int(uniform(op, v, what)) for v, what in (
            (soff, "the source offset"), (sstride, "the source stride"),
            (doff, "the destination offset"), (dstride, "the destination stride")))
        ctx = subgroup_context(interpreter)
        wg = ctx.workgroup
        with wg.lock:
            reached, counts = _reached(wg, ctx)
            k = counts[0]
            counts[0] += 1
            if k < len(reached.copies):  # another subgroup has issued it
                first, operands, group = reached.copies[k]
                if first is not op or operands != ints or group != counts[1]:
                    raise _not_collective(op, ctx, "with other operands or at another point",
                                          first)
                return ()
            st, dt = op.source.type, op.destination.type
            assert isinstance(st, MemRefType) and isinstance(dt, MemRefType)
            sview = memref_view(op, src, st)
            dview = memref_view(op, dst, dt)
            rows, cols = op.box
            sidx = _box(op, "source", rows, cols, ints[0], ints[1], sview.size)
            didx = _box(op, "destination", rows, cols, ints[2], ints[3], dview.size)
            raw = dst.data_ptr.raw
            base = raw.offset // dview.dtype.itemsize
            size = len(memoryview(raw.memory).cast("B")) // dview.dtype.itemsize
            other = wg.async_copies.hazard(raw.memory, didx + base)
            if other is not None:  # two copies in flight into one element
                hit = int((didx + base).reshape(-1)[np.isin(didx + base, other.index).reshape(-1)][0])
                raise fail(op, f"writes element [{hit}] of workgroup memory that the {other.op.name} "
                               f"at {location_of(other.op)} (group {other.group}) has not "
                               "completed: a coop.async_wait_group must retire its group first")
            access(interpreter, op, src, sidx, write=False, once=True)
            access(interpreter, op, dst, didx, write=True, once=True)
            copy = PendingCopy(op, raw.memory, dview, base, didx + base, sview[sidx].copy())
            wg.async_copies.issue(copy, size)
            reached.copies.append((op, ints, copy.group))
        return ()

    @impl(coop_async.AsyncCommitGroupOp)
    def run_async_commit_group(self, interpreter: Interpreter,
                               op: coop_async.AsyncCommitGroupOp, args: PythonValues):
        ctx = subgroup_context(interpreter)
        wg = ctx.workgroup
        with wg.lock:
            _, counts = _reached(wg, ctx)
            if counts[1] == wg.async_copies.committed:  # the first subgroup to get here
                wg.async_copies.commit()
            counts[1] += 1
        return ()

    @impl(coop_async.AsyncWaitGroupOp)
    def run_async_wait_group(self, interpreter: Interpreter, op: coop_async.AsyncWaitGroupOp,
                             args: PythonValues):
        ctx = subgroup_context(interpreter)
        wg = ctx.workgroup
        # the workgroup barrier that the wait implies: every access before it, by any subgroup,
        # happens before the copies it retires become visible
        if wg.barrier is not None:
            try:
                wg.barrier.wait()
            except threading.BrokenBarrierError:
                raise fail(op, "the barrier was abandoned: another subgroup failed or returned "
                               "without reaching it (coop.async_wait_group is a workgroup "
                               "barrier)") from None
        elif ctx.num_subgroups > 1:
            raise fail(op, "coop.async_wait_group with several subgroups needs run_kernel's "
                           "threads")
        ctx.epoch += 1
        n = op.pending.data
        with wg.lock:
            reached, counts = _reached(wg, ctx)
            w = counts[2]
            counts[2] += 1
            if w < len(reached.waits):
                first, fn, fcommits = reached.waits[w]
                if first is not op or fn != n or fcommits != counts[1]:
                    raise _not_collective(op, ctx, "at another point", first)
                return ()
            reached.waits.append((op, n, counts[1]))
            wg.async_copies.wait(n)
        return ()


def finish_workgroup(wg: Workgroup, kernel: Operation) -> None:
    """Raise InterpreterError if the workgroup returned with copies not yet waited for."""
    state = wg.async_copies
    if state.pending:
        c = state.pending[0]
        what = "never committed" if c.group == state.committed else \
            f"in group {c.group}, which no coop.async_wait_group retired"
        raise fail(c.op, f"the workgroup returned with {len(state.pending)} asynchronous "
                         f"copies not complete (this one is {what}); end with "
                         "coop.async_commit_group and coop.async_wait_group 0")
