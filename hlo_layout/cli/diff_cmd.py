"""`hlo-layout diff OLD NEW`: the peak and why it changed, the figures, then the structure."""

from __future__ import annotations

from typing import Annotated

import typer

from hlo_layout.check.diff import SCHEMA_VERSION, module_diff
from hlo_layout.check.metrics import ModuleMetrics, measure_module
from hlo_layout.check.pairing import pair
from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_INPUT,
    EXIT_USAGE,
    TOP_DEFAULT,
    BackendOpt,
    ByOpt,
    FormatOpt,
    OutputFormat,
    TopOpt,
    emit_json,
    guard,
    say_assumed,
    stderr_console,
    stdout_console,
)
from hlo_layout.memory.analysis import MemoryAnalysis
from hlo_layout.memory.attribution import parse_grouping
from hlo_layout.reader.discover import STDIN, expand_dumps, no_match_message
from hlo_layout.reader.loader import backend_choice, load_dump_file
from hlo_layout.syntax.parse import HloInputError
from hlo_layout.syntax.tree import Module

#: One side's module: the tree, its figures, its pairing key (relative path, index), and its
#: memory analysis (None without an entry computation).
Side = tuple[Module, ModuleMetrics, tuple[str, int], MemoryAnalysis | None]


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
            metrics, memory = measure_module(d)
            out.append((d.module, metrics, (d.key, d.position), memory))
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
    by: ByOpt = "source",
    output_format: FormatOpt = OutputFormat.text,
    top: TopOpt = TOP_DEFAULT,
    backend: BackendOpt = None,
) -> None:
    """Compare two compiles: the peak and why it changed, the figures, then the structure.

    The headline peak per memory space old → new; the change by source line or op_name over the
    buffers held at the peak, paired across the compiles by what survives recompilation; the
    parts that explain the rest, and what is left unattributed. Then bytes per memory space,
    padding, counts by kind, and computations and instructions added, removed or changed
    (paired by structure: a compile that only renumbers shows none). Exit 3 when no module
    could be paired.
    """
    with guard("diff"):
        if old == STDIN and new == STDIN:
            stderr_console().print("error: only one of OLD and NEW can be - (stdin)")
            raise typer.Exit(EXIT_USAGE)
        grouping = parse_grouping(by)
        old_sides, new_sides = _load(old, backend), _load(new, backend)
        pairing = pair(old_sides, new_sides, key=lambda s: s[2], name=lambda s: s[1].module)
        modules = [
            module_diff(a[0], b[0], a[1], b[1], a[3], b[3], grouping=grouping, top=top)
            for a, b in pairing.pairs
        ]
        document = {
            "schema_version": SCHEMA_VERSION,
            "by": grouping.label,
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
        say_assumed(
            (s[1].file, s[3].backend_note)
            for s in (*old_sides, *new_sides)
            if s[3] is not None and s[3].backend_assumed
        )
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
