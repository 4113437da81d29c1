"""`hlo-layout report DUMP... -o report.html`: one self-contained HTML page per run."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_INPUT,
    EXIT_USAGE,
    TOP_DEFAULT,
    BackendOpt,
    BuffersOpt,
    DumpArgs,
    TopOpt,
    guard,
    progress,
    read_dumps,
    stderr_console,
)
from hlo_layout.syntax.parse import file_size

OutputOpt = Annotated[
    Path,
    typer.Option(
        "--output",
        "-o",
        help="Where to write the HTML page (`-` for stdout).",
        show_default=False,
    ),
]


def _write(path: Path, text: str) -> None:
    """Write the page whole or not at all (a temporary file renamed over the target)."""
    if str(path) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".hlo-layout-", suffix=".html", dir=directory)
    except OSError as e:
        stderr_console().print(f"error: cannot write {path}: {e.strerror or e}")
        raise typer.Exit(EXIT_USAGE) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report is shared like any file
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        stderr_console().print(f"error: cannot write {path}: {e.strerror or e}")
        raise typer.Exit(EXIT_USAGE) from None


def write_html_report(data: dict[str, Any], output: Path) -> None:
    """Write the page of report data (`hlo_layout.report.html`: `build_report` of dumps, or
    `report_of` modules `inspect` already measured) and say where."""
    from hlo_layout.report.html import render_html

    _write(output, render_html(data))
    for note in data["notes"]:
        stderr_console().print(f"note: {note}", markup=False, highlight=False)
    if str(output) != "-":
        stderr_console().print(f"wrote {output} ({file_size(output):,} bytes)")


@app.command()
def report(
    dumps: DumpArgs,
    output: OutputOpt,
    top: TopOpt = TOP_DEFAULT,
    backend: BackendOpt = None,
    buffers: BuffersOpt = None,
) -> None:
    """Write one self-contained HTML report (no network needed to view it): memory over program
    order per memory space with the peak marked, the buffers live at the peak with a card each,
    padding by tiling pattern with tile-grid pictures, fusions by kind, and the compiler's buffer
    assignment beside ours when it sits beside the dump. Given two dumps, the page opens with
    what changed from the first to the second (as `diff` says it). [bold]--top[/bold] bounds
    each list.
    """
    with guard("report"):
        if output.is_dir():
            stderr_console().print(f"error: {output} is a directory; give a file name for -o")
            raise typer.Exit(EXIT_USAGE)
        files = [(str(p), file_size(p)) for p in dumps]
        with progress(files, writes_stdout=str(output) == "-") as stages:
            loaded = read_dumps(dumps, backend=backend, buffers=buffers, stages=stages)
            if loaded.dumps:
                from hlo_layout.report.html import build_report

                stages.start("measuring")
                data = build_report(loaded.dumps, top=top, progress=stages.callback)
                write_html_report(data, output)
        if not loaded.dumps or loaded.errors:
            raise typer.Exit(EXIT_INPUT)
