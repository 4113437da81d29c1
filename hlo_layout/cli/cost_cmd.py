"""`hlo-layout cost DUMP...`: XLA's cost analysis from the text, loop-aware, with a roofline."""

from __future__ import annotations

from typing import Annotated

import typer

from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_INPUT,
    TOP_DEFAULT,
    BackendOpt,
    DumpArgs,
    FormatOpt,
    OutputFormat,
    TopOpt,
    emit_json,
    guard,
    progress,
    read_dumps,
    stdout_console,
)
from hlo_layout.syntax.parse import file_size

ChipOpt = Annotated[
    str | None,
    typer.Option(
        "--chip",
        help="tpu-v4, tpu-v5e, tpu-v5p, tpu-v6e, a100, h100, h200 or b200 (default: the chip "
        "the dump was compiled for, when its name or the files beside it say).",
        show_default=False,
    ),
]
PeakOpt = Annotated[
    float | None,
    typer.Option(
        "--peak-flops",
        help="Peak FLOP/s for every element type (replaces the chip's).",
        metavar="FLOP/S",
        show_default=False,
    ),
]
BandwidthOpt = Annotated[
    float | None,
    typer.Option(
        "--bandwidth",
        help="Memory bandwidth in bytes per second (replaces the chip's).",
        metavar="B/S",
        show_default=False,
    ),
]


@app.command()
def cost(
    paths: DumpArgs,
    chip: ChipOpt = None,
    peak_flops: PeakOpt = None,
    bandwidth: BandwidthOpt = None,
    backend: BackendOpt = None,
    top: TopOpt = TOP_DEFAULT,
    output_format: FormatOpt = OutputFormat.text,
) -> None:
    """Where time goes: XLA's HloCostAnalysis (flops, transcendentals, bytes accessed)
    computed from the text, the totals with while loops counted their trip count times
    and bytes at the layouts' physical size, and the instructions ranked by their
    roofline time on a chip.

    Exit 3 when a dump is unreadable or a PATH matches no dump (the others are still costed).
    """
    from hlo_layout.cost.roofline import chip_named

    if chip is not None:
        try:
            chip_named(chip)
        except KeyError as e:
            raise typer.BadParameter(str(e.args[0]), param_hint="'--chip'") from None
    for flag, value in (("--peak-flops", peak_flops), ("--bandwidth", bandwidth)):
        if value is not None and not value > 0:
            raise typer.BadParameter(f"{value} is not a positive number", param_hint=f"'{flag}'")
    with guard("cost"):
        from hlo_layout import api

        files = [(str(p), file_size(p)) for p in paths]
        with progress(files) as stages:
            loaded = read_dumps(paths, backend=backend, stages=stages)
            result = api.cost_dumps(
                loaded.dumps,
                chip=chip,
                peak_flops=peak_flops,
                bandwidth=bandwidth,
                top=top,
                progress=stages,
                errors=loaded.errors,
                notes=loaded.notes,
            )
        if output_format is OutputFormat.json:
            emit_json(result.to_dict())
        elif result.modules:
            from hlo_layout.report.cost_view import render_cost

            stdout_console().print(render_cost(result.modules))
        if result.errors:
            raise typer.Exit(EXIT_INPUT)


__all__ = ["cost"]
