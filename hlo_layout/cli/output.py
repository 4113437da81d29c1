"""The one output writer: where a command's results go, and what happens when they cannot.

Every byte a command writes goes to standard output, to standard error, or to a file it was
given (`report -o`, `inspect --html`, `check --junit-xml`). Writing may fail: a full disk
(`> /dev/full`), a closed stream (`>&-`), a path that cannot be created. That is never a bug of
ours (exit 4) but an output error: a message on stderr and exit 2, as for any output file that
cannot be written (README, "Exit codes"). A reader that goes away (`| head`) is not an error.

A file is written whole or not at all when it is a regular file (or a new name): a temporary
file beside it, renamed over it, so a reader never sees half a page. Anything else that is there
— `/dev/null`, a FIFO, a device, `/dev/stdout`, a process substitution — is written through,
never replaced (a rename would turn it into a regular file); a symlink is followed and the file
it points to replaced, the link kept.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from hlo_layout.errors import HloUsageError


class OutputError(HloUsageError):
    """The output cannot be written (exit 2)."""


def write_output_file(path: Path, text: str | None) -> int:
    """Write `text` to the file at `path` (module docstring), creating missing parent folders;
    `-` is standard output. With `text` None, only check that it could be written (before long
    work). Returns the bytes written; raises OutputError with the reason."""
    if str(path) == "-":
        if text is not None:
            sys.stdout.write(text)
            sys.stdout.flush()
        return len(text.encode("utf-8", "backslashreplace")) if text is not None else 0
    try:
        return _write(path, text)
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror or e}") from None


def _write(path: Path, text: str | None) -> int:
    try:
        found: os.stat_result | None = os.stat(path)  # through symlinks
    except FileNotFoundError:
        found = None
    if found is not None and stat.S_ISDIR(found.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory")
    data = None if text is None else text.encode("utf-8", "backslashreplace")
    if found is not None and not stat.S_ISREG(found.st_mode):
        if data is None:
            if not os.access(path, os.W_OK):
                raise PermissionError(errno.EACCES, "permission denied")
            return 0
        with open(path, "wb") as special:  # write through: never replace what is there
            special.write(data)
        return len(data)
    target = Path(os.path.realpath(path))  # a symlink's file is replaced, the link kept
    target.parent.mkdir(parents=True, exist_ok=True)
    if data is None:
        if not os.access(target if found is not None else target.parent, os.W_OK):
            raise PermissionError(errno.EACCES, "permission denied")
        return 0
    fd, tmp = tempfile.mkstemp(prefix=".hlo-layout-", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if found is not None:
            mode = stat.S_IMODE(found.st_mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask  # mkstemp makes 0600; an output is shared like any new file
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(data)


class _Checked:
    """A stream whose failed writes raise OutputError naming it (`guarded_stdout`); a closed
    stream (None: the command was started with it closed) fails on the first write only, so a
    command that writes nothing there runs as usual."""

    def __init__(self, stream: Any, name: str) -> None:
        self._stream = stream
        self._name = name

    def _fail(self, error: BaseException) -> OutputError:
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        return OutputError(f"cannot write to {self._name}: {reason}")

    def write(self, data: Any) -> Any:
        if self._stream is None:
            raise OutputError(f"cannot write to {self._name}: it is closed")
        try:
            return self._stream.write(data)
        except BrokenPipeError:
            raise  # the reader went away: `guard` ends quietly
        except (OSError, ValueError) as e:  # ValueError: a stream closed under us
            raise self._fail(e) from None

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as e:
            raise self._fail(e) from None

    @property
    def buffer(self) -> Any:
        raw = getattr(self._stream, "buffer", None)
        return None if raw is None else _Checked(raw, self._name)

    def __getattr__(self, name: str) -> Any:
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


@contextmanager
def guarded_stdout() -> Iterator[None]:
    """While a command runs, sys.stdout fails with OutputError instead of OSError (a full disk)
    or AttributeError (closed); what is still buffered is written before it ends, so a failure
    there is reported too rather than at the interpreter's exit."""
    original = sys.stdout
    checked = _Checked(original, "standard output")
    sys.stdout = checked  # type: ignore[assignment]
    try:
        yield
    finally:
        try:
            checked.flush()  # also after an exit: what was printed before it must be written
        finally:
            if sys.stdout is checked:
                sys.stdout = original


class _Quiet:
    """Standard error for messages: when it is closed or cannot be written, they are dropped
    (there is nowhere else to say them; never on stdout, which holds the results)."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream

    def write(self, data: str) -> int:
        if self._stream is not None:
            try:
                self._stream.write(data)
            except (OSError, ValueError):
                self._stream = None
        return len(data)

    def flush(self) -> None:
        if self._stream is not None:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._stream = None

    def isatty(self) -> bool:
        try:
            return self._stream is not None and bool(self._stream.isatty())
        except (OSError, ValueError, AttributeError):
            return False

    def __getattr__(self, name: str) -> Any:
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


def message_stream() -> TextIO:
    """Where messages go: the current sys.stderr, made safe (`_Quiet`)."""
    return _Quiet(sys.stderr)  # type: ignore[return-value]


__all__ = ["OutputError", "guarded_stdout", "message_stream", "write_output_file"]
