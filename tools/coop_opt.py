"""`coop-opt`: xdsl-opt for cooperative-matrix IR, with SPIR-V and PTX targets.

Conventions are xdsl-opt's (`-p 'pass{k=v},pass'`, `-t target`, `-o file`, `--split-input-file`,
`--verify-diagnostics`, `--print-op-generic`), plus:

* `-t spirv` writes a SPIR-V binary, `-t spirv-asm` its disassembly, `-t ptx` PTX text, `-t ptx-launch`
  its launch description (JSON, docs/runtime.md), `-t mlir` IR.
* A `.spv` input (or `-f spirv`) is a SPIR-V binary, read into a `spirv.module` and validated.
* Any error (syntax, unknown op, verifier, pass, emitter, unwritable output) is one line on stderr,
  `file:line:col: error: message`, and exit status 1; nothing is written to the output file unless
  the whole run succeeded.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import warnings
from collections.abc import Callable
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from coopdialect.context import dialect_factories
from coopdialect.errors import CoopError, CoopWarning
from coopdialect.diagnostics import LocatingParser, decode_source, format_error, verify_with_locations
from coopdialect.passes import get_all_passes
from coopdialect.pipeline import parse_pipeline, spec_error_message
from coopdialect.tools.output_files import write_file


def _targets() -> dict[str, Callable[[], type]]:
    def spirv():
        from coopdialect.spirv.target import SpirvTarget
        return SpirvTarget

    def spirv_asm():
        from coopdialect.spirv.target import SpirvAsmTarget
        return SpirvAsmTarget

    def ptx():
        from coopdialect.ptx.target import PtxTarget
        return PtxTarget

    def ptx_launch():
        from coopdialect.ptx.launch import PtxLaunchTarget
        return PtxLaunchTarget

    return {"spirv": spirv, "spirv-asm": spirv_asm, "ptx": ptx, "ptx-launch": ptx_launch}


_PASSES_HELP = "\0passes-help\0"  # stands in the description for the text below


class _PassHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """`--help`'s formatter: writes coopdialect's passes and their options where the description
    holds `_PASSES_HELP`. The text is built only when help is printed, because building it imports
    every pass, which took half the start-up time of a run that names one pass."""

    def add_text(self, text):
        if text and _PASSES_HELP in text:
            from coopdialect.tools.pass_help import passes_help

            text = text.replace(_PASSES_HELP, passes_help(
                {name: factory() for name, factory in get_all_passes().items()}))
        super().add_text(text)


class CoopOptMain(xDSLOptMain):
    """The coop-opt driver: xDSLOptMain with coopdialect's dialects, passes and targets."""

    version_format = "coop-opt (coopdialect, xdsl {xdsl_version})"

    def register_all_dialects(self):
        super().register_all_dialects()
        for name, factory in dialect_factories().items():
            # coopdialect's `gpu` replaces xDSL's (same ops, MLIR's syntax for the id ops)
            self.ctx._registered_dialects[name] = factory  # noqa: SLF001

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.available_passes[name] = factory

    def register_all_targets(self):
        super().register_all_targets()
        self.available_targets.update(_targets())

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        """xdsl-opt's arguments; `--help` leads with coopdialect's passes (their options, from
        the pass dataclasses) and targets, `--help-all` adds xDSL's, `--list-targets` prints the
        target descriptions."""
        super().register_all_arguments(arg_parser)
        from coopdialect.tools.pass_help import targets_help

        names = list(get_all_passes())
        actions = arg_parser._option_string_actions  # noqa: SLF001 - argparse keeps no public map
        short = {
            "-p": f"Passes to run, comma-separated, e.g. 'fold-tensor-views,"
                  f"convert-coop-to-spirv{{flavor=nv}}'. coopdialect's: {', '.join(names)} (their "
                  "options below); --help-all lists xDSL's too",
            "-t": f"Output target: {', '.join(_targets())} or mlir (default); --help-all lists "
                  "xDSL's too",
        }
        full = {opt: actions[opt].help for opt in short}
        for opt, text in short.items():
            actions[opt].help = text
        arg_parser.prog = "coop-opt"
        arg_parser.formatter_class = _PassHelpFormatter
        arg_parser.description = f"{arg_parser.description}\n\n{_PASSES_HELP}"

        class HelpAll(argparse.Action):
            def __call__(self, parser, namespace, values, option_string=None):
                for opt, text in full.items():
                    actions[opt].help = text
                parser.print_help()
                parser.exit()

        class ListTargets(argparse.Action):
            def __call__(self, parser, namespace, values, option_string=None):
                print(targets_help(), end="")
                parser.exit()

        arg_parser.add_argument("--help-all", nargs=0, action=HelpAll,
                                help="this help with every pass and target of xDSL as well")
        arg_parser.add_argument("--list-targets", nargs=0, action=ListTargets,
                                help="print the target descriptions (legalize-coop-sizes"
                                     "{target=NAME}) and their native shapes, and exit")

    def register_all_frontends(self):
        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            name = self.get_input_name()
            text = decode_source(io.read(), name, self._line_offset)
            if not self.args.split_input_file and not _has_content(text):
                raise CoopError(None, "the input is empty (no operation to read)", where=name)
            parser = LocatingParser(self.ctx, text, name, line_offset=self._line_offset)
            return parser.parse_module(not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir

        def parse_spirv(io: IO[bytes]) -> ModuleOp:
            # like `mlir-translate --deserialize-spirv`: the binary becomes one spirv.module; a
            # corrupt or invalid binary is one line at `file:0:W`, W the word offset at fault
            from coopdialect.spirv.errors import SpirvReadError
            from coopdialect.spirv.reader import deserialize

            name = self.get_input_name()
            data = io.read()
            try:
                spv = deserialize(data if isinstance(data, bytes) else data.encode(), file=name)
            except SpirvReadError as e:
                raise CoopError(None, e.message, where=f"{name}:0:{e.word}") from None
            return ModuleOp([spv])

        self.available_frontends["spv"] = parse_spirv  # by file extension
        self.available_frontends["spirv"] = parse_spirv  # -f spirv

    _line_offset = 0

    def parse_chunk(self, chunk, file_extension, start_offset=0):
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def setup_pipeline(self):
        # xDSL's callback verifies without locations; this one reports the failing op's location.
        # It runs before the first pass, between passes and after the last one; the verification
        # after the last pass also stands for the emitter's (see `emit`).
        def callback(previous, module: ModuleOp, next_pass) -> None:
            if not self.args.disable_verify:
                verify_with_locations(module)
            if previous is not None and next_pass is not None and self.args.print_between_passes:
                print(f"IR after {previous.name}:\n{module}\n")

        # LocatedPipeline: whatever a pass raises reaches the user as one CoopError line; the
        # spec's errors name the pass and option (coopdialect.pipeline.parse_pipeline)
        self.pipeline = parse_pipeline(self.args.passes, callback, self.available_passes)

    def emit(self, prog: ModuleOp) -> str | bytes:
        """The output of the selected target for one module: text, or bytes for binary targets."""
        if self.args.disable_verify or parse_spec(self.args.target).name not in ("spirv", "spirv-asm"):
            return self._emit(prog)
        from coopdialect.spirv.writer import verified_by_caller

        # the pipeline has just verified `prog` (after its last pass): the SPIR-V writer need not
        with verified_by_caller():
            return self._emit(prog)

    def _emit(self, prog: ModuleOp) -> str | bytes:
        spec = parse_spec(self.args.target)
        target = self.available_targets[spec.name]
        if spec.name in _targets():
            t = target().from_spec(spec)
            if hasattr(t, "emit_bytes"):
                return t.emit_bytes(self.ctx, prog)
        return self.output_resulting_program(prog)

    def run(self):
        # The IR is a cyclic object graph that lives until the output is written: the cyclic
        # collector would rescan all of it again and again as it grows, which made the pipeline
        # superlinear in the file size. Nothing the run builds becomes garbage before the end.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._run()
        finally:
            if was_enabled:
                gc.enable()

    def _run(self):
        chunks, file_extension = self.prepare_input()
        pieces: list[str | bytes] = []
        for i, (chunk, offset) in enumerate(chunks):
            try:
                if i > 0:
                    pieces.append("// -----\n")
                module = self.parse_chunk(chunk, file_extension, offset)
                if module is not None:
                    self.apply_passes(module)
                    pieces.append(self.emit(module))
            except ParseError as e:
                if self.args.parsing_diagnostics:
                    pieces.append(format_error(_with_offset(e, offset)) + "\n")
                else:
                    raise _with_offset(e, offset) from None
            except DiagnosticException as e:
                if self.args.verify_diagnostics:
                    pieces.append(format_error(e) + "\n")
                else:
                    raise
            finally:
                chunk.close()
        self.write_output(pieces)

    def write_output(self, pieces: list[str | bytes]) -> None:
        """Write everything at once; with -o, through a temporary file renamed into place."""
        binary = any(isinstance(p, bytes) for p in pieces)
        if binary and len(pieces) > 1:
            raise CoopError(None, "a binary target cannot be combined with --split-input-file",
                            where=self.get_input_name())
        data = b"".join(p if isinstance(p, bytes) else p.encode() for p in pieces)
        path = self.args.output_file
        if path is None:
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
            return
        try:
            write_file(path, data)
        except OSError as e:
            raise CoopError(None, f"cannot write output file: {e.strerror}", where=path) from None


def _has_content(text: str) -> bool:
    """Whether `text` has anything but whitespace and `//` comments."""
    return any(line.strip() and not line.strip().startswith("//") for line in text.splitlines())


def _with_offset(e: ParseError, offset: int) -> ParseError:
    import dataclasses

    if offset and e.span.line_offset != offset:
        e.span = dataclasses.replace(e.span, line_offset=offset)
    return e


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Print a CoopWarning as its one located line (`file:line:col: warning: ...`)."""
    print(str(message), file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `coop-opt` console script."""
    warnings.simplefilter("ignore")  # stderr carries the one diagnostic line and nothing else,
    warnings.simplefilter("always", CoopWarning)  # after the located warnings of the passes
    warnings.showwarning = _show_warning
    try:
        main_ = CoopOptMain(description="coopdialect modular optimizer", args=argv)
    except CoopError as e:  # -p and its options (located at <command line>)
        print(str(e).splitlines()[0], file=sys.stderr)
        sys.exit(1)
    except (ValueError, KeyError, TypeError, ArgSpecParseError, ParseError) as e:  # other arguments
        print(f"<command line>: error: {spec_error_message(e)}", file=sys.stderr)
        sys.exit(1)
    if main_.args.output_file == "":
        print("<command line>: error: -o needs a file name", file=sys.stderr)
        sys.exit(1)
    try:
        main_.run()
    except (ParseError, DiagnosticException, OSError, ValueError, KeyError, ArgSpecParseError,
            RecursionError, MemoryError) as e:
        print(format_error(e, main_.get_input_name()), file=sys.stderr)
        sys.exit(1)
    except Exception as e:  # an internal error is still reported as one line, never a traceback
        if os.environ.get("COOP_OPT_TRACEBACK"):
            raise
        text = str(e).strip().splitlines()
        print(f"{main_.get_input_name()}: error: internal error ({type(e).__name__}): "
              f"{text[0] if text else ''}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
