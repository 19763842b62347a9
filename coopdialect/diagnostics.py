"""One-line diagnostics: `file:line:col: error: message`, for every stage.

The parser of coop-opt stamps each op with a FileLineColLoc (xDSL's parser records none), so a
verifier, a pass or an emitter can point at the op that is wrong. Passes and emitters raise
`CoopError(op, message)`; `format_error` turns any exception the pipeline may raise into the one
line the driver prints.
"""

from __future__ import annotations

from bisect import bisect_right

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException


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
    _line_starts: list[int] | None = None

    def _line_col(self, pos: int) -> tuple[int, int]:
        # xDSL's Span.get_location counts newlines from the start of the file at every call,
        # which makes locating every op quadratic in the file size; bisect a line index instead.
        if self._line_starts is None:
            text = self.lexer.input.content
            starts = [0]
            find = text.find
            i = find("\n")
            while i != -1:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts = starts
        line = bisect_right(self._line_starts, pos)
        return line + self.line_offset, pos - self._line_starts[line - 1] + 1

    def parse_operation(self) -> Operation:
        start = self.pos
        op = super().parse_operation()
        if isinstance(op.location, UnknownLoc):
            line, col = self._line_col(start)
            op.location = FileLineColLoc(self._file, IntAttr(line), IntAttr(col))
        return op

    @property
    def _file(self) -> StringAttr:
        name = self.lexer.input.name
        cached = getattr(self, "_file_attr", None)
        if cached is None or cached.data != name:
            cached = self._file_attr = StringAttr(name)
        return cached


def verify_with_locations(module: ModuleOp) -> None:
    """`module.verify()`, but a failure is a CoopError naming the failing op and its location.

    Checks what `module.verify()` checks: every op's verifier, plus the structure that
    `Region.verify`/`Block.verify` check (parent pointers, no empty single-block region unless the
    op has NoTerminator), each op once."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            raise CoopError(op, _first_line(str(e))) from None
        for region in op.regions:
            blocks = region.blocks
            for block in blocks:
                empty = True
                for child in block.ops:
                    empty = False
                    if child.parent is not block:
                        raise ValueError("Parent pointer of operation does not refer to containing region")
                if empty and len(blocks) == 1 and not op.has_trait(NoTerminator):
                    raise CoopError(op, f"Operation {op.name} contains empty block in single-block region "
                                    "that expects at least a terminator")
                if block.parent is not region:
                    raise ValueError("Parent pointer of block does not refer to containing region")


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
