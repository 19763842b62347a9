"""coop-opt, coop-run and coop-layout as processes, forked from a server that has imported them.

`run(["coop-run", ARGS...])` returns what `subprocess.run` of that command line with
`capture_output=True` returns: a process of its own (its own stdin, stdout, stderr, working
directory, environment and exit status; `python -m coopdialect.tools.coop_run ARGS` as the
interpreter runs it, a traceback and status 1 for an uncaught exception), forked from a server
that imported the tools once (tests/filecheck/tool_server.py, which lit's RUN lines use too)
instead of a fresh interpreter that spends a second importing xDSL and coopdialect first. For
the tests of what a tool's process does (exit status, one-line errors, files written); the
tests of what it does with its input run its `main` in-process (tests/cli.py). `server()`
gives the socket of this test process's server, started on first use, for a shell script's
command lines (the README tour).
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "filecheck" / "tool_server.py"
_spec = importlib.util.spec_from_file_location("tool_server", SERVER)
tool_server = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tool_server)

_server: tuple[subprocess.Popen, str] | None = None


def server() -> str:
    """The path of this process's tool server's socket (started on first use, stopped at exit)."""
    global _server
    if _server is None or _server[0].poll() is not None:
        folder = tempfile.mkdtemp(prefix="coop-tools-")
        sock = os.path.join(folder, "socket")
        proc = subprocess.Popen([sys.executable, str(SERVER), "serve", sock, *tool_server.MODULES],
                                cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                text=True)
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{SERVER} did not start (exit status {proc.wait()})")

        def stop():
            proc.terminate()
            proc.wait()
            shutil.rmtree(folder, ignore_errors=True)

        atexit.register(stop)
        _server = proc, sock
    return _server[1]


def run(command: list[str | os.PathLike], *, input: bytes | str | None = None, text: bool = False,
        cwd: str | os.PathLike | None = None, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess:
    """`subprocess.run(command, input=input, capture_output=True, text=text, cwd=cwd, env=env)`
    for a command line whose first word is coop-opt, coop-run or coop-layout (module docstring)."""
    tool, *args = [os.fspath(c) for c in command]
    if tool not in tool_server.MODULES:
        raise ValueError(f"{tool} is not one of {', '.join(tool_server.MODULES)}")
    data = input.encode() if isinstance(input, str) else (input or b"")
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    environ = None if env is None else {os.fsencode(k): os.fsencode(v) for k, v in env.items()}
    try:
        sock = tool_server.start(server(), tool, args, (in_r, out_w, err_w),
                                 os.fspath(cwd) if cwd is not None else None, environ)
    finally:
        for fd in (in_r, out_w, err_w):  # the child holds its own copies now
            os.close(fd)
    out, err = _communicate(in_w, out_r, err_r, data)
    status = tool_server.wait(sock)
    if status is None:
        raise RuntimeError(f"{tool}: the process died without an exit status")
    if text:
        out, err = (x.decode().replace("\r\n", "\n") for x in (out, err))
    return subprocess.CompletedProcess(command, status, out, err)


def _communicate(in_w: int, out_r: int, err_r: int, data: bytes) -> tuple[bytes, bytes]:
    """Write `data` to the child's stdin and read its stdout and stderr to their ends, all at
    once (a full pipe in either direction would otherwise stop both sides)."""
    sel = selectors.DefaultSelector()
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    for fd in chunks:
        sel.register(fd, selectors.EVENT_READ)
    if data:
        os.set_blocking(in_w, False)
        sel.register(in_w, selectors.EVENT_WRITE)
    else:
        os.close(in_w)
    view = memoryview(data)
    try:
        while sel.get_map():
            for key, _ in sel.select():
                fd = key.fd
                if fd == in_w:
                    try:
                        view = view[os.write(in_w, view[:65536]):]
                    except BrokenPipeError:
                        view = view[:0]
                    if not view:
                        sel.unregister(in_w)
                        os.close(in_w)
                    continue
                chunk = os.read(fd, 65536)
                if chunk:
                    chunks[fd].append(chunk)
                else:
                    sel.unregister(fd)
                    os.close(fd)
    finally:
        sel.close()
    return b"".join(chunks[out_r]), b"".join(chunks[err_r])
