"""Values of the lock-step runner (`coopdialect.interpreter.lockstep`): a value that differs
between the members (subgroups) interpreted together, and how members' values are compared."""

from __future__ import annotations

from typing import Any

import numpy as np


class Varying:
    """A value that differs between the members: `item(m)` is member m's value.

    `kind` says how a stack row becomes an item: "int" (Python int), "bool", "scalar" (a numpy
    scalar), "array" (a row view), "object" (lists only: memrefs, layouts, ...)."""

    __slots__ = ("items", "stack", "kind")

    def __init__(self, items: list | None = None, stack: np.ndarray | None = None,
                 kind: str = "array") -> None:
        self.items = items
        self.stack = stack
        self.kind = kind

    def item(self, m: int) -> Any:
        if self.items is None:
            s = self.stack
            assert s is not None
            self.items = s.tolist() if self.kind in ("int", "bool") else list(s)
        return self.items[m]

    def stacked(self) -> np.ndarray:
        """The values of all members along a leading axis (every member must have one)."""
        if self.stack is None:
            assert self.items is not None
            if self.kind == "int":
                self.stack = np.array(self.items, np.int64)
            elif self.kind == "bool":
                self.stack = np.array(self.items, np.bool_)
            else:
                self.stack = np.stack([np.asarray(x) for x in self.items])
        return self.stack


def kind_of(x: Any) -> str:
    if isinstance(x, bool | np.bool_):
        return "bool"
    if isinstance(x, int):
        return "int"
    if isinstance(x, np.ndarray):
        return "array"
    if isinstance(x, np.generic | float):
        return "scalar"
    return "object"


def same_bits(a: Any, b: Any) -> bool:
    """Whether two members' values are identical (bit for bit)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, np.generic) and isinstance(b, np.generic):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    return type(a) is type(b) and isinstance(a, int | bool) and a == b


def value_key(x: Any) -> Any:
    """A hashable stand-in for a member's value: equal for equal ints/bools/numpy scalars, the
    object's identity otherwise."""
    if isinstance(x, bool | int):
        return (type(x), x)
    if isinstance(x, np.generic):
        return (x.dtype.str, x.tobytes())
    return id(x)
