"""The pass manager coop-opt and the API share: pipeline parsing and the one-line error contract.

* `parse_pipeline(spec, callback)`: xDSL's `'pass{k=v},pass'` syntax over coopdialect's passes;
  a bad spec (unknown pass, unknown or ill-typed option, syntax) is a CoopError located at
  `<command line>`.
* `LocatedPipeline`: xDSL's PassPipeline whose `apply` lets no exception out of a pass other than
  a CoopError (or a ParseError): a DiagnosticException without an op, a RecursionError or
  MemoryError, or an internal error of a pass becomes a CoopError naming the pass (it has no op,
  so drivers locate it at the input file).
* `apply_pipeline(module, spec)`: the whole pipeline on a module, verified with locations before
  and after each pass, all or nothing (the API's `run_pipeline` and the runtime's lowering).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from types import UnionType
from typing import Literal, Union, get_args, get_origin, get_type_hints

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import parse_pipeline as parse_arg_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, ParseError

from coopdialect.context import make_context
from coopdialect.diagnostics import verify_with_locations
from coopdialect.errors import CoopError


def spec_error_message(e: BaseException) -> str:
    """One line from xDSL's (multi-line, caret-underlined) pipeline-spec error."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip().strip("^")]
    if not lines:
        return type(e).__name__
    return ": ".join(dict.fromkeys([lines[0].rstrip(":"), lines[-1]]))


class LocatedPipeline(PassPipeline):
    """A PassPipeline whose passes raise only CoopError/ParseError (module docstring)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        passes = [_Guarded(p) for p in self.passes]
        PassPipeline(tuple(passes), self.callback).apply(ctx, op)  # type: ignore[arg-type]


class _Guarded:
    """Runs one pass and turns whatever it raises into a CoopError."""

    def __init__(self, inner: ModulePass):
        self.inner = inner
        self.name = inner.name

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            self.inner.apply(ctx, op)
        except (CoopError, ParseError):
            raise
        except RecursionError:
            raise CoopError(None, f"{self.name}: the input is nested too deeply for this pass") from None
        except MemoryError:
            raise CoopError(None, f"{self.name}: out of memory") from None
        except Exception as e:  # noqa: BLE001 - a pass's refusal without an op, or a bug
            text = str(e).strip().splitlines()
            kind = "" if _is_diagnostic(e) else f"internal error ({type(e).__name__}): "
            raise CoopError(None, f"{self.name}: {kind}{text[0] if text else type(e).__name__}") from None

    # PassPipeline's printing of `-p` echoes passes by their spec
    def pipeline_pass_spec(self):
        return self.inner.pipeline_pass_spec()


def _is_diagnostic(e: BaseException) -> bool:
    """A refusal meant for the user (xDSL's passes refuse with DiagnosticException or
    ValueError), as opposed to a bug (AttributeError, KeyError, ...)."""
    from xdsl.utils.exceptions import DiagnosticException

    return isinstance(e, DiagnosticException | ValueError)


def parse_pipeline(spec: str, callback: Callable | None = None,
                   available: dict[str, Callable[[], type[ModulePass]]] | None = None) -> LocatedPipeline:
    """The pipeline `spec` names; CoopError at `<command line>` if it is malformed (an option
    error names the pass, the option and the type it expects), TypeError if `spec` is not a str.
    An option value xDSL's syntax cannot take bare — a file path such as `target=my.json` — is
    read as if quoted. `available`: pass name -> factory (default: coopdialect's passes)."""
    from coopdialect.passes import get_all_passes

    if not isinstance(spec, str):
        raise TypeError(f"a pass pipeline is a str like 'pass{{k=v}},pass', got {type(spec).__name__}")

    def bad(message: str) -> CoopError:
        return CoopError(None, f"bad pass pipeline '{spec}': {message}", where="<command line>")

    available = available if available is not None else get_all_passes()
    try:
        specs = list(parse_arg_pipeline(quote_bare_values(spec)))
        for s in specs:
            if s.name not in available:
                raise bad(f"no pass named '{s.name}'")
            _check_options(available[s.name](), s, bad)
        passes = tuple(available[s.name]().from_pass_spec(s) for s in specs)
    except (ValueError, KeyError, TypeError, ArgSpecParseError, ParseError) as e:
        raise bad(spec_error_message(e)) from None
    return LocatedPipeline(passes, callback)


def apply_pipeline(module: ModuleOp, spec: str) -> ModuleOp:
    """Apply the pass pipeline `spec` (`'pass{k=v},pass'`) to `module`, verifying after each
    pass (`verify_with_locations`); returns `module`. On any error the module is left as it
    was. The input is verified only where the pipeline fails, as MLIR's pass manager assumes
    a verified input (api.parse verifies what it reads): an invalid input is then reported
    as such, not as the error of the pass it broke. Raises CoopError (a bad pipeline is
    located at `<command line>`), TypeError."""
    passes = parse_pipeline(spec, lambda prev, m, _n: prev is None or verify_with_locations(m))
    work = module.clone()
    try:
        passes.apply(make_context(), work)
    except CoopError:
        verify_with_locations(module)
        raise
    # only a complete result replaces the module's contents
    module.attributes.clear()
    module.attributes.update(work.attributes)
    old = module.body.detach_block(0)
    module.body.add_block(work.body.detach_block(0))
    old.erase(safe_erase=False)
    return module


# what xDSL's pass-spec lexer reads as one value token (utils/arg_spec.py)
_ONE_TOKEN = re.compile(r"[-+]?[0-9]+(\.[0-9]*([eE][-+]?[0-9]+)?)?|[A-Za-z0-9_-]+")


def quote_bare_values(spec: str) -> str:
    """`spec` with each option value that is not one token of xDSL's pass-spec syntax (it lexes
    `my.json` as `my`, then fails on `.`) written as a string literal."""
    out, i, depth, n = [], 0, 0, len(spec)
    while i < n:
        c = spec[i]
        if c == '"' or c == "[":  # a string literal or a nested pipeline: copied as it is
            close = '"' if c == '"' else "]"
            j = i + 1
            while j < n and spec[j] != close:
                j += 2 if spec[j] == "\\" else 1
            out.append(spec[i:j + 1])
            i = j + 1
            continue
        out.append(c)
        i += 1
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth > 0 and c in "=,":  # a value starts here (a list continues after a comma)
            j = i
            while j < n and spec[j] not in " \t\n,}":
                j += 1
            value = spec[i:j]
            if value and value[0] not in '"[' and not _ONE_TOKEN.fullmatch(value):
                out.append('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"')
                i = j
    return "".join(out)


def _describe(t) -> str:
    """An option type as the user writes its values."""
    origin, args = get_origin(t), get_args(t)
    if origin in (Union, UnionType):
        inner = [a for a in args if a is not type(None)]
        return " or ".join(_describe(a) for a in inner)
    if origin is Literal:
        return "one of " + ", ".join(str(a) for a in args)
    if origin is tuple:
        return f"a comma-separated list of {_describe(args[0]).removeprefix('an ').removeprefix('a ')}s"
    return {int: "an integer", float: "a number", bool: "true or false", str: "a string"}.get(t, str(t))


def _check_options(cls: type[ModulePass], s, bad: Callable[[str], CoopError]) -> None:
    """Each option of pass spec `s` exists and has a value of its type; else the CoopError
    `bad(message)` naming the pass, the option and the type it takes."""
    from xdsl.utils.arg_spec import _convert_arg_to_type

    fields = {f.name: f for f in dataclasses.fields(cls) if f.init and f.name != "name"}
    hints = get_type_hints(cls)
    for key, values in s.normalize_parameter_names().parameters.items():
        if key not in fields:
            options = ", ".join(f.replace("_", "-") for f in fields) or "none"
            raise bad(f"pass '{s.name}' has no option '{key.replace('_', '-')}' (its options: {options})")
        try:
            _convert_arg_to_type(values, hints[key])
        except ValueError:
            given = ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in values) or "nothing"
            raise bad(f"pass '{s.name}': option '{key.replace('_', '-')}' takes {_describe(hints[key])}, "
                      f"got '{given}'") from None
