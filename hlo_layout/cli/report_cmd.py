"""`hlo-layout report DUMP... -o report.html`: one self-contained HTML page per run."""

from __future__ import annotations

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
    write_output_file,
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


def write_html_report(data: dict[str, Any], output: Path) -> None:
    """Write the page of report data (`hlo_layout.report.html`: `build_report` of dumps, or
    `report_of` modules `inspect` already measured) and say where."""
    from hlo_layout.report.html import render_html

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
