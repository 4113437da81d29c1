"""`hlo-layout report DUMP... -o report.html`: one self-contained HTML page per run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from hlo_layout.api import read_dumps
from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_INPUT,
    EXIT_USAGE,
    TOP_DEFAULT,
    BuffersOpt,
    DumpArgs,
    TopOpt,
    guard,
    progress,
    report_error,
    stderr_console,
    write_output_file,
)
from hlo_layout.layout.buffer_assignment import (
    BufferAssignment,
)
from hlo_layout.syntax.parse import file_size
from hlo_layout.syntax.tree import Module

OutputOpt = Annotated[
    Path,
    typer.Option(
        "--output",
        "-o",
        help="Where to write the HTML page (`-` for stdout).",
        show_default=False,
    ),
]


def write_html_report(
    entries: list[tuple[str, Module, BufferAssignment | None]],
    output: Path,
    *,
    top: int = TOP_DEFAULT,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Build the report of parsed (file, module, buffer assignment) triples and write the page
    (also what `inspect --html FILE` would call)."""
    from hlo_layout.report.html import build_report, render_html

    data = build_report(entries, top=top, progress=progress)
    written = write_output_file(output, render_html(data))
    for note in data["notes"]:
        stderr_console().print(f"note: {note}", markup=False, highlight=False)
    if str(output) != "-":
        stderr_console().print(f"wrote {output} ({written:,} bytes)")


@app.command()
def report(
    dumps: DumpArgs,
    output: OutputOpt,
    top: TopOpt = TOP_DEFAULT,
    buffers: BuffersOpt = None,
) -> None:
    """Write one self-contained HTML report (no network needed to view it): memory over program
    order per memory space with the peak marked, the buffers live at the peak with a card each,
    padding by tiling pattern with tile-grid pictures, fusions by kind, and the compiler's buffer
    assignment beside ours when it sits beside the dump. [bold]--top[/bold] bounds each list.
    """
    with guard("report"):
        if buffers is not None and len(dumps) != 1:
            stderr_console().print("error: --buffers goes with exactly one dump")
            raise typer.Exit(EXIT_USAGE)
        if output.is_dir():
            stderr_console().print(f"error: {output} is a directory; give a file name for -o")
            raise typer.Exit(EXIT_USAGE)
        files = [(str(p), file_size(p)) for p in dumps]
        with progress(files, writes_stdout=str(output) == "-") as stages:
            entries, errors = read_dumps(dumps, buffers=buffers, strict=False, progress=stages)
            for error in errors:
                report_error(error)
            if entries:
                stages.start("measuring")
                write_html_report(entries, output, top=top, progress=stages.callback)
        if not entries or errors:
            raise typer.Exit(EXIT_INPUT)
