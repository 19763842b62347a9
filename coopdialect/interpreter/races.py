"""Data-race detection for interpreted kernels (see `coopdialect.interpreter.kernel`).

The interpreter runs all subgroups of all workgroups in lock-step (`coopdialect.interpreter.
lockstep`), in one fixed order, so a racy kernel would silently get the answer of that one order.
This module makes such a kernel raise instead. The race model:

* **Accessors.** A memref load/store and a Subgroup-scope matrix load/store are accesses by the
  subgroup (member) that executes them (its invocations are not told apart: races between the
  invocations of one subgroup are not detected). A Workgroup-scope matrix load/store in a
  workgroup of more than one subgroup is an access by *an unknown subgroup* of the workgroup,
  because which invocation loads or stores which element of a Workgroup matrix is
  implementation-dependent (KHR 3.X OpCooperativeMatrixLoadKHR/StoreKHR; NV cooperative_matrix2).
* **Epochs.** Within a workgroup, `gpu.barrier` starts a new epoch: accesses in different
  epochs are ordered. Different workgroups are never ordered.
* **Races.** Two accesses to one element conflict when at least one is a write and they are
  not both by the same known subgroup in one epoch of one workgroup (or in different epochs of one
  workgroup). Conflicts are found in both orders: read after write, write after write, and write
  after read (readers are recorded for buffers that some store in the module may write).
* **Workgroup-scope stores** execute once per workgroup. Where the subgroups of a workgroup
  disagree about a Workgroup-scope store's operands, each subgroup executes its own copy (the
  interpreter cannot tell which copy the GPU would execute): copies of one execution that write
  an element with the identical bits are one store (accepted); a copy with different bits, or a
  different Workgroup-scope store to the element in the same epoch, is a race.
* Reads of elements nobody wrote never race with each other.

Checks happen at each access, against the records of the accesses before it, in the
interpreter's fixed order; since every pair of conflicting accesses is flagged whichever comes
first, the verdict does not depend on that order (only which of the two accesses is named).

Granularity: elements of the memref's element type, per allocation (a kernel argument, or a
workgroup-memory allocation). Arguments that are the same numpy memory (same address, size and
dtype) share one record; partially overlapping arguments, or one memory viewed with two dtypes,
are tracked separately (their races are not detected). Private (Function) allocations are not
tracked: only their own subgroup sees them.

Records: per buffer, an int64 array of its element count holding the last writer's code
(allocated on the first write), one holding the readers' code (only for buffers a store may
write, on the first read), and one holding the execution step of the Workgroup-scope store that
wrote each element (on the first such store). A code packs (workgroup number + 1, epoch,
subgroup) into one int64 (subgroup = N, the subgroup count, for "an unknown subgroup"); 0 is
"never"; `_SEVERAL` is "readers in several workgroups". Each access is a few vectorized numpy
operations over its indices (no per-element Python loop).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func, memref
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation

from coopdialect.interpreter.common import (
    InterpreterError,
    SubgroupContext,
    fail,
    numpy_dtype,
    subgroup_context,
)

_SUB_BITS = 20
_EP_BITS = 20
_WG_SHIFT = _SUB_BITS + _EP_BITS
_MASK = (1 << _SUB_BITS) - 1
_EP_MASK = (1 << _EP_BITS) - 1
_WG_LIMIT = (1 << 23) - 2  # workgroup numbers below this fit the code
_SEVERAL = np.int64(((1 << 23) - 1) << _WG_SHIFT)  # readers in several workgroups


def _code(wg: int, epoch: int, sub: int) -> int:
    return ((wg + 1) << _WG_SHIFT) | (epoch << _SUB_BITS) | sub


def _address(mem: Any) -> int:
    """Address of the first byte of a buffer-protocol object (0 when empty)."""
    a = np.frombuffer(mem, np.uint8)
    return a.ctypes.data if a.size else 0


@dataclass
class _Buffer:
    """The race record of one allocation (unit: elements of `itemsize` bytes from its start)."""

    memory: Any  # the memory object, kept alive so that its id() stays unique
    itemsize: int
    count: int
    shape: tuple[int, ...]
    name: str
    track_reads: bool
    owner: np.ndarray | None = None  # last writer's code
    reader: np.ndarray | None = None  # readers' code (merged; see the module docstring)
    instance: np.ndarray | None = None  # step of the Workgroup-scope store that wrote it

    def element(self, i: int) -> str:
        if len(self.shape) > 1 and int(np.prod(self.shape)) == self.count:
            return "[" + ", ".join(str(int(x)) for x in np.unravel_index(i, self.shape)) + "]"
        return f"[{i}]"


def _conflicts(rec: np.ndarray, me: Any, wgs: bool) -> np.ndarray:
    """Which records conflict with an access coded `me` (scalar or broadcastable array)."""
    same_wg = (rec >> _WG_SHIFT) == (np.asarray(me) >> _WG_SHIFT)
    same_ep = ((rec >> _SUB_BITS) & _EP_MASK) == ((np.asarray(me) >> _SUB_BITS) & _EP_MASK)
    other = (rec != me) | wgs  # a Workgroup-scope access conflicts with its own kind too
    return (rec != 0) & (~same_wg | (same_ep & other))


def _merge_readers(old: np.ndarray, new: Any, nsub: int) -> np.ndarray:
    """The readers' code after readers `new` join readers `old` (module docstring)."""
    new = np.asarray(new, np.int64)
    same_wg = (old >> _WG_SHIFT) == (new >> _WG_SHIFT)
    same_ep = ((old >> _SUB_BITS) & _EP_MASK) == ((new >> _SUB_BITS) & _EP_MASK)
    unknown = (new & ~np.int64(_MASK)) | nsub  # an unknown subgroup of new's workgroup and epoch
    return np.where((old == 0) | (old == new) | (same_wg & ~same_ep), new,
                    np.where(same_wg, unknown, _SEVERAL))


@dataclass
class RaceTracker:
    """The race records of one `run_kernel` (module docstring)."""

    buffers: dict[int, _Buffer] = field(default_factory=dict)  # id(memory) -> record
    blocks: list[tuple[int, int, int]] = field(default_factory=list)  # workgroup number -> id
    nsub: int = 1

    # ---- registration ------------------------------------------------------------------

    def register(self, value: Any, name: str, track_reads: bool) -> None:
        """Track the allocation behind the memref `value` (a ShapedArray)."""
        mem = value.data_ptr.raw.memory
        size = numpy_dtype(value.data_ptr.xtype).itemsize
        nbytes = len(memoryview(mem).cast("B"))
        for other in self.buffers.values():  # the same numpy memory passed twice: one record
            if (_address(other.memory), other.count * other.itemsize, other.itemsize) == (
                    _address(mem), nbytes, size):
                other.track_reads |= track_reads
                self.buffers[id(mem)] = other
                return
        self.buffers[id(mem)] = _Buffer(mem, size, nbytes // size, tuple(value.shape), name,
                                        track_reads)

    def unregister(self, value: Any) -> None:
        self.buffers.pop(id(value.data_ptr.raw.memory), None)

    def code(self, ctx: SubgroupContext, wgs: bool) -> int:
        """The code of an access by `ctx` (an unknown subgroup of its workgroup if `wgs`)."""
        if ctx.epoch > _EP_MASK or ctx.workgroup_number > _WG_LIMIT or self.nsub >= _MASK:
            raise fail(None, "the race detector ran out of codes (too many gpu.barrier epochs, "
                             "workgroups or subgroups)")
        return _code(ctx.workgroup_number, ctx.epoch, self.nsub if wgs else ctx.subgroup_id)

    def describe(self, code: int, ctx: SubgroupContext) -> str:
        """Who `code` is, as seen from `ctx`'s workgroup."""
        if code == _SEVERAL:
            return "subgroups of several workgroups"
        wg, sub = (code >> _WG_SHIFT) - 1, code & _MASK
        if wg == ctx.workgroup_number:
            if sub == self.nsub:
                return ("an unknown subgroup of this workgroup (a Workgroup-scope matrix access, "
                        "or several subgroups)")
            return f"subgroup {sub} of this workgroup"
        who = "an unknown subgroup" if sub == self.nsub else f"subgroup {sub}"
        return f"{who} of workgroup {self.blocks[wg]}"

    # ---- accesses ----------------------------------------------------------------------

    def _lookup(self, value: Any, write: bool) -> _Buffer | None:
        raw = value.data_ptr.raw
        buf = self.buffers.get(id(raw.memory))
        if buf is None or buf.memory is not raw.memory:
            return None  # private memory, or not a tracked allocation
        if not write and buf.owner is None and not buf.track_reads:
            return None
        return buf

    def access(self, op: Operation, ctx: SubgroupContext, value: Any, idx: Any, *,
               write: bool, workgroup_scope: bool = False, view: Any = None,
               new: Any = None) -> None:
        """See the module-level `access` (one accessor: `ctx`, or an unknown subgroup of its
        workgroup for a Workgroup-scope access)."""
        wgs = workgroup_scope and self.nsub > 1
        buf = self._lookup(value, write)
        if buf is None:
            return
        me = self.code(ctx, wgs)
        raw = value.data_ptr.raw
        flat = np.asarray(idx, dtype=np.int64).reshape(-1) + raw.offset // buf.itemsize
        if buf.owner is not None:
            t = buf.owner[flat]
            bad = _conflicts(t, me, wgs)
            if wgs and write and view is not None:
                # another subgroup's copy of this very store execution, same bits: one store
                inst = buf.instance[flat] if buf.instance is not None else 0
                o = view[np.asarray(idx, dtype=np.int64).reshape(-1)]
                w = np.ascontiguousarray(np.broadcast_to(new, np.shape(idx))).reshape(-1)
                ui = np.dtype(f"u{o.dtype.itemsize}")
                same = o.view(ui) == w.astype(o.dtype).view(ui)
                bad &= ~((t == me) & (inst == ctx.step) & same)
            if bad.any():
                k = int(np.nonzero(bad)[0][0])
                why = ""
                if wgs and write and t[k] == me:
                    why = (" (another subgroup's copy of this store wrote a different value)"
                           if buf.instance is not None and inst[k] == ctx.step
                           else " (by another Workgroup-scope store)")
                raise self._race(op, ctx, buf, int(flat[k]), int(t[k]), write, wgs,
                                 "wrote" + why)
        if write and buf.reader is not None:
            r = buf.reader[flat]
            bad = _conflicts(r, me, wgs)
            if bad.any():
                k = int(np.nonzero(bad)[0][0])
                raise self._race(op, ctx, buf, int(flat[k]), int(r[k]), write, wgs, "read")
        if write:
            if buf.owner is None:
                buf.owner = np.zeros(buf.count, np.int64)
            buf.owner[flat] = me
            if wgs:
                if buf.instance is None:
                    buf.instance = np.zeros(buf.count, np.int64)
                buf.instance[flat] = ctx.step
        elif buf.track_reads:
            if buf.reader is None:
                buf.reader = np.zeros(buf.count, np.int64)
            buf.reader[flat] = _merge_readers(buf.reader[flat], me, self.nsub)

    def try_access_members(self, value: Any, idx: np.ndarray, members: list[SubgroupContext],
                           *, write: bool) -> bool:
        """The accesses of several members at once, member `i` (not Workgroup-scope) accessing
        the elements `idx[i]` (shape (len(members), E)). Records them and returns True when
        none conflicts with the records or with another of them and no element repeats;
        otherwise records nothing and returns False (the caller then replays the accesses one
        member at a time, which names the race or accepts the repeat exactly)."""
        buf = self._lookup(value, write)
        if buf is None:
            return True
        me = np.array([self.code(c, False) for c in members], np.int64)[:, None]
        flat = idx.reshape(len(members), -1) + value.data_ptr.raw.offset // buf.itemsize
        if (write or buf.track_reads) and has_repeats(flat, buf.count):
            return False
        if buf.owner is not None and _conflicts(buf.owner[flat], me, False).any():
            return False
        if write and buf.reader is not None and _conflicts(buf.reader[flat], me, False).any():
            return False
        me = np.broadcast_to(me, flat.shape)
        if write:
            if buf.owner is None:
                buf.owner = np.zeros(buf.count, np.int64)
            buf.owner[flat] = me
        elif buf.track_reads:
            if buf.reader is None:
                buf.reader = np.zeros(buf.count, np.int64)
            buf.reader[flat] = _merge_readers(buf.reader[flat], me, self.nsub)
        return True

    def _race(self, op: Operation, ctx: SubgroupContext, buf: _Buffer, i: int, other: int,
              write: bool, wgs: bool, did: str) -> InterpreterError:
        who = "a Workgroup-scope matrix " + ("store" if write else "load") if wgs else \
            "this subgroup"
        if wgs and type(op).__name__ in ("AsyncCopyOp", "AsyncCopyTensorOp"):  # once per workgroup
            who = f"the workgroup-collective {op.name}"
        verb = "writes" if write else "reads"
        other_wg = (other >> _WG_SHIFT) - 1
        order = ("workgroups are not ordered" if other == _SEVERAL or
                 other_wg != ctx.workgroup_number else
                 "no gpu.barrier between them; which invocation accesses which element of a "
                 "Workgroup-scope matrix is implementation-dependent" if wgs or
                 other & _MASK == self.nsub else "no gpu.barrier between them")
        e = fail(op, f"data race: {who} {verb} element {buf.element(i)} of {buf.name}, which "
                     f"{self.describe(other, ctx)} {did} ({order})")
        e.member = ctx  # the error's "(workgroup ..., subgroup ...)" names this accessor
        return e


def has_repeats(flat: np.ndarray, count: int) -> bool:
    """Whether an element index in `flat` (all in [0, count)) occurs more than once."""
    mark = np.zeros(count, np.bool_)
    mark[flat.reshape(-1)] = True
    return int(np.count_nonzero(mark)) != flat.size


def access(interpreter: Interpreter, op: Operation, value: Any, idx: Any, *, write: bool,
           workgroup_scope: bool = False, view: np.ndarray | None = None,
           new: Any = None, once: bool = False) -> None:
    """Check and record an access to the elements `idx` (int indices, any shape, in elements
    from the start of the memref `value`'s flat view) of memref `value` (an xDSL ShapedArray) by
    the running member(s); a no-op outside `run_kernel` or for untracked (private) memory.

    The accessors are the running context's `batch` (the members that execute this op together
    with identical operands, in order) or the context itself: each member's access is checked
    and recorded in turn (one access per workgroup for a Workgroup-scope op).

    `once`: the access of a workgroup-collective op that executes once per workgroup (a
    `coop.async_copy`), by an unknown subgroup of the workgroup. Every access is also checked
    against the workgroup's pending asynchronous copies (`coopdialect.interpreter.async_copies`):
    touching an element that a copy has not completed writing raises InterpreterError naming the
    op and the copy.

    `workgroup_scope`: the op is a Workgroup-scope matrix load/store. For a Workgroup-scope store,
    `view` is the memref's flat numpy view (its current values, before the store) and `new` the
    values stored (the shape of `idx`), for the identical-copies exception. Call it BEFORE the
    store writes. Raises InterpreterError `data race: ...` naming the op, the buffer, one element
    and the other accessor (module docstring)."""
    ctx = subgroup_context(interpreter)
    wg = ctx.workgroup
    if wg.async_copies.pending and not once:
        _check_pending(op, wg, value, idx, write)
    tracker = wg.races
    if tracker is None:
        return
    if once:  # a workgroup-collective op (a coop.async_copy): one access by an unknown subgroup
        workgroup_scope, view = True, None
    members = ctx.batch or [ctx]
    seen: set[int] = set()
    for m in members:
        if workgroup_scope and tracker.nsub > 1:
            if m.workgroup_number in seen:
                continue  # one access per workgroup
            seen.add(m.workgroup_number)
        tracker.access(op, m, value, idx, write=write, workgroup_scope=workgroup_scope,
                       view=view, new=new)


def _check_pending(op: Operation, wg: Any, value: Any, idx: Any, write: bool) -> None:
    from coopdialect.errors import location_of

    raw = value.data_ptr.raw
    itemsize = numpy_dtype(value.data_ptr.xtype).itemsize
    flat = np.asarray(idx, dtype=np.int64).reshape(-1) + raw.offset // itemsize
    copy = wg.async_copies.hazard(raw.memory, flat)
    if copy is not None:
        hit = flat[np.isin(flat, copy.index)][0]
        raise fail(op, f"{'writes' if write else 'reads'} element [{hit}] of {pending_name(copy)}"
                       f" that the {copy.op.name} at {location_of(copy.op)} (group {copy.group}) "
                       "has not completed: a coop.async_wait_group must retire its group first")


def pending_name(copy: Any) -> str:
    """`the workgroup memory %name` of a pending copy's destination (for messages)."""
    hint = getattr(copy.op, "destination", None)
    hint = hint.name_hint if hint is not None else None
    return f"the workgroup memory %{hint}" if hint else "workgroup memory"


def stored_arguments(kernel: func.FuncOp) -> set[int] | None:
    """Numbers of the kernel arguments that a store op of the kernel may write (their reads are
    recorded for write-after-read races); None (all) when a store's memref is not directly a
    kernel argument or a local allocation (it may alias any argument)."""
    from coopdialect.dialects import coop, coop_nv2

    args = {a: i for i, a in enumerate(kernel.body.block.args)}
    found: set[int] = set()
    module = kernel
    while module.parent_op() is not None:
        module = module.parent_op()
    for o in module.walk():
        if isinstance(o, memref.StoreOp):
            ptr = o.memref
        elif isinstance(o, coop.StoreOp | coop_nv2.StoreTensorOp):
            ptr = o.pointer
        else:
            continue
        if ptr in args:
            found.add(args[ptr])
        elif not isinstance(ptr.owner, memref.AllocOp | memref.AllocaOp):
            return None
    return found

