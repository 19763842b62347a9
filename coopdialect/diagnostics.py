"""One-line diagnostics: `file:line:col: error: message`, for every stage.

The parser of coop-opt stamps each op with a FileLineColLoc (xDSL's parser records none), so a
verifier, a pass or an emitter can point at the op that is wrong. Passes and emitters raise
`CoopError(op, message)` (`coopdialect.errors`, below the dialects, which raise it too; it is
importable from here as well); `format_error` turns any exception the pipeline may raise into the
one line the driver prints.
"""

from __future__ import annotations

import re
import struct
from bisect import bisect_right

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import ParseError, VerifyException

from coopdialect.errors import CoopError

MAX_NESTING = 64
"""Deepest bracket nesting (`(`, `[`, `{`, `<`) the parser accepts. xDSL's parser, verifiers,
printer and the passes recurse once or more per level; 64 levels (32 nested regions) leave them a
wide margin below Python's recursion limit, and real kernels use fewer than 20."""

# String literals and comments are skipped; `->` is not a closing bracket.
_BRACKETS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|[\[({<]|(?<!-)[\])}>]')


def check_nesting(text: str, name: str, line_offset: int = 0) -> None:
    """CoopError at the first bracket nested deeper than MAX_NESTING (before parsing, which
    would otherwise exhaust Python's recursion limit on such input)."""
    depth = 0
    for m in _BRACKETS.finditer(text):
        c = m.group()
        if c in "([{<":
            depth += 1
            if depth > MAX_NESTING:
                line = text.count("\n", 0, m.start()) + 1
                col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
                raise CoopError(None, f"nesting deeper than the limit of {MAX_NESTING} levels of "
                                      f"brackets", where=f"{name}:{line + line_offset}:{col}")
        elif c in ")]}>":
            depth = max(depth - 1, 0)


def decode_source(data: bytes | str, name: str, line_offset: int = 0) -> str:
    """The text of an input file; CoopError at the first byte that is not UTF-8 (lines shifted
    by `line_offset` for a `--split-input-file` chunk)."""
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise CoopError(None, f"the input is not UTF-8 text (byte 0x{data[e.start]:02x})",
                        where=f"{name}:{line + line_offset}:{col}") from None


# A type's spelling: a name (`f16`, `memref`, `!coop.matrix`), then its bracketed parameters
# if a `<` follows at once (strings skipped, `->` not a bracket).
_TYPE_NAME = re.compile(r"!?[A-Za-z_][\w.$-]*")
_TYPE_BRACKETS = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[({<]|(?<!-)[\])}>]|\n')


def _type_spelling_end(text: str, start: int) -> int | None:
    """The end of the type spelled at `start` (name and balanced `<...>`), or None."""
    m = _TYPE_NAME.match(text, start)
    if m is None:
        return None
    end = m.end()
    if not text.startswith("<", end):
        return end
    depth = 0
    for b in _TYPE_BRACKETS.finditer(text, end):
        c = b.group()
        if c in "[({<":
            depth += 1
        elif c in "])}>":
            depth -= 1
            if depth == 0:
                return b.end()
        elif c == "\n":
            return None  # a type written over several lines: parsed, not looked up
    return None


class LocatingParser(Parser):
    """xDSL's parser, which also sets `op.location = loc("file":line:col)` on every op it parses.

    A location the source spells out with `loc(...)` is kept. `line_offset` shifts lines for
    `--split-input-file` chunks. Input nested deeper than MAX_NESTING, and any error raised while
    an op is parsed (an attribute's or type's verifier: an integer out of range, an alignment that
    is not a power of two, ...), is a CoopError located at the start of that op.

    A type spelled exactly as one parsed before in the same input is that type again (types are
    immutable values): a kernel names the same few matrix and memref types over and over, and
    parsing a type is most of xDSL's time per op. Only a spelling the parser consumed whole
    (name and brackets, on one line) is remembered.
    """

    line_offset = 0
    _line_starts: list[int] | None = None
    _types: dict[str, object] | None = None

    def __init__(self, ctx, input: str | bytes, name: str = "<unknown>", line_offset: int = 0):
        text = decode_source(input, name, line_offset)
        self.line_offset = line_offset
        check_nesting(text, name, line_offset)
        super().__init__(ctx, text, name)

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

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """xDSL's parse_module; an implicit module is located at the start of the input, so that
        a whole-module error ("no kernel to lower") still points at its file."""
        try:
            module = super().parse_module(allow_implicit_module)
        except RecursionError:  # MAX_NESTING keeps this away; a last line of defence
            line, col = self._line_col(self.pos)
            raise CoopError(None, "the input is nested too deeply to parse",
                            where=f"{self.lexer.input.name}:{line}:{col}") from None
        if isinstance(module.location, UnknownLoc):
            module.location = FileLineColLoc(self._file, IntAttr(1 + self.line_offset), IntAttr(1))
        return module

    def parse_optional_type(self):
        text = self.lexer.input.content
        start = self.pos
        end = _type_spelling_end(text, start)
        if end is None:
            return super().parse_optional_type()
        if self._types is None:
            self._types = {}
        key = text[start:end]
        known = self._types.get(key)
        if known is not None:
            self._resume_from(end)
            return known
        parsed = super().parse_optional_type()
        # remembered only when the parser stopped where the spelling ends (what follows the
        # type up to the next token is whitespace)
        if parsed is not None and self.pos >= end and not text[end:self.pos].strip():
            self._types[key] = parsed
        return parsed

    def parse_operation(self) -> Operation:
        start = self.pos
        try:
            op = super().parse_operation()
        except (ParseError, CoopError):
            raise
        except Exception as e:  # noqa: BLE001 - a verifier of an attribute or type being parsed
            line, col = self._line_col(start)
            text = _first_line(str(e)) or type(e).__name__
            if isinstance(e, struct.error | OverflowError):  # xDSL packs float literals
                text = f"floating point value too large for its type ({text})"
            raise CoopError(None, text, where=f"{self.lexer.input.name}:{line}:{col}") from None
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
    op has NoTerminator), each op once; and the coop dialect's kernel attributes
    (`coop_kernel.verify_kernel_attributes`) and MLIR's rules xDSL does not check
    (`upstream.verify_upstream`)."""
    from coopdialect.dialects.coop_kernel import KERNEL_ATTRS, verify_kernel_attributes
    from coopdialect.dialects.upstream import UPSTREAM_OPS, DominanceChecker, verify_upstream

    dominance = DominanceChecker()
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            raise CoopError(op, _first_line(str(e))) from None
        except CoopError:
            raise
        except Exception as e:  # noqa: BLE001 - a verifier that failed on malformed IR
            # xDSL prints the op into a failed verifier's message; when the printing fails (a
            # value it cannot print, an f80 constant) the verifier's own reason is the context
            cause = e.__context__
            if isinstance(cause, VerifyException):
                raise CoopError(op, _first_line(str(cause))) from None
            raise CoopError(op, _first_line(str(e)) or type(e).__name__) from None
        if any(name in op.attributes for name in KERNEL_ATTRS):
            verify_kernel_attributes(op)
        if isinstance(op, UPSTREAM_OPS):
            verify_upstream(op)
        if op.operands:
            dominance.check(op)
        for region in op.regions:
            blocks = region.blocks
            for block in blocks:
                empty = True
                for child in block.ops:
                    empty = False
                    if child.parent is not block:
                        raise CoopError(child, "parent pointer of the operation does not refer to "
                                               "its block")
                if empty and len(blocks) == 1 and not op.has_trait(NoTerminator):
                    raise CoopError(op, f"Operation {op.name} contains empty block in single-block region "
                                    "that expects at least a terminator")
                if block.parent is not region:
                    raise CoopError(op, "parent pointer of a block does not refer to its region")


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def format_error(e: BaseException, where: str | None = None) -> str:
    """The one-line diagnostic for an exception raised anywhere in the pipeline.

    `where` (the input file's name) stands for the location of an error that carries none."""
    fallback = where or "<unknown>"
    if isinstance(e, CoopError):
        text = str(e)
        if text.startswith("<unknown>: ") and where:
            return fallback + text[len("<unknown>"):]
        return text
    if isinstance(e, ParseError):
        loc = e.span.get_location()
        return f"{loc.file}:{loc.line}:{loc.col}: error: {_first_line(e.msg)}"
    if isinstance(e, OSError):
        name = e.filename if e.filename not in (None, "") else fallback
        return f"{name}: error: {e.strerror or _first_line(str(e))}"
    if isinstance(e, RecursionError):
        return f"{fallback}: error: the input is nested too deeply to process"
    if isinstance(e, MemoryError):
        return f"{fallback}: error: out of memory processing the input"
    return f"{fallback}: error: {_first_line(str(e)) or type(e).__name__}"
