"""coop-opt's command line run in the test's own process: its `main`, arguments, files, stdout,
stderr and exit status, without the second a fresh interpreter spends importing xDSL and
coopdialect. For tests of what the tool does with its input; the tests of the process itself
(the README tour, tests/test_runtime.py, tests/test_spirv_read.py's stdin) run one forked from
a server that imported the tools (tests/tool_processes.py), the fuzzer forks its own.
"""

from __future__ import annotations

import io
import subprocess
import sys

from coopdialect.tools import coop_opt


def run_coop_opt(args: list[str], *, input: bytes | None = None,
                 text: bool = True) -> subprocess.CompletedProcess:
    """`coop-opt ARGS` as `subprocess.run(..., capture_output=True, text=text)` reports it:
    returncode (SystemExit's code; 1 and the traceback on stderr for an uncaught exception, as
    the interpreter does), stdout and stderr (str, or bytes when not `text`)."""
    import traceback

    streams = [io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="\n") for _ in range(2)]
    stdin = io.TextIOWrapper(io.BytesIO(input or b""), encoding="utf-8")
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, *streams
    code: int = 0
    try:
        coop_opt.main([str(a) for a in args])
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:  # sys.exit("message"): the interpreter prints it and exits 1
            print(e.code, file=sys.stderr)
            code = 1
    except Exception:  # noqa: BLE001 - what the interpreter does with an uncaught exception
        traceback.print_exc()
        code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    for s in streams:
        s.flush()
    out, err = (s.buffer.getvalue() for s in streams)
    if text:
        out, err = out.decode(), err.decode()
    return subprocess.CompletedProcess(["coop-opt", *map(str, args)], code, out, err)
