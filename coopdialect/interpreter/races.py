"""Data-race detection for interpreted kernels (see `coopdialect.interpreter.kernel`).

The interpreter runs the subgroups of a workgroup one after another (or in threads) and the
workgroups one after another, so a racy kernel would silently get the answer of that one order.
This module makes such a kernel raise instead. The race model:

* **Accessors.** A memref load/store and a Subgroup-scope matrix load/store are accesses by the
  running subgroup (its invocations are not told apart: races between the invocations of one
  subgroup are not detected). A Workgroup-scope matrix load/store in a workgroup of more than one
  subgroup is an access by *an unknown subgroup* of the workgroup, because which invocation loads
  or stores which element of a Workgroup matrix is implementation-dependent (KHR 3.X
  OpCooperativeMatrixLoadKHR/StoreKHR; NV cooperative_matrix2).
* **Epochs.** Within a workgroup, `gpu.barrier` starts a new epoch: accesses in different
  epochs are ordered. Different workgroups are never ordered.
* **Races.** Two accesses to one element conflict when at least one is a write and they are
  not both by the same known subgroup in one epoch of one workgroup (or in different epochs of one
  workgroup). Conflicts are found in both orders: read after write, write after write, and write
  after read (readers are recorded for buffers that some store in the module may write).
* **Exception: Workgroup-scope stores.** The interpreter runs every Workgroup-scope matrix op in
  every subgroup, each computing the whole matrix; the modelled GPU executes ONE store whose
  elements are spread over the workgroup's invocations. So the n-th Workgroup-scope store
  executed by each subgroup is the same store: its copies from the other subgroups may rewrite an
  element with the identical bits (an idempotent duplicate, accepted). A copy with different
  bits, or a different Workgroup-scope store to the element in the same epoch, is a race.
* Reads of elements nobody wrote never race with each other.

Granularity: elements of the memref's element type, per allocation (a kernel argument, or a
workgroup-memory allocation). Arguments that are the same numpy memory (same address, size and
dtype) share one record; partially overlapping arguments, or one memory viewed with two dtypes,
are tracked separately (their races are not detected). Private (Function) allocations are not
tracked: only their own subgroup sees them.

Cost: per buffer, an int32 array of its element count recording the last writer (allocated on the
first write), one recording readers (only for buffers a store may write, on the first read), and
one recording the Workgroup-scope store instance (on the first such store); each access is a few
vectorized numpy operations over its indices (no per-element Python loop).

Tags. A writer/reader is an int32 tag. Workgroups run one at a time; the running one owns the
tags above `Workgroup.tag_base` (B). Its epoch e is the window lo = B + 1 + e*(N+1) .. lo + N
(N subgroups): tag lo + s is subgroup s, lo + N is "an unknown subgroup" (a Workgroup-scope
access, or several readers). Tags in 1..B belong to earlier workgroups; 0 is "never".
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func, memref
from xdsl.interpreter import Interpreter
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.ir import Operation

from coopdialect.interpreter.common import SubgroupContext, fail, numpy_dtype, subgroup_context

_TAG_LIMIT = 2**31 - 1


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
    owner: np.ndarray | None = None  # last writer's tag
    reader: np.ndarray | None = None  # reader tag, or the "unknown subgroup" tag for several
    instance: np.ndarray | None = None  # n of the n-th Workgroup-scope store that wrote it

    def element(self, i: int) -> str:
        if len(self.shape) > 1 and int(np.prod(self.shape)) == self.count:
            return "[" + ", ".join(str(int(x)) for x in np.unravel_index(i, self.shape)) + "]"
        return f"[{i}]"


@dataclass
class RaceTracker:
    """The race records of one `run_kernel` (module docstring)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    buffers: dict[int, _Buffer] = field(default_factory=dict)  # id(memory) -> record
    next_tag: int = 1
    # (first tag, last tag, block_id, subgroups) of each finished workgroup, for messages
    history: list[tuple[int, int, tuple[int, int, int], int]] = field(default_factory=list)

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

    # ---- workgroups --------------------------------------------------------------------

    def begin_workgroup(self, nsub: int) -> int:
        """The tag base B of a workgroup about to run (compacting the tags if they run out)."""
        if self.next_tag + 4096 * (nsub + 1) > _TAG_LIMIT:
            # only "an earlier workgroup" matters about old tags: fold them all into tag 1
            for b in self.buffers.values():
                for arr in (b.owner, b.reader):
                    if arr is not None:
                        np.minimum(arr, 1, out=arr)
            self.history = [(1, 1, (-1, -1, -1), 1)]
            self.next_tag = 2
        return self.next_tag - 1

    def end_workgroup(self, ctxs: list[SubgroupContext]) -> None:
        wg = ctxs[0].workgroup
        nsub = len(ctxs)
        epochs = max(c.epoch for c in ctxs) + 1
        last = wg.tag_base + epochs * (nsub + 1)
        if last > _TAG_LIMIT:
            raise fail(None, "the race detector ran out of tags (too many gpu.barrier epochs)")
        self.history.append((wg.tag_base + 1, last, ctxs[0].block_id, nsub))
        self.next_tag = last + 1
        for v in wg.shared.values():
            if isinstance(v, ShapedArray):
                self.unregister(v)

    def describe(self, tag: int, ctx: SubgroupContext) -> str:
        """Who tag `tag` is, as seen from `ctx`'s workgroup."""
        base, n = ctx.workgroup.tag_base, ctx.num_subgroups
        if tag > base:
            s = (tag - base - 1) % (n + 1)
            return ("an unknown subgroup of this workgroup (a Workgroup-scope matrix access, or "
                    "several subgroups)" if s == n else f"subgroup {s} of this workgroup")
        i = bisect.bisect_right([h[0] for h in self.history], tag) - 1
        if i < 0 or self.history[i][2][0] < 0:
            return "an earlier workgroup"
        first, _, block, hn = self.history[i]
        s = (tag - first) % (hn + 1)
        who = "an unknown subgroup" if s == hn else f"subgroup {s}"
        return f"{who} of workgroup {block}"

    # ---- accesses ----------------------------------------------------------------------

    def access(self, interpreter: Interpreter, op: Operation, value: Any, idx: Any, *,
               write: bool, workgroup_scope: bool = False, view: Any = None,
               new: Any = None, once: bool = False) -> None:
        """See the module-level `access`."""
        ctx = subgroup_context(interpreter)
        n = ctx.num_subgroups
        wgs = (workgroup_scope or once) and n > 1
        store_copy = wgs and write and not once  # one subgroup's copy of a Workgroup-scope store
        if store_copy:
            ctx.workgroup_stores += 1  # counts every one, so the n-th is the same in each subgroup
        raw = value.data_ptr.raw
        buf = self.buffers.get(id(raw.memory))
        if buf is None or buf.memory is not raw.memory:
            return  # private memory, or not a tracked allocation
        if not write and buf.owner is None and not buf.track_reads:
            return
        base = ctx.workgroup.tag_base
        lo = base + 1 + ctx.epoch * (n + 1)
        tag = lo + (n if wgs else ctx.subgroup_id)
        ok = 0 if wgs else tag  # a tag of this epoch that does not conflict with this access
        flat = np.asarray(idx, dtype=np.int64).reshape(-1) + raw.offset // buf.itemsize
        with self.lock:
            if buf.owner is not None:
                t = buf.owner[flat]
                bad = ((t > 0) & (t <= base)) | ((t >= lo) & (t != ok))
                if store_copy:
                    inst = buf.instance[flat] if buf.instance is not None else 0
                    o = view[np.asarray(idx, dtype=np.int64).reshape(-1)]
                    w = np.ascontiguousarray(np.broadcast_to(new, np.shape(idx))).reshape(-1)
                    ui = np.dtype(f"u{o.dtype.itemsize}")
                    same = o.view(ui) == w.astype(o.dtype).view(ui)
                    dup = (t == tag) & (inst == ctx.workgroup_stores) & same
                    bad &= ~dup
                if bad.any():
                    k = int(np.nonzero(bad)[0][0])
                    why = ""
                    if store_copy and t[k] == tag:
                        why = (" (another subgroup's copy of this store wrote a different value)"
                               if buf.instance is not None and inst[k] == ctx.workgroup_stores
                               else " (by another Workgroup-scope store)")
                    raise self._race(op, ctx, buf, int(flat[k]), int(t[k]), write, wgs,
                                     "wrote" + why, once)
            if write and buf.reader is not None:
                r = buf.reader[flat]
                bad = ((r > 0) & (r <= base)) | ((r >= lo) & (r != ok))
                if bad.any():
                    k = int(np.nonzero(bad)[0][0])
                    raise self._race(op, ctx, buf, int(flat[k]), int(r[k]), write, wgs, "read",
                                     once)
            if write:
                if buf.owner is None:
                    buf.owner = np.zeros(buf.count, np.int32)
                buf.owner[flat] = tag
                if store_copy:
                    if buf.instance is None:
                        buf.instance = np.zeros(buf.count, np.int32)
                    buf.instance[flat] = ctx.workgroup_stores
            elif buf.track_reads:
                if buf.reader is None:
                    buf.reader = np.zeros(buf.count, np.int32)
                r = buf.reader[flat]
                several = lo + n  # readers of this epoch other than this one: "unknown"
                buf.reader[flat] = np.where((r > 0) & (r <= base), r,
                                            np.where((r >= lo) & (r != tag), several, tag))

    def _race(self, op: Operation, ctx: SubgroupContext, buf: _Buffer, i: int, other: int,
              write: bool, wgs: bool, did: str, once: bool = False):
        who = "a Workgroup-scope matrix " + ("store" if write else "load") if wgs else \
            "this subgroup"
        if once and wgs:
            who = f"the workgroup-collective {op.name}"
        verb = "writes" if write else "reads"
        order = ("workgroups are not ordered" if other <= ctx.workgroup.tag_base else
                 "no gpu.barrier between them; which invocation accesses which element of a "
                 "Workgroup-scope matrix is implementation-dependent" if wgs or
                 (other - ctx.workgroup.tag_base - 1) % (ctx.num_subgroups + 1)
                 == ctx.num_subgroups else "no gpu.barrier between them")
        return fail(op, f"data race: {who} {verb} element {buf.element(i)} of {buf.name}, which "
                        f"{self.describe(other, ctx)} {did} ({order})")


def access(interpreter: Interpreter, op: Operation, value: Any, idx: Any, *, write: bool,
           workgroup_scope: bool = False, view: np.ndarray | None = None,
           new: Any = None, once: bool = False) -> None:
    """Check and record an access by the running subgroup to the elements `idx` (int indices,
    any shape, in elements from the start of the memref `value`'s flat view) of memref `value`
    (an xDSL ShapedArray); a no-op outside `run_kernel` or for untracked (private) memory.

    `workgroup_scope`: the op is a Workgroup-scope matrix load/store. For a Workgroup-scope store,
    `view` is the memref's flat numpy view (its current values, before the store) and `new` the
    values stored (the shape of `idx`), for the idempotent-duplicate exception. Call it BEFORE
    the store writes. Raises InterpreterError `data race: ...` naming the op, the buffer, one
    element and the other accessor (module docstring).

    `once`: the access of a workgroup-collective op that executes once per workgroup (a
    `coop.async_copy`), by an unknown subgroup like a Workgroup-scope access, but not repeated by
    each subgroup. Every access is also checked against the workgroup's pending asynchronous
    copies (`coopdialect.interpreter.async_copies`): touching an element that a copy has not
    completed writing raises InterpreterError naming the op and the copy."""
    wg = subgroup_context(interpreter).workgroup
    if wg.async_copies.pending and not once:
        _check_pending(op, wg, value, idx, write)
    tracker = wg.races
    if tracker is not None:
        tracker.access(interpreter, op, value, idx, write=write, workgroup_scope=workgroup_scope,
                       view=view, new=new, once=once)


def _check_pending(op: Operation, wg: Any, value: Any, idx: Any, write: bool) -> None:
    from coopdialect.diagnostics import location_of

    raw = value.data_ptr.raw
    itemsize = numpy_dtype(value.data_ptr.xtype).itemsize
    flat = np.asarray(idx, dtype=np.int64).reshape(-1) + raw.offset // itemsize
    copy = wg.async_copies.hazard(raw.memory, flat)
    if copy is not None:
        hit = flat[np.isin(flat, copy.index)][0]
        raise fail(op, f"{'writes' if write else 'reads'} element [{hit}] of workgroup memory "
                       f"that the {copy.op.name} at {location_of(copy.op)} (group {copy.group}) "
                       "has not completed: a coop.async_wait_group must retire its group first")


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
