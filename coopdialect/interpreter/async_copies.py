"""The asynchronous-copy state of one workgroup: the execution-model-independent core of the
interpreter's `coop.async_copy` / `coop.async_commit_group` / `coop.async_wait_group` semantics.

`coopdialect.interpreter.common.Workgroup` owns one `AsyncCopyState`. Whatever runs the
workgroup's subgroups calls it ONCE per collective op of the workgroup:

* `issue(copy)`: the copy's source has been read (its values are in `copy.data`); it joins the
  open group. Its destination elements become *pending*: any access to them before the copy
  completes is a hazard, and so is a second copy into them.
* `commit()`: closes the open group (an empty group is fine).
* `wait(n)`: completes every copy of all but the `n` most recently committed groups, in issue
  order, writing their values into the destination; returns them.
* `hazard(memory, index)`: the first pending copy whose destination includes one of the elements
  `index` of the allocation `memory`, or None (every load/store of workgroup memory asks).

Nothing here knows about subgroups, threads or xDSL; the interpreter's impls
(`coopdialect.interpreter.coop_async`) turn the per-subgroup execution into these calls and a
hazard into an InterpreterError naming the op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class PendingCopy:
    """One issued copy. `index`: flat element indices of the destination (in elements from the
    start of the allocation `memory`), shape (rows, cols); `data`: the values read from the
    source at issue, same shape; `view`: the destination's flat numpy view (indexed by `index`
    minus `base`); `op`: the issuing op (for messages); `group`: its group number (0, 1, ...)."""

    op: Any
    memory: Any
    view: np.ndarray
    base: int
    index: np.ndarray
    data: np.ndarray
    group: int = -1


@dataclass
class AsyncCopyState:
    """Pending copies and committed groups of one workgroup (module docstring)."""

    pending: list[PendingCopy] = field(default_factory=list)
    committed: int = 0
    """Groups committed so far; the open group has number `committed`."""
    collective: Any = None
    """Bookkeeping of an execution model that runs each collective op once per subgroup (which
    op each subgroup has reached); unused by this class."""
    _marks: dict[int, np.ndarray] = field(default_factory=dict)
    """id(memory) -> per-element count of pending copies writing it."""

    def hazard(self, memory: Any, index: Any) -> PendingCopy | None:
        """The first pending copy whose destination includes an element of `index` (int
        indices from the start of allocation `memory`), or None."""
        marks = self._marks.get(id(memory))
        if marks is None:
            return None
        idx = np.asarray(index, dtype=np.int64).reshape(-1)
        if not marks[idx].any():
            return None
        for c in self.pending:
            if c.memory is memory and np.isin(c.index, idx).any():
                return c
        return None  # pragma: no cover - the marks and the list agree

    def issue(self, copy: PendingCopy, size: int) -> PendingCopy | None:
        """Add `copy` (whose source was just read) to the open group; `size` is the element
        count of its destination allocation. Returns the pending copy its destination
        overlaps, if any (then nothing is issued)."""
        other = self.hazard(copy.memory, copy.index)
        if other is not None:
            return other
        marks = self._marks.setdefault(id(copy.memory), np.zeros(size, np.int32))
        np.add.at(marks, copy.index.reshape(-1), 1)
        copy.group = self.committed
        self.pending.append(copy)
        return None

    def commit(self) -> None:
        """Close the open group."""
        self.committed += 1

    def wait(self, n: int) -> list[PendingCopy]:
        """Complete the copies of every group but the `n` most recently committed ones (uncommitted
        copies stay pending); returns the completed copies, in issue order."""
        limit = self.committed - n
        done = [c for c in self.pending if c.group < limit]
        if not done:
            return []
        self.pending = [c for c in self.pending if c.group >= limit]
        for c in done:
            c.view[(c.index - c.base).reshape(-1)] = c.data.reshape(-1)
            marks = self._marks[id(c.memory)]
            np.subtract.at(marks, c.index.reshape(-1), 1)
        return done

    @property
    def uncommitted(self) -> int:
        """Issued copies not yet in a committed group."""
        return sum(1 for c in self.pending if c.group == self.committed)
