"""`CoopError`, the one exception that carries a located one-line diagnostic
(`file:line:col: error: message`), `CoopWarning` (the same line as a warning), and `location_of`,
which finds an op's location.

The ground floor of the package: dialect verifiers, passes, emitters and drivers all raise it;
`coopdialect.diagnostics` (the locating parser, `verify_with_locations`, `format_error`) builds on it.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException


class CoopError(DiagnosticException):
    """An error attached to an operation (or to no location when `op` is None)."""

    def __init__(self, op: Operation | None, message: str, where: str | None = None):
        self.op = op
        self.message = message
        where = where if where is not None else location_of(op)
        super().__init__(f"{where}: error: {_op_prefix(op)}{message}")


class CoopWarning(UserWarning):
    """A located warning (`file:line:col: warning: 'op' op message` as its str()): something a
    pass could not do and did not have to (e.g. a load left unstaged). coop-opt prints each on
    stderr; API users see them as Python warnings (`warnings.simplefilter("error",
    CoopWarning)` turns them into exceptions)."""

    def __init__(self, op: Operation | None, message: str):
        self.op = op
        self.message = message
        super().__init__(f"{location_of(op)}: warning: {_op_prefix(op)}{message}")


def warn(op: Operation | None, message: str) -> None:
    """Issue a CoopWarning located at `op`."""
    import warnings

    warnings.warn(CoopWarning(op, message), stacklevel=2)


def _op_prefix(op: Operation | None) -> str:
    return f"'{op.name}' op " if op is not None else ""


def location_of(op: Operation | None) -> str:
    """`file:line:col` of `op` (of its nearest located ancestor), or `<unknown>`."""
    while op is not None:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        op = op.parent_op()
    return "<unknown>"
