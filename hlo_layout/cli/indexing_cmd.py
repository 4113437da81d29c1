"""`hlo-layout indexing DUMP --fusion NAME`: XLA indexing maps of a fusion, instruction or
computation, in XLA's text format."""

from __future__ import annotations

import enum
from typing import Annotated

import typer

from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_USAGE,
    DumpArg,
    FormatOpt,
    OutputFormat,
    emit_json,
    guard,
    stderr_console,
    stdout_console,
)
from hlo_layout.report.indexing_model import IndexingTargetError, indexing_json, indexing_report
from hlo_layout.syntax.parse import read_dump_modules


class DirectionChoice(str, enum.Enum):
    out2in = "out2in"
    in2out = "in2out"


FusionOpt = Annotated[
    str | None,
    typer.Option("--fusion", help="A fusion instruction: maps to each of its operands "
                 "(ENTRY: the entry computation's root).", metavar="NAME", show_default=False),
]  # fmt: skip
InstructionOpt = Annotated[
    str | None,
    typer.Option("--instruction", "-i", help="Any instruction: its own indexing (ENTRY: the "
                 "entry computation's root).", metavar="NAME", show_default=False),
]  # fmt: skip
ComputationTargetOpt = Annotated[
    str | None,
    typer.Option("--computation", "-c",
                 help="A computation: maps from its result to its parameters, composed "
                 "through everything it runs (ENTRY: the entry computation).", metavar="NAME",
                 show_default=False),
]  # fmt: skip
DirectionOpt = Annotated[
    DirectionChoice,
    typer.Option("--direction", "-d", metavar="out2in|in2out",
                 help="out2in: output index → operand index (XLA's default view); in2out: "
                 "operand index → output index."),
]  # fmt: skip
PhysicalOpt = Annotated[
    bool,
    typer.Option("--physical", help="Continue each map to the element offset in memory "
                 "(minor_to_major and tiles of the buffer read, or written for in2out)."),
]  # fmt: skip

LegacyOpt = Annotated[
    bool,
    typer.Option("--legacy-format", help="Print maps as XLA did before 2026-06 (`floordiv` "
                 "for `/`), to compare with older logs. JSON keeps the current form."),
]  # fmt: skip


@app.command()
def indexing(
    dump: DumpArg,
    fusion: FusionOpt = None,
    instruction: InstructionOpt = None,
    computation: ComputationTargetOpt = None,
    direction: DirectionOpt = DirectionChoice.out2in,
    physical: PhysicalOpt = False,
    legacy_format: LegacyOpt = False,
    output_format: FormatOpt = OutputFormat.text,
) -> None:
    """Indexing maps in XLA's format: which operand elements each output element reads.

    Name one target. Without a name, or with a wrong one, the command lists candidates (closest
    first) and exits with 2. [bold]--format json[/bold] prints the maps as text and structured
    (expressions, inclusive ranges, constraints); see the README for the keys.
    """
    with guard("indexing"):
        modules = [(str(dump), m) for m in read_dump_modules(dump)]
        try:
            report = indexing_report(
                modules,
                fusion=fusion,
                instruction=instruction,
                computation=computation,
                direction=direction.value,
                physical=physical,
            )
        except IndexingTargetError as e:
            console = stderr_console()
            console.print(f"error: {e.message}", highlight=False, markup=False)
            if e.candidates:
                console.print("candidates (closest first):", highlight=False, markup=False)
                for name in e.candidates:
                    console.print(f"  {name}", highlight=False, markup=False)
                if e.total > len(e.candidates):
                    console.print(f"  … {e.total - len(e.candidates)} more", highlight=False)
            raise typer.Exit(EXIT_USAGE) from None
        if output_format is OutputFormat.json:
            emit_json(indexing_json(report))
        else:
            from hlo_layout.report.indexing_view import render_indexing

            stdout_console().print(render_indexing(report, legacy=legacy_format))
