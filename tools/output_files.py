"""Output files of coop-opt and coop-run: written whole or not at all, with the umask's mode.

Each file is written under a temporary name in its final directory and renamed into place once
everything succeeded. The temporary file is created like `open(path, "w")` creates one (mode
0666 less the umask), not like `tempfile.mkstemp` (0600), because the rename keeps its mode.
A destination that exists and is not a regular file (`/dev/null`, `/dev/stdout`, a named pipe)
is never renamed over: its bytes are kept in memory and written to it at the commit.
"""

from __future__ import annotations

import io
import os
import secrets
import stat


def create_temporary(final: str) -> tuple[int, str]:
    """(fd, path) of a new, empty file beside `final`, opened for writing. Raises OSError."""
    directory, name = os.path.split(os.path.abspath(final))
    while True:
        tmp = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue
        except OSError as e:  # name the file the user asked for, not the temporary one
            raise OSError(e.errno, e.strerror, final) from None


class StagedFiles:
    """Files written now and renamed into place by `commit()`; `discard()` removes them.

        staged = StagedFiles()
        with staged.open("out/C.npy") as f: ...
        staged.commit()            # every file appears, or (on an error before) none
    """

    def __init__(self) -> None:
        self._files: list[tuple[str, str]] = []  # (temporary, final)
        self._special: list[tuple[_Kept, str]] = []  # (contents, final): not regular files

    def open(self, final: str):
        """A binary file object for `final`'s contents (a temporary file until `commit`)."""
        try:
            special = not stat.S_ISREG(os.stat(final).st_mode)
        except OSError:
            special = False
        if special:
            kept = _Kept()
            self._special.append((kept, final))
            return kept
        fd, tmp = create_temporary(final)
        self._files.append((tmp, final))
        return os.fdopen(fd, "wb")

    def commit(self) -> None:
        for tmp, final in self._files:
            os.replace(tmp, final)
        for kept, final in self._special:
            with open(final, "wb") as f:
                f.write(kept.data if kept.closed else kept.getvalue())
        self._files, self._special = [], []

    def discard(self) -> None:
        for tmp, _ in self._files:
            if os.path.exists(tmp):
                os.unlink(tmp)
        self._files, self._special = [], []


class _Kept(io.BytesIO):
    """The contents of a special file until the commit (closing it keeps them, as closing a
    BytesIO would discard them)."""

    data = b""

    def close(self) -> None:
        if not self.closed:
            self.data = self.getvalue()
        super().close()


def write_file(path: str, data: bytes) -> None:
    """Write `data` to `path` through a temporary file renamed into place. Raises OSError (no
    file left behind)."""
    staged = StagedFiles()
    try:
        with staged.open(path) as f:
            f.write(data)
        staged.commit()
    except BaseException:
        staged.discard()
        raise
