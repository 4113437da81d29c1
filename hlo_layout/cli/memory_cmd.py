"""`hlo-layout memory DUMP...`: XLA's peak memory, what is live at it, and why."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_INPUT,
    EXIT_USAGE,
    DumpArgs,
    FormatOpt,
    OutputFormat,
    emit_json,
    guard,
    report_error,
    stderr_console,
    stdout_console,
)
from hlo_layout.errors import HloLayoutError
from hlo_layout.layout.buffer_assignment import buffer_assignment_beside, read_buffer_assignment
from hlo_layout.layout.memory_space import space_number
from hlo_layout.limits import read_int

BackendOpt = Annotated[
    str | None,
    typer.Option(
        "--backend",
        help="cpu, gpu, tpu (v4/v5e), tpu-v5p or tpu-v6e (default: detected from the dump and, "
        "for a TPU generation, the *.target_arguments.txt beside it).",
        show_default=False,
    ),
]
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
TopArg = Annotated[
    int | None,
    typer.Option(
        "--top", "-n", min=1, help="Buffers shown (text: 20; JSON: all).", show_default=False
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
    top: TopArg = None,
    space: SpaceOpt = None,
    at: AtOpt = None,
    output_format: FormatOpt = OutputFormat.text,
) -> None:
    """Peak memory as XLA computes it: static (parameters, constants, outputs) and temps per
    memory space, the step and instruction of the peak, a chart of live bytes over the schedule,
    the buffers live at the peak (largest first, with their source op) and the peak by op_name.

    The compiler's own figures are shown beside ours when its *buffer-assignment.txt is next to
    the dump. [bold]--at STEP|NAME[/bold] lists what is live at that point.
    """
    from hlo_layout.memory import BACKENDS, SCHEMA_VERSION, analyze_memory
    from hlo_layout.syntax.parse import HloInputError, parse_file_modules

    if backend is not None and backend.lower() not in BACKENDS:
        raise typer.BadParameter(
            f"unknown backend {backend!r}: use one of {', '.join(BACKENDS)}", param_hint="--backend"
        )
    space_n = _space(space)
    with guard("memory"):
        analyses = []
        failed = False
        for path in dumps:
            try:
                found = parse_file_modules(path)
                if not found:
                    raise HloInputError(f"{path}: no HLO module, computation or instruction")
                ba_path = buffer_assignment_beside(path) if len(found) == 1 else None
                assignment = read_buffer_assignment(ba_path) if ba_path is not None else None
            except HloLayoutError as e:
                report_error(e)
                failed = True
                continue
            for module in found:
                if module.entry is None:
                    stderr_console().print(f"error: {path}: the module has no computation")
                    failed = True
                    continue
                analyses.append(analyze_memory(module, backend, assignment, file=str(Path(path))))
        steps: list[int | None] = []
        for ma in analyses:
            if at is None:
                steps.append(None)
                continue
            step = (
                read_int(at, "--at", option=True)
                if at.strip().isdigit()
                else ma.step_of(at.strip())
            )
            if step is None or not 0 <= step <= len(ma.sequence):
                stderr_console().print(
                    f"error: --at {at}: no such schedule step or instruction in "
                    f"{ma.module or ma.file} (steps 0-{len(ma.sequence) - 1})"
                )
                raise typer.Exit(EXIT_USAGE)
            steps.append(step)
        if output_format is OutputFormat.json:
            modules = []
            for ma, step in zip(analyses, steps):
                d = ma.to_dict()
                if space_n is not None:
                    d["live_at_peak"] = [r for r in _live_dicts(ma, ma.live_at_peak(space_n))]
                if top is not None:
                    d["live_at_peak"] = d["live_at_peak"][:top]
                    d["by_op_name"] = d["by_op_name"][:top]
                if step is not None:
                    live = _live_dicts(ma, ma.live_at(step, space_n))
                    d["at"] = {
                        "step": step,
                        "instruction": ma.sequence[step] if step < len(ma.sequence) else None,
                        "live_bytes": sum(r["bytes"] for r in live),
                        "live": live[:top] if top is not None else live,
                    }
                modules.append(d)
            emit_json({"schema_version": SCHEMA_VERSION, "modules": modules})
        else:
            from hlo_layout.report.memory_analysis_view import render_memory

            stdout_console().print(render_memory(analyses, top=top or 20, space=space_n, at=steps))
        if failed:
            raise typer.Exit(EXIT_INPUT)


def _live_dicts(ma, rows) -> list[dict]:  # type: ignore[no-untyped-def]
    from hlo_layout.memory.analysis import _buffer_dict

    return [_buffer_dict(b) for b in rows]
