"""What every command shares: option types, output streams, and the error → exit-code guard."""

from __future__ import annotations

import contextlib
import enum
import json
import os
import sys
import traceback
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from hlo_layout.errors import HloLayoutError, HloUsageError
from hlo_layout.report.stages import BIG_INPUT_BYTES, Stages
from hlo_layout.units import TOP_DEFAULT as TOP_DEFAULT  # every command's `--top` default

if TYPE_CHECKING:
    from hlo_layout.reader.loader import Loaded

#: Click's base exception (usage errors and the like), from the click Typer runs on: newer Typer
#: versions carry their own copy of click, so `import click` may be absent or a different one.
_CLICK_ERROR: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)


EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_INTERNAL = 4


class OutputFormat(str, enum.Enum):
    text = "text"
    json = "json"


FormatOpt = Annotated[
    OutputFormat,
    typer.Option(
        "--format",
        "-f",
        help="text (a Rich view on stdout) or json (stdout only).",
        metavar="text|json",
    ),
]


def _top(value: int) -> int:
    if value < 1:
        raise typer.BadParameter(f"{value} is less than 1", param_hint="'--top'")
    return value


TopOpt = Annotated[
    int,
    typer.Option("--top", "-n", help="Rows shown per table.", metavar="N", callback=_top),
]
DumpArgs = Annotated[
    list[Path],
    typer.Argument(
        help="HLO text dump(s): *.txt, *.hlo, also .gz; - reads one from stdin.",
        metavar="PATH...",
        show_default=False,
    ),
]
DumpArg = Annotated[
    Path,
    typer.Argument(
        help="One HLO text dump (*.txt, *.hlo, also .gz); - reads it from stdin.",
        metavar="PATH",
        show_default=False,
    ),
]


def _backend(value: str | None) -> str | None:
    from hlo_layout.memory.backend import BACKENDS

    if value is not None and value.lower() not in BACKENDS:
        raise typer.BadParameter(f"unknown backend {value!r}: use one of {', '.join(BACKENDS)}")
    return value.lower() if value is not None else None


def _by(value: str) -> str:
    """`--by`: checked here (usage error, exit 2) so a command reads it with `parse_grouping`."""
    from hlo_layout.memory.attribution import parse_grouping  # not at start-up

    try:
        parse_grouping(value)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    return value


ByOpt = Annotated[
    str,
    typer.Option(
        "--by",
        help="Group the peak by source line (source), op_name (op) or its first N /-parts (op:N).",
        metavar="source|op|op:N",
        callback=_by,
    ),
]
BackendOpt = Annotated[
    str | None,
    typer.Option(
        "--backend",
        help="cpu, gpu, tpu (v4/v5e), tpu-v4, tpu-v5e, tpu-v5p or tpu-v6e (default: detected "
        "from the dump's name and text and, for a TPU generation, the *.target_arguments.txt or "
        "buffer assignment beside it).",
        metavar="NAME",
        show_default=False,
        callback=_backend,
    ),
]
BuffersOpt = Annotated[
    Path | None,
    typer.Option(
        "--buffers",
        "-b",
        help="XLA's *buffer-assignment.txt for the dump (found beside it when not given).",
        show_default=False,
    ),
]


def tolerate_any_encoding() -> None:
    """Characters the terminal's encoding lacks (`PYTHONIOENCODING=ascii`) are escaped rather
    than raising: output must never turn into an internal error."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "") == "strict":
            with contextlib.suppress(Exception):
                reconfigure(errors="backslashreplace")


def _ascii_only() -> bool:
    encoding = (getattr(sys.stdout, "encoding", None) or "utf-8").lower().replace("-", "")
    return encoding not in ("utf8", "utf16", "utf32", "utf8sig")


def write_output_file(path: Path, text: str | None) -> int:
    """Write an output file (`cli/output.py`: whole, never replacing a device or a FIFO) and
    return the bytes written; an unwritable path is a usage error (exit 2) with a message. With
    `text` None, only check that it can be written."""
    from hlo_layout.cli.output import OutputError
    from hlo_layout.cli.output import write_output_file as write

    try:
        return write(path, text)
    except OutputError as e:
        report_error(e)
        raise typer.Exit(EXIT_USAGE) from None


def stderr_console() -> Any:
    """Bound to the current sys.stderr at each call (test runners swap it). Rich is imported
    here, not with this module: a JSON command that prints no error never loads it."""
    from hlo_layout.cli.output import message_stream
    from hlo_layout.report.console import make_console

    return make_console(message_stream(), soft_wrap=True)


def usage_error(message: str) -> NoReturn:
    """`error: MESSAGE` on stderr, then exit 2 (a usage error)."""
    stderr_console().print(f"error: {message}", markup=False, highlight=False)
    raise typer.Exit(EXIT_USAGE)


def stdout_console() -> Any:
    from hlo_layout.report.console import make_console

    return make_console(sys.stdout)


def _stderr_may_be_a_terminal() -> bool:
    """False only where Rich's `Console.is_terminal` is surely False for stderr: not a TTY and
    none of the variables that make Rich treat it as one (`TTY_COMPATIBLE=1`, `FORCE_COLOR`)."""
    if os.environ.get("TTY_COMPATIBLE") == "1" or "FORCE_COLOR" in os.environ:
        return True
    return _isatty(sys.stderr)


def _isatty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except ValueError:  # a closed stream
        return False


@contextlib.contextmanager
def progress(files: list[tuple[str, int]], *, writes_stdout: bool = False) -> Iterator[Stages]:
    """The progress bar on stderr for reading `files` (path, bytes) and the stages after; where
    none would show (small input, stderr not a terminal), a silent `Stages` without Rich.
    `writes_stdout`: the command writes its output while the bar runs, so there is no bar when
    stdout is a terminal too (the two would overwrite each other's lines)."""
    total = sum(size for _, size in files)
    if (
        total < BIG_INPUT_BYTES
        or not _stderr_may_be_a_terminal()
        or (writes_stdout and _isatty(sys.stdout))
    ):
        yield Stages(None)
        return
    from hlo_layout.report.progress_view import progress_stages

    with progress_stages(stderr_console(), total, files) as stages:
        yield stages


def read_dumps(
    paths: list[Path],
    *,
    backend: str | None = None,
    buffers: Path | None = None,
    stages: Any = None,
) -> Loaded:
    """Every dump of a command's PATH arguments through the one reader (`hlo_layout.reader`):
    `--buffers` with more than one dump is a usage error (exit 2); an input error is reported
    and the other dumps are still read (the caller exits 3 when `Loaded.errors`); what was
    skipped or assumed is said once on stderr."""
    from hlo_layout.reader import load

    try:
        loaded = load(list(paths), backend=backend, buffers=buffers, strict=False, progress=stages)
    except ValueError as e:
        stderr_console().print(f"error: {e}", markup=False, highlight=False)
        raise typer.Exit(EXIT_USAGE) from None
    for error in loaded.errors:
        report_error(error)
    say_notes(loaded)
    return loaded


def say_notes(loaded: Loaded) -> None:
    """The reader's notes and each assumed backend, once per run on stderr (JSON keeps them in
    the documents' `notes`)."""
    say_assumed(loaded.assumed, list(loaded.notes))


def say_assumed(assumed: Iterable[tuple[str, str]], lines: list[str] | None = None) -> None:
    """`note:` lines on stderr: `lines`, then each (file, note) of an assumed backend once (one
    line for every file assumed alike)."""
    lines = list(lines or ())
    files_of: dict[str, list[str]] = {}
    for file, note in assumed:
        files_of.setdefault(note, []).append(file)
    for note, files in files_of.items():
        where = files[0] if len(set(files)) == 1 else f"{len(set(files))} dumps"
        lines.append(f"{where}: {note}")
    if lines:
        console = stderr_console()
        for line in lines:
            console.print(f"note: {line}", markup=False, highlight=False)


def emit_json(document: Any) -> None:
    """JSON on stdout and nothing else there (progress and errors go to stderr).

    `json.dumps(document, indent=2)`'s text, written as its encoder yields it (a few thousand
    pieces at a time): `json.dumps` holds every piece of a long document at once (`memory`'s
    `values` of a 100,000-leaf tuple parameter: two hundred MB)."""
    encoder = json.JSONEncoder(indent=2, ensure_ascii=_ascii_only())
    write = sys.stdout.write
    parts: list[str] = []
    for piece in encoder.iterencode(document):
        parts.append(piece)
        if len(parts) >= 1 << 14:
            write("".join(parts))
            parts.clear()
    parts.append("\n")
    write("".join(parts))
    sys.stdout.flush()


def emit_json_items(head: dict[str, Any], key: str, items: Iterable[Any]) -> None:
    """`emit_json({**head, key: list(items)})`, the same bytes, written an item at a time: a
    long list never exists whole, as objects or as text. `key` is the document's last key."""
    ascii_only = _ascii_only()
    text = json.dumps({**head, key: []}, indent=2, ensure_ascii=ascii_only)
    before, after = text.rsplit("[]", 1)
    write = sys.stdout.write
    first = True
    for item in items:
        write(before + "[\n    " if first else ",\n    ")
        write(json.dumps(item, indent=2, ensure_ascii=ascii_only).replace("\n", "\n    "))
        first = False
    write((before + "[]" if first else "\n  ]") + after + "\n")
    sys.stdout.flush()


def report_error(error: HloLayoutError) -> None:
    from hlo_layout.report.errors_view import render_error

    render_error(stderr_console(), error)


def report_internal(error: BaseException, command: str) -> None:
    debug = bool(os.environ.get("HLO_LAYOUT_DEBUG"))
    if debug:
        from hlo_layout.cli.output import message_stream

        traceback.print_exception(error, file=message_stream())
    from hlo_layout.report.errors_view import render_internal_error

    render_internal_error(stderr_console(), error, command, traceback_shown=debug)


@contextlib.contextmanager
def guard(command: str) -> Iterator[None]:
    """Input errors → message + exit 3; a bad option value or an output that cannot be written
    → message + exit 2 (`cli/output.py`); anything unexpected → 'this is a bug' + exit 4."""
    from hlo_layout.cli.output import guarded_stdout

    tolerate_any_encoding()
    try:
        with guarded_stdout():
            yield
    except (typer.Exit, typer.Abort, SystemExit, typer.TyperException, _CLICK_ERROR):
        raise  # exits and usage errors (exit 2) are Typer's to report
    except BrokenPipeError:
        # The reader went away (`| head`): not an error of ours or of the input.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(EXIT_OK) from None
    except HloUsageError as e:
        report_error(e)
        raise typer.Exit(EXIT_USAGE) from None
    except HloLayoutError as e:
        report_error(e)
        raise typer.Exit(EXIT_INPUT) from None
    except RecursionError:
        stderr_console().print("error: input is nested too deeply to process")
        raise typer.Exit(EXIT_INPUT) from None
    except MemoryError:
        stderr_console().print("error: out of memory while reading the input")
        raise typer.Exit(EXIT_INPUT) from None
    except Exception as e:
        report_internal(e, command)
        raise typer.Exit(EXIT_INTERNAL) from None


ComputationOpt = Annotated[
    str | None,
    typer.Option(
        "--computation",
        "-c",
        help="Report on this computation only (its parameters, root and values).",
        show_default=False,
    ),
]
