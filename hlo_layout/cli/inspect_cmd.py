"""`hlo-layout inspect DUMP...`: what a dump holds and where its memory goes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_INPUT,
    EXIT_USAGE,
    TOP_DEFAULT,
    BackendOpt,
    BuffersOpt,
    ComputationOpt,
    DumpArgs,
    FormatOpt,
    OutputFormat,
    TopOpt,
    guard,
    progress,
    read_dumps,
    report_error,
    say_assumed,
    stderr_console,
    stdout_console,
)
from hlo_layout.syntax.parse import file_size

StreamOpt = Annotated[
    bool | None,
    typer.Option(
        "--stream/--no-stream",
        help="JSON one computation at a time, in bounded memory (default: over 8 MiB of text).",
        show_default=False,
    ),
]
HtmlOpt = Annotated[
    Path | None,
    typer.Option(
        "--html",
        help="Also write the HTML report of `hlo-layout report` to this file.",
        metavar="FILE",
        show_default=False,
    ),
]


@app.command()
def inspect(
    dumps: DumpArgs,
    output_format: FormatOpt = OutputFormat.text,
    top: TopOpt = TOP_DEFAULT,
    computation: ComputationOpt = None,
    backend: BackendOpt = None,
    buffers: BuffersOpt = None,
    stream: StreamOpt = None,
    html: HtmlOpt = None,
) -> None:
    """Summarize HLO dumps and where their memory goes: entry parameters and outputs with
    logical / physical / padding bytes, the largest buffers, padding by tiling pattern, bytes per
    memory space, and the compiler's allocations when its buffer assignment is beside the dump.

    With [bold]--format json[/bold], print every instruction with its byte figures as JSON on
    stdout; see the README for the keys. [bold]--html FILE[/bold] also writes the HTML report
    that `hlo-layout report` writes.
    """
    with guard("inspect"):
        from hlo_layout import api

        files = [(str(p), file_size(p)) for p in dumps]
        streams_json = output_format is OutputFormat.json and computation is None and html is None
        with progress(files, writes_stdout=streams_json) as stages:
            if streams_json and len(dumps) == 1 and Path(dumps[0]).is_file():
                # One dump file: streamed when big (same bytes, bounded memory).
                result = api.write_inspect_json(
                    dumps[0],
                    sys.stdout,
                    computation=computation,
                    buffers=buffers,
                    backend=backend,
                    stream=stream,
                    progress=stages,
                    top=top,
                )
                for error in result.errors:
                    report_error(error)
                say_assumed(result.assumed, list(result.notes))
            else:
                loaded = read_dumps(dumps, backend=backend, buffers=buffers, stages=stages)
                result = api.inspect_dumps(
                    loaded.dumps,
                    computation=computation,
                    top=top,
                    progress=stages,
                    errors=loaded.errors,
                )
                if streams_json:
                    result.write_json(sys.stdout)
        if computation is not None and not result.modules and not result.errors:
            stderr_console().print(f"error: no computation named '{computation}' in the dumps")
            raise typer.Exit(EXIT_USAGE)
        if html is not None and result.modules:
            from hlo_layout.cli.report_cmd import write_html_report
            from hlo_layout.report.html import report_of

            measured = [(m.file, m.module, m.memory) for m in result.modules]
            write_html_report(report_of(measured, top=top), html)
        if output_format is OutputFormat.json:
            if not streams_json:
                result.write_json(sys.stdout)
        else:
            from hlo_layout.report.inspect_view import render_inspect

            summaries = [(m.file, m.summary) for m in result.modules]
            reports = [m.memory for m in result.modules]
            costs = [m.cost if computation is None else None for m in result.modules]
            stdout_console().print(render_inspect(summaries, top, reports, costs))
        if result.errors:
            raise SystemExit(EXIT_INPUT)
