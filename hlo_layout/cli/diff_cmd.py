"""`hlo-layout diff OLD NEW`: figures, then structure, between two compiles."""

from __future__ import annotations

from typing import Annotated

import typer

from hlo_layout.check.diff import SCHEMA_VERSION, module_diff, pair_modules
from hlo_layout.check.discover import expand
from hlo_layout.check.metrics import ModuleMetrics, module_metrics
from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_INPUT,
    FormatOpt,
    OutputFormat,
    TopOpt,
    emit_json,
    guard,
    stdout_console,
)
from hlo_layout.layout.buffer_assignment import buffer_assignment_beside
from hlo_layout.syntax.parse import HloInputError, parse_file_modules
from hlo_layout.syntax.tree import Module


def _load(argument: str) -> list[tuple[Module, ModuleMetrics]]:
    files = expand([argument])
    if not files:
        raise HloInputError(f"{argument}: no dump files found")
    out: list[tuple[Module, ModuleMetrics]] = []
    for path in files:
        modules = parse_file_modules(path)
        if not modules:
            raise HloInputError(f"{path}: no HLO module found")
        beside = buffer_assignment_beside(path) if len(modules) == 1 else None
        out.extend((m, module_metrics(m, str(path), beside)) for m in modules)
    return out


@app.command()
def diff(
    old: Annotated[str, typer.Argument(help="The old dump (file or directory).")],
    new: Annotated[str, typer.Argument(help="The new dump (file or directory).")],
    output_format: FormatOpt = OutputFormat.text,
    top: TopOpt = 20,
) -> None:
    """Compare two compiles: bytes per memory space, padding, largest buffers, counts by kind,
    then computations and instructions added, removed, renamed or changed."""
    with guard("diff"):
        pairs, only_old, only_new = pair_modules(_load(old), _load(new))
        document = {
            "schema_version": SCHEMA_VERSION,
            "modules": [module_diff(a[0], b[0], a[1], b[1]) for a, b in pairs],
            "only_old": only_old,
            "only_new": only_new,
        }
        if output_format is OutputFormat.json:
            emit_json(document)
        else:
            from hlo_layout.report.diff_view import render_diff

            stdout_console().print(render_diff(document, top))
        if not pairs:
            raise typer.Exit(EXIT_INPUT)
