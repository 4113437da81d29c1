"""`hlo-layout sharding DUMP`: which device holds which part of every sharded value."""

from __future__ import annotations

from typing import Annotated

import typer

from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_USAGE,
    TOP_DEFAULT,
    DumpArg,
    FormatOpt,
    OutputFormat,
    TopOpt,
    emit_json,
    guard,
    stderr_console,
    stdout_console,
)
from hlo_layout.report.sharding_model import sharding_json, sharding_report
from hlo_layout.syntax.parse import read_dump_modules

InstructionOpt = Annotated[
    str | None,
    typer.Option(
        "--instruction",
        "-i",
        metavar="NAME",
        help="Show one instruction in full: its decoded sharding, the shard's CuTe layout, the "
        "Axe layout and every device's tile.",
        show_default=False,
    ),
]
PartitionedOpt = Annotated[
    bool | None,
    typer.Option(
        "--partitioned/--global",
        help="Whether the dump's shapes are already per device (after SPMD partitioning); "
        "detected from the `_spmd` entry name when not given.",
        show_default=False,
    ),
]


@app.command()
def sharding(
    dump: DumpArg,
    instruction: InstructionOpt = None,
    partitioned: PartitionedOpt = None,
    output_format: FormatOpt = OutputFormat.text,
    top: TopOpt = TOP_DEFAULT,
) -> None:
    """Show the sharded values of an SPMD program: each value's sharding, the shape and bytes
    every device holds, the distribution as an Axe layout over [bold]device[/bold] and memory
    ([bold]m[/bold]), and the bytes per device of the entry parameters and of all sharded
    values.

    Shapes before SPMD partitioning are global and are split here as XLA's partitioner does;
    in a partitioned dump they are already per device.
    """
    with guard("sharding"):
        reports = [
            sharding_report(m, str(dump), instruction=instruction, partitioned=partitioned)
            for m in read_dump_modules(dump)
        ]
        if instruction is not None:
            reports = [r for r in reports if r.values]
            if not reports:
                stderr_console().print(
                    f"error: no instruction named '{instruction}' with a sharding in {dump}"
                )
                raise typer.Exit(EXIT_USAGE)
        if output_format is OutputFormat.json:
            emit_json(sharding_json(reports))
        else:
            from hlo_layout.report.sharding_view import render_sharding

            stdout_console().print(render_sharding(reports, top))
