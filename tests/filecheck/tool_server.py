"""lit's `coop-opt` and `filecheck` (and the pytest tests' `coop-opt`, `coop-run` and
`coop-layout`, tests/tool_processes.py): the real command-line tools, started by forking a
process that has imported them.

A `coop-opt` process spends about a second importing xDSL, numpy and coopdialect before it reads
its input, several times what a FileCheck test's own work takes, and a `filecheck` process a
seventh of a second importing its package (importlib.metadata, re, dataclasses) to match a few
lines; the suite runs some 120 of each. lit.cfg starts `serve` once; each RUN line's `coop-opt
ARGS` (`filecheck ARGS`) is `client coop-opt ARGS` (`client filecheck ARGS`), which hands the
server its stdin/stdout/stderr, working directory, environment, tool and arguments. The server
forks; the child runs `python -m coopdialect.tools.coop_opt ARGS` as the interpreter would
(runpy, same module, `SystemExit` codes, a traceback and exit status 1 for an uncaught
exception), or what the `filecheck` console script runs (`filecheck.main.main()`), on those
file descriptors and sends back its exit status, which the client exits with. Each test thus
runs the command line's own code in a fresh process (a fork), never one shared with another test.

    python tool_server.py serve SOCKET [TOOL...]    # until its parent (lit) exits; TOOLs to
                                                    # import first (default coop-opt filecheck)
    python -S tool_server.py SOCKET TOOL ARGS       # one run of TOOL (one of TOOLS)
    tool_client SOCKET TOOL ARGS                    # the same client in C (tool_client.c), which
                                                    # lit.cfg builds where a C compiler is found
"""

from __future__ import annotations

import os
import sys
from array import array

# the C modules under `socket` and `struct`: a client (`python -S tool_server.py ...`, one per
# command line) starts in 20 ms instead of 35 without socket.py's enum and selectors imports
import _socket
from _struct import pack, unpack


def _send_msg(sock: _socket.socket, data: bytes) -> None:
    sock.sendall(pack("!I", len(data)) + data)


def _recv_exact(sock: _socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        part = sock.recv(n - len(buf))
        if not part:
            raise EOFError
        buf += part
    return buf


def _recv_msg(sock: _socket.socket) -> bytes:
    (n,) = unpack("!I", _recv_exact(sock, 4))
    return _recv_exact(sock, n)


MODULES = {"coop-opt": "coopdialect.tools.coop_opt", "coop-run": "coopdialect.tools.coop_run",
           "coop-layout": "coopdialect.tools.coop_layout"}
"""The console scripts the server runs, by the module `python -m` runs for each."""
TOOLS = (*MODULES, "filecheck")


def start(path: str, tool: str, args: list[str], fds: tuple[int, int, int] = (0, 1, 2),
          cwd: str | None = None, env: dict[bytes, bytes] | None = None) -> _socket.socket:
    """Ask the server at `path` to run `TOOL ARGS` on file descriptors `fds` (its stdin,
    stdout, stderr) in `cwd` with `env` (default: this process's); `wait` gives its status."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.connect(path)
    # socket.send_fds
    sock.sendmsg([b"f"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, array("i", fds))])
    env = b"\0".join(k + b"=" + v for k, v in (os.environb if env is None else env).items())
    for part in (tool.encode(), os.fsencode(cwd or os.getcwd()), env, str(len(args)).encode(),
                 *map(os.fsencode, args)):
        _send_msg(sock, part)
    return sock


def wait(sock: _socket.socket) -> int | None:
    """The exit status of the run `start` began, or None if the process died without one."""
    try:
        (status,) = unpack("!i", _recv_exact(sock, 4))
    except EOFError:
        return None
    finally:
        sock.close()
    return status


def client(path: str, tool: str, args: list[str]) -> int:
    status = wait(start(path, tool, args))
    if status is None:
        print(f"{tool}: the process died without an exit status", file=sys.stderr)
        return 1
    return status


_SERVER_STDIO = []


def _fresh_stdio() -> None:
    """sys.stdin/stdout/stderr made anew over fds 0-2, as an interpreter starting on them would
    (the server's were made for its own files: a seekable one's wrapper cannot be reconfigured
    on a pipe). The server's wrappers are kept alive, or collecting them would close fds 0-2."""
    _SERVER_STDIO.extend((sys.stdin, sys.stdout, sys.stderr))
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        old = getattr(sys, name)
        if name == "stdin":
            new = open(fd, "r", encoding=old.encoding, errors=old.errors, closefd=False)
        else:
            line = name == "stderr" or os.isatty(fd)
            new = open(fd, "w", buffering=1 if line else -1, encoding=old.encoding,
                       errors=old.errors, closefd=False)
        setattr(sys, name, new)
        setattr(sys, f"__{name}__", new)


def _child(conn) -> None:
    """In the forked process: become `python -m coopdialect.tools.TOOL ARGS` (`MODULES`) or the
    `filecheck ARGS` console script."""
    import runpy
    import socket
    import traceback

    _, fds, _, _ = socket.recv_fds(conn, 1, 3)
    tool = _recv_msg(conn).decode()
    cwd = _recv_msg(conn).decode()
    env = _recv_msg(conn)
    args = [os.fsdecode(_recv_msg(conn)) for _ in range(int(_recv_msg(conn)))]
    for target, fd in zip((0, 1, 2), fds):
        os.dup2(fd, target)
        os.close(fd)
    _fresh_stdio()
    os.chdir(cwd)
    os.environ.clear()
    os.environb.update(kv.split(b"=", 1) for kv in env.split(b"\0") if kv)
    sys.argv = [tool, *args]
    status = 0
    try:
        if tool == "filecheck":
            from filecheck.main import main

            sys.exit(main())  # the console script's body
        # run as __main__ from its source, as `python -m` does (runpy warns about a module it
        # finds imported already; the modules it imports stay imported, which is the point)
        sys.modules.pop(MODULES[tool], None)
        runpy.run_module(MODULES[tool], run_name="__main__", alter_sys=True)
    except SystemExit as e:
        code = e.code
        if code is None:
            status = 0
        elif isinstance(code, int):
            status = code
        else:
            print(code, file=sys.stderr)
            status = 1
    except BaseException:  # noqa: BLE001 - what the interpreter does with an uncaught exception
        traceback.print_exc()
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe: the status still goes back
            pass
    conn.sendall(pack("!i", status))
    os._exit(status)


def serve(path: str, tools: tuple[str, ...] = ("coop-opt", "filecheck")) -> None:
    import importlib
    import signal
    import socket

    # what a run of each tool imports, once: the tool, its dialects, passes and targets
    # (coop-opt), the interpreter and the runtime (coop-run); filecheck
    if "filecheck" in tools:
        import filecheck.main  # noqa: F401
    for tool in tools:
        if tool in MODULES:
            importlib.import_module(MODULES[tool])
    if "coop-opt" in tools or "coop-run" in tools:
        import coopdialect.tools.coop_opt as coop_opt
        from coopdialect.context import dialect_factories
        from coopdialect.passes import get_all_passes

        for factory in dialect_factories().values():
            factory()
        for factory in get_all_passes().values():
            factory()
        for factory in coop_opt._targets().values():  # noqa: SLF001
            factory()

    # children are reaped here, as they end and before the server exits (on its parent's
    # SIGTERM too), so that their CPU time counts in the parent's, as a subprocess's does
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    parent = os.getppid()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    server.settimeout(0.2)
    print("ready", flush=True)
    children = 0
    while os.getppid() == parent and not stopping:
        children -= _reap(block=False)
        try:
            conn, _ = server.accept()
        except (TimeoutError, InterruptedError):
            continue
        conn.settimeout(None)
        if os.fork() == 0:
            server.close()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            try:
                _child(conn)
            finally:
                os._exit(1)
        children += 1
        conn.close()
    while children > 0:
        children -= _reap(block=True)


def _reap(block: bool) -> int:
    """Wait for ended children (all of them if `block`, else those ended already); how many."""
    n = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return n
        if pid == 0:
            return n
        n += 1
        if block:
            return n


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], *([tuple(sys.argv[3:])] if sys.argv[3:] else []))
    else:
        if sys.argv[2] not in TOOLS:
            sys.exit(f"tool_server.py: no tool '{sys.argv[2]}' (one of {', '.join(TOOLS)})")
        sys.exit(client(sys.argv[1], sys.argv[2], sys.argv[3:]))
