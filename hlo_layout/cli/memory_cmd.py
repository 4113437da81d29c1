"""`hlo-layout memory DUMP...`: the peak the device must hold, what is live at it, and why."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_INPUT,
    EXIT_USAGE,
    TOP_DEFAULT,
    BackendOpt,
    BuffersOpt,
    ByOpt,
    DumpArgs,
    FormatOpt,
    OutputFormat,
    TopOpt,
    emit_json,
    guard,
    progress,
    read_dumps,
    stderr_console,
    stdout_console,
)
from hlo_layout.layout.memory_space import space_number
from hlo_layout.limits import read_int

if TYPE_CHECKING:
    from hlo_layout.memory import MemoryAnalysis

SpaceOpt = Annotated[
    str | None,
    typer.Option(
        "--space",
        help="Memory space to show: hbm, device, vmem, host or a number N of S(N).",
        show_default=False,
    ),
]
AtOpt = Annotated[
    str | None,
    typer.Option(
        "--at",
        help="A schedule step or an instruction name: list what is live there.",
        show_default=False,
    ),
]


def _space(text: str | None) -> int | None:
    if text is None:
        return None
    number = space_number(text)
    if number is None:
        raise typer.BadParameter(
            f"unknown memory space {text!r}: use hbm, device, vmem, host or a number",
            param_hint="--space",
        )
    return number


@app.command()
def memory(
    dumps: DumpArgs,
    backend: BackendOpt = None,
    buffers: BuffersOpt = None,
    top: TopOpt = TOP_DEFAULT,
    space: SpaceOpt = None,
    at: AtOpt = None,
    by: ByOpt = "source",
    output_format: FormatOpt = OutputFormat.text,
) -> None:
    """The peak memory the device must hold to run the program (the compiler's allocations on
    CPU and GPU, jax's peak_memory_in_bytes on TPU), its parts per memory space, a chart of
    live bytes over the schedule, the buffers live at the peak (largest first, with the line of
    your program that put each there) and the peak grouped by source line or op_name.

    PATH may be a dump, a dump folder (--xla_dump_to) or a glob. The compiler's own figures are
    shown beside ours when its *buffer-assignment.txt is next to the dump.
    [bold]--at STEP|NAME[/bold] lists what is live at that point.
    """
    from hlo_layout.memory import SCHEMA_VERSION, analyze_memory, parse_grouping
    from hlo_layout.syntax.parse import file_size

    space_n = _space(space)
    grouping = parse_grouping(by)
    with guard("memory"):
        files = [(str(p), file_size(p)) for p in dumps]
        with progress(files) as stages:
            loaded = read_dumps(dumps, backend=backend, buffers=buffers, stages=stages)
            analyses = []
            failed = bool(loaded.errors)
            for d in loaded.dumps:
                if d.module.entry is None:
                    stderr_console().print(f"error: {d.file}: the module has no computation")
                    failed = True
                    continue
                stages.start(f"measuring {d.module.name or d.file}")
                analyses.append(analyze_memory(d.module, d.backend, d.assignment, file=d.file))
        if space_n is not None:
            _check_space(space_n, analyses)
        steps: list[int | None] = [_step(ma, at) if at is not None else None for ma in analyses]
        if output_format is OutputFormat.json:
            emit_json(
                {
                    "schema_version": SCHEMA_VERSION,
                    "modules": [
                        ma.to_dict(top=top, op_depth=grouping.depth, space=space_n, at=step)
                        for ma, step in zip(analyses, steps)
                    ],
                }
            )
        else:
            from hlo_layout.report.memory_analysis_view import render_memory

            stdout_console().print(
                render_memory(analyses, top=top, space=space_n, at=steps, grouping=grouping)
            )
        if failed or not analyses:
            raise typer.Exit(EXIT_INPUT)


def _check_space(space: int, analyses: list[MemoryAnalysis]) -> None:
    """`--space N` must name a space some module has (else exit 2, naming the ones there are)."""
    if not analyses or any(s.memory_space == space for ma in analyses for s in ma.spaces):
        return
    there = sorted({(s.memory_space, s.name) for ma in analyses for s in ma.spaces})
    names = ", ".join(f"{n} (S({k}))" if n != f"S({k})" else n for k, n in there)
    stderr_console().print(f"error: --space: no buffer lives in S({space}); there are: {names}")
    raise typer.Exit(EXIT_USAGE)


def _step(ma: MemoryAnalysis, at: str) -> int:
    """`--at STEP|NAME` as a step of this module's schedule (else exit 2)."""
    text = at.strip()
    step = read_int(text, "--at", option=True) if text.isdecimal() else ma.step_of(text)
    if step is None or not 0 <= step <= len(ma.sequence):
        stderr_console().print(
            f"error: --at {at}: no such schedule step or instruction in "
            f"{ma.module or ma.file} (steps 0-{len(ma.sequence) - 1})",
            markup=False,
            highlight=False,
        )
        raise typer.Exit(EXIT_USAGE)
    return step
