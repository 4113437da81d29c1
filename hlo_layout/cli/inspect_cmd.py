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
    ComputationOpt,
    DumpArgs,
    FormatOpt,
    OutputFormat,
    TopOpt,
    emit_json,
    guard,
    report_error,
    stderr_console,
    stdout_console,
)
from hlo_layout.errors import HloLayoutError
from hlo_layout.layout.buffer_assignment import (
    BufferAssignment,
    buffer_assignment_beside,
    read_buffer_assignment,
)
from hlo_layout.layout.module_memory import MemoryReport, memory_report
from hlo_layout.report.model import inspect_json, module_summary
from hlo_layout.report.progress_view import progress_stages
from hlo_layout.syntax.parse import HloInputError, parse_file_modules
from hlo_layout.syntax.tree import Module

BuffersOpt = Annotated[
    Path | None,
    typer.Option(
        "--buffers",
        "-b",
        help="XLA's *buffer-assignment.txt for the dump (found beside it when not given).",
        show_default=False,
    ),
]


StreamOpt = Annotated[
    bool | None,
    typer.Option(
        "--stream/--no-stream",
        help="JSON one computation at a time, in bounded memory (default: for dumps over 64 MiB).",
        show_default=False,
    ),
]


def _streamed(path: Path, buffers: Path | None) -> bool:
    """Write the JSON of one big dump by streaming; False when it needs the whole-file path."""
    from hlo_layout.report.stream_json import NeedsWholeFile, stream_inspect_json
    from hlo_layout.syntax.stream import StreamFallback

    ba_path = buffers if buffers is not None else buffer_assignment_beside(path)
    assignment = read_buffer_assignment(ba_path) if ba_path is not None else None
    try:
        stream_inspect_json(path, sys.stdout, assignment)
    except (StreamFallback, NeedsWholeFile):
        return False
    return True


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


@app.command()
def inspect(
    dumps: DumpArgs,
    output_format: FormatOpt = OutputFormat.text,
    top: TopOpt = 10,
    computation: ComputationOpt = None,
    buffers: BuffersOpt = None,
    stream: StreamOpt = None,
) -> None:
    """Summarize HLO dumps and where their memory goes: entry parameters and outputs with
    logical / physical / padding bytes, the largest buffers, padding by tiling pattern, bytes per
    memory space, and the compiler's allocations when its buffer assignment is beside the dump.

    With [bold]--format json[/bold], print every instruction with its byte figures as JSON on
    stdout; see the README for the keys.
    """
    with guard("inspect"):
        if buffers is not None and len(dumps) != 1:
            stderr_console().print("error: --buffers goes with exactly one dump")
            raise typer.Exit(EXIT_USAGE)
        if output_format is OutputFormat.json and len(dumps) == 1 and computation is None:
            from hlo_layout.report.stream_json import STREAM_THRESHOLD

            big = _size(dumps[0]) > STREAM_THRESHOLD
            if (stream if stream is not None else big) and _streamed(dumps[0], buffers):
                return
        modules: list[tuple[str, Module]] = []
        assignments: dict[int, BufferAssignment] = {}
        reports: dict[int, MemoryReport] = {}
        failed = False
        with progress_stages(stderr_console(), sum(_size(p) for p in dumps)) as stages:
            for path in dumps:
                stages.start(f"reading {path.name}")
                try:
                    found = parse_file_modules(path)
                    if not found:
                        raise HloInputError(f"{path}: no HLO module, computation or instruction")
                except HloLayoutError as e:
                    report_error(e)
                    failed = True
                    continue
                ba_path = buffers if buffers is not None else None
                if ba_path is None and len(found) == 1:
                    ba_path = buffer_assignment_beside(path)
                assignment = None
                if ba_path is not None:
                    try:
                        assignment = read_buffer_assignment(ba_path)
                    except HloLayoutError as e:
                        report_error(e)
                        failed = True
                for module in found:
                    if computation is not None and module.computation(computation) is None:
                        continue
                    n = len(modules)
                    modules.append((str(path), module))
                    if assignment is not None:
                        assignments[n] = assignment
                    stages.start(f"measuring {module.name or path.name}")
                    reports[n] = memory_report(
                        module,
                        computation=computation,
                        assignment=assignments.get(n),
                        top=top,
                        progress=stages.callback,
                    )
        if computation is not None and not modules and not failed:
            stderr_console().print(f"error: no computation named '{computation}' in the dumps")
            raise typer.Exit(EXIT_USAGE)
        if output_format is OutputFormat.json:
            emit_json(
                inspect_json(
                    modules, computation=computation, assignments=assignments, reports=reports
                )
            )
        else:
            from hlo_layout.report.inspect_view import render_inspect

            summaries = [(file, module_summary(m)) for file, m in modules]
            ordered = [reports[n] for n in range(len(modules))]
            stdout_console().print(render_inspect(summaries, top, ordered))
        if failed:
            raise SystemExit(EXIT_INPUT)
