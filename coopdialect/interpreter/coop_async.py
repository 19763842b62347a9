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

Execution model: the lock-step runner (`coopdialect.interpreter.lockstep`) runs the copy, commit
and wait ONCE per workgroup (`WORKGROUP_COLLECTIVE`), after checking that every subgroup of the
workgroup reached the op with the same operands; the pending copies and groups are the
workgroup's `AsyncCopyState` (`coopdialect.interpreter.async_copies`), which every memory access
asks (`races.access`); `finish_workgroup` runs when the workgroup returns.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from coopdialect.errors import location_of
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
from coopdialect.interpreter.lockstep import WORKGROUP_COLLECTIVE
from coopdialect.interpreter.races import access, pending_name
from coopdialect.interpreter.tensor_addr import (
    AddressingError,
    LayoutValue,
    clamp_value_as,
    tensor_element_indices,
)


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


def issue_copy(interpreter: Interpreter, op: coop_async.AsyncCopyOp, wg: Workgroup, src: Any,
               dst: Any, ints: tuple[int, int, int, int]) -> PendingCopy:
    """Perform the workgroup's ONE execution of `op` (whatever the execution model): check the
    boxes (`ints` = source offset, source stride, destination offset, destination stride, in
    elements) and that no pending copy writes the destination, record the accesses for race
    detection (an unknown subgroup's, once), read the source now and issue the copy. Raises
    InterpreterError naming `op`."""
    st, dt = op.source.type, op.destination.type
    assert isinstance(st, MemRefType) and isinstance(dt, MemRefType)
    sview = memref_view(op, src, st)
    dview = memref_view(op, dst, dt)
    rows, cols = op.box
    sidx = _box(op, "source", rows, cols, ints[0], ints[1], sview.size)
    didx = _box(op, "destination", rows, cols, ints[2], ints[3], dview.size)
    access(interpreter, op, src, sidx, write=False, once=True)
    return _issue(interpreter, op, wg, dst, dview, didx, sview[sidx].copy())


def _issue(interpreter: Interpreter, op: Operation, wg: Workgroup, dst: Any, dview: np.ndarray,
           didx: np.ndarray, data: np.ndarray) -> PendingCopy:
    """Issue a copy of `data` (read now) into the elements `didx` of `dst`; InterpreterError
    when a pending copy still writes one of them."""
    raw = dst.data_ptr.raw
    base = raw.offset // dview.dtype.itemsize
    size = len(memoryview(raw.memory).cast("B")) // dview.dtype.itemsize
    other = wg.async_copies.hazard(raw.memory, didx + base)
    if other is not None:  # two copies in flight into one element
        hit = int((didx + base).reshape(-1)[np.isin(didx + base, other.index).reshape(-1)][0])
        raise fail(op, f"writes element [{hit}] of {pending_name(other)} that the "
                       f"{other.op.name} at {location_of(other.op)} (group {other.group}) has "
                       "not completed: a coop.async_wait_group must retire its group first")
    access(interpreter, op, dst, didx, write=True, once=True)
    copy = PendingCopy(op, raw.memory, dview, base, didx + base, data)
    wg.async_copies.issue(copy, size)
    return copy


def issue_tensor_copy(interpreter: Interpreter, op: coop_async.AsyncCopyTensorOp, wg: Workgroup,
                      src: Any, layout: LayoutValue, dst: Any, doff: int,
                      dstride: int) -> PendingCopy:
    """The workgroup's one execution of a `coop.async_copy_tensor`: the rows x cols matrix that
    OpCooperativeMatrixLoadTensorNV would load through `layout` (no view, no DecodeFunc; the
    interpreter's `tensor_element_indices`, clampValue's bits for Constant-mode out-of-bounds
    elements), read now and written to `dst[doff + i*dstride + j]` when its group completes."""
    st, dt = op.source.type, op.destination.type
    assert isinstance(st, MemRefType) and isinstance(dt, MemRefType)
    sview = memref_view(op, src, st)
    dview = memref_view(op, dst, dt)
    rows, cols = op.box
    didx = _box(op, "destination", rows, cols, doff, dstride, dview.size)
    try:
        a = tensor_element_indices(layout, rows, cols, None, False)
    except AddressingError as e:
        raise fail(op, str(e)) from None
    sel = ~a.discarded
    bad = sel & (a.index >= sview.size)
    if bad.any():
        r, c = (int(v[0]) for v in np.nonzero(bad))
        raise fail(op, f"out-of-bounds copy: element ({r}, {c}) is at index "
                       f"{int(a.index[r, c])}, outside the {sview.size} elements of the source")
    data = np.empty((rows, cols), sview.dtype)
    data[a.discarded] = clamp_value_as(sview.dtype, layout.state.clamp_value)
    data[sel] = sview[a.index[sel]]
    access(interpreter, op, src, a.index[sel], write=False, once=True)
    return _issue(interpreter, op, wg, dst, dview, didx, data)


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
        # workgroup-collective (WORKGROUP_COLLECTIVE below): runs once per workgroup, after the
        # lock-step runner checked that every subgroup reached it with the same operands
        src, soff, sstride, dst, doff, dstride = args
        ints = tuple(int(uniform(op, v, what)) for v, what in (
            (soff, "the source offset"), (sstride, "the source stride"),
            (doff, "the destination offset"), (dstride, "the destination stride")))
        issue_copy(interpreter, op, subgroup_context(interpreter).workgroup, src, dst, ints)
        return ()

    @impl(coop_async.AsyncCopyTensorOp)
    def run_async_copy_tensor(self, interpreter: Interpreter, op: coop_async.AsyncCopyTensorOp,
                              args: PythonValues):
        # workgroup-collective like coop.async_copy
        src, layout, dst, doff, dstride = args
        ints = tuple(int(uniform(op, v, what)) for v, what in (
            (doff, "the destination offset"), (dstride, "the destination stride")))
        issue_tensor_copy(interpreter, op, subgroup_context(interpreter).workgroup, src, layout,
                          dst, *ints)
        return ()

    @impl(coop_async.AsyncCommitGroupOp)
    def run_async_commit_group(self, interpreter: Interpreter,
                               op: coop_async.AsyncCommitGroupOp, args: PythonValues):
        subgroup_context(interpreter).workgroup.async_copies.commit()
        return ()

    @impl(coop_async.AsyncWaitGroupOp)
    def run_async_wait_group(self, interpreter: Interpreter, op: coop_async.AsyncWaitGroupOp,
                             args: PythonValues):
        ctx = subgroup_context(interpreter)
        # the workgroup barrier the wait implies: a new race epoch for every subgroup, so the
        # accesses before it happen before the copies it retires become visible
        for m in ctx.batch or [ctx]:
            m.epoch += 1
        ctx.workgroup.async_copies.wait(op.pending.data)
        return ()


WORKGROUP_COLLECTIVE.update({coop_async.AllocWorkgroupOp, coop_async.AsyncCopyOp,
                             coop_async.AsyncCopyTensorOp,
                             coop_async.AsyncCommitGroupOp, coop_async.AsyncWaitGroupOp})


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
