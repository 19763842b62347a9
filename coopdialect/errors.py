"""`CoopError`, the one exception that carries a located one-line diagnostic
(`file:line:col: error: message`), and `location_of`, which finds an op's location.

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
