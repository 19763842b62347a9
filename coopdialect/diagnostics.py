"""One-line diagnostics: `file:line:col: error: message`, for every stage.

The parser of coop-opt stamps each op with a FileLineColLoc (xDSL's parser records none), so a
verifier, a pass or an emitter can point at the op that is wrong. Passes and emitters raise
`CoopError(op, message)`; `format_error` turns any exception the pipeline may raise into the one
line the driver prints.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Span


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


class LocatingParser(Parser):
    """xDSL's parser, which also sets `op.location = loc("file":line:col)` on every op it parses.

    A location the source spells out with `loc(...)` is kept. `line_offset` shifts lines for
    `--split-input-file` chunks.
    """

    line_offset = 0

    def parse_operation(self) -> Operation:
        start = self.pos
        op = super().parse_operation()
        if isinstance(op.location, UnknownLoc):
            loc = Span(start, start, self.lexer.input, self.line_offset).get_location()
            op.location = FileLineColLoc(StringAttr(loc.file), IntAttr(loc.line), IntAttr(loc.col))
        return op


def verify_with_locations(module: ModuleOp) -> None:
    """`module.verify()`, but a failure is a CoopError naming the failing op and its location."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            raise CoopError(op, _first_line(str(e))) from None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def format_error(e: BaseException) -> str:
    """The one-line diagnostic for an exception raised anywhere in the pipeline."""
    if isinstance(e, CoopError):
        return str(e)
    if isinstance(e, ParseError):
        loc = e.span.get_location()
        return f"{loc.file}:{loc.line}:{loc.col}: error: {_first_line(e.msg)}"
    if isinstance(e, OSError):
        where = e.filename if e.filename is not None else "<io>"
        return f"{where}: error: {e.strerror or e}"
    return f"<unknown>: error: {_first_line(str(e)) or type(e).__name__}"
