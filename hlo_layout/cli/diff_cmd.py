"""`hlo-layout diff OLD NEW`: figures, then structure, between two compiles."""

from __future__ import annotations

from typing import Annotated

import typer

from hlo_layout.check.diff import SCHEMA_VERSION, module_diff
from hlo_layout.check.metrics import ModuleMetrics, module_metrics
from hlo_layout.check.pairing import pair
from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_INPUT,
    EXIT_USAGE,
    TOP_DEFAULT,
    BackendOpt,
    FormatOpt,
    OutputFormat,
    TopOpt,
    emit_json,
    guard,
    stderr_console,
    stdout_console,
)
from hlo_layout.reader.discover import STDIN, expand_dumps, no_match_message
from hlo_layout.reader.load import backend_choice, load_dump_file
from hlo_layout.syntax.parse import HloInputError
from hlo_layout.syntax.tree import Module

#: One side's module: the tree, its figures, and its pairing key (relative path, index).
Side = tuple[Module, ModuleMetrics, tuple[str, int]]


def _load(argument: str, backend: str | None) -> list[Side]:
    """The modules of one side, through the reader (one file at a time: a side that does not
    read is an input error, exit 3)."""
    dumps, unmatched = expand_dumps([argument])
    if unmatched:
        raise HloInputError(no_match_message(argument))
    choice = backend_choice(backend)
    out: list[Side] = []
    for found in dumps:
        for d in load_dump_file(found, backend=choice):
            out.append((d.module, module_metrics(d), (d.key, d.position)))
    return out


def _label(side: Side) -> dict[str, str]:
    return {"module": side[1].module, "file": side[1].file}


@app.command()
def diff(
    old: Annotated[
        str,
        typer.Argument(
            help="The old dump: a file, glob or dump folder; - reads it from stdin.",
            metavar="OLD",
            show_default=False,
        ),
    ],
    new: Annotated[
        str,
        typer.Argument(
            help="The new dump, the same way. Modules pair by path relative to the folder, "
            "then by module name when unambiguous.",
            metavar="NEW",
            show_default=False,
        ),
    ],
    output_format: FormatOpt = OutputFormat.text,
    top: TopOpt = TOP_DEFAULT,
    backend: BackendOpt = None,
) -> None:
    """Compare two compiles: changed figures first, then the structure.

    Bytes per memory space, padding, largest buffers, counts by kind, then computations and
    instructions added, removed, renamed or changed. Exit 3 when no module could be paired.
    """
    with guard("diff"):
        if old == STDIN and new == STDIN:
            stderr_console().print("error: only one of OLD and NEW can be - (stdin)")
            raise typer.Exit(EXIT_USAGE)
        pairing = pair(
            _load(old, backend), _load(new, backend), key=lambda s: s[2], name=lambda s: s[1].module
        )
        modules = [module_diff(a[0], b[0], a[1], b[1]) for a, b in pairing.pairs]
        document = {
            "schema_version": SCHEMA_VERSION,
            "modules": modules,
            "changed": any(m["changed"] for m in modules),
            "only_old": [s[1].module for s in pairing.only_old],
            "only_new": [s[1].module for s in pairing.only_new],
            "unpaired_old": [_label(s) for s in pairing.only_old],
            "unpaired_new": [_label(s) for s in pairing.only_new],
            "ambiguous": list(pairing.ambiguous),
            "warnings": list(pairing.warnings),
        }
        err = stderr_console()
        for warning in pairing.warnings:
            err.print(f"warning: {warning}", markup=False, highlight=False)
        if output_format is OutputFormat.json:
            emit_json(document)
        else:
            from hlo_layout.report.diff_view import render_diff

            stdout_console().print(render_diff(document, top))
        if not pairing.pairs:
            err.print("error: no module of OLD could be paired with one of NEW", markup=False)
            raise typer.Exit(EXIT_INPUT)
