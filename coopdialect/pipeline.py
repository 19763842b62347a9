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

from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
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


def parse_pipeline(spec: str, callback: Callable | None = None) -> LocatedPipeline:
    """The pipeline `spec` names; CoopError at `<command line>` if it is malformed, TypeError if
    `spec` is not a str."""
    from coopdialect.passes import get_all_passes

    if not isinstance(spec, str):
        raise TypeError(f"a pass pipeline is a str like 'pass{{k=v}},pass', got {type(spec).__name__}")
    try:
        passes = PassPipeline.parse_spec(get_all_passes(), spec, callback).passes
    except (ValueError, KeyError, TypeError, ArgSpecParseError, ParseError) as e:
        raise CoopError(None, f"bad pass pipeline '{spec}': {spec_error_message(e)}",
                        where="<command line>") from None
    return LocatedPipeline(passes, callback)


def apply_pipeline(module: ModuleOp, spec: str) -> ModuleOp:
    """Apply the pass pipeline `spec` (`'pass{k=v},pass'`) to `module`, verifying before and after
    each pass (`verify_with_locations`); returns `module`. On any error the module is left as it
    was. Raises CoopError (a bad pipeline is located at `<command line>`), TypeError."""
    passes = parse_pipeline(spec, lambda _p, m, _n: verify_with_locations(m))
    work = module.clone()
    passes.apply(make_context(), work)
    # only a complete result replaces the module's contents
    module.attributes.clear()
    module.attributes.update(work.attributes)
    old = module.body.detach_block(0)
    module.body.add_block(work.body.detach_block(0))
    old.erase(safe_erase=False)
    return module
